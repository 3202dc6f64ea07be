"""Search across the projects a person belongs to: candidates, actions, results' words."""

from typing import Any

import pytest
from django.urls import reverse

from poc import services

pytestmark = pytest.mark.django_db


def test_search_finds_words_in_the_users_projects_only(suite: dict[str, Any], login: Any) -> None:
    quota = suite["actions"][0]
    services.result_record(
        candidate=suite["volcano"],
        action=quota,
        outcome="failed",
        failure_cause="The ninth GPU was granted past the quota",
        actor=None,
    )
    bob = login(suite["bob"])
    url = reverse("search")
    page = bob.get(url, {"q": "ninth gpu"}).content.decode()
    assert "past the quota" in page and f"/cell/volcano/{quota.pk}/" in page
    actions = bob.get(url, {"q": "quota-hit"}).content.decode()
    assert "quota-hit" in actions and reverse("evaluations:suite", args=["alpha"]) in actions
    assert "Nothing in your projects matches" in bob.get(url, {"q": "beta-only"}).content.decode()
    candidates = bob.get(url, {"q": "volcano"}).content.decode()
    assert reverse("evaluations:project_detail", args=["alpha"]) in candidates
    # charlie administers beta only: alpha's words are not his to find.
    other = login(suite["charlie"]).get(url, {"q": "ninth gpu"}).content.decode()
    assert "past the quota" not in other and "Nothing in your projects matches" in other
    found = login(suite["charlie"]).get(url, {"q": "beta-only"}).content.decode()
    assert '<code class="small">beta-only</code>' in found


def test_a_query_too_short_is_named(suite: dict[str, Any], login: Any) -> None:
    answer = login(suite["bob"]).get(reverse("search"), {"q": "a"})
    assert answer.status_code == 422 and "at least two characters" in answer.content.decode()
    assert login(suite["bob"]).get(reverse("search")).status_code == 200  # the empty form
