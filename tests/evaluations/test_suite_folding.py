"""A large acceptance suite shows its requirements folded, each opened on demand; a small one
shows every action, each requirement's list foldable. Exports always hold every action."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluations import selectors, services

pytestmark = pytest.mark.django_db


def _more(suite, count: int) -> None:
    requirement = services.requirement_create(
        project=suite["alpha"], actor=None, feature="Load", dimension="operations", owner_team="ops"
    )
    for n in range(count):
        services.action_create(
            requirement=requirement,
            actor=None,
            key=f"load-{n}",
            question=f"Does load {n} hold?",
            pass_criterion="ok",
            scenario="real_task",
        )


def test_a_small_suite_shows_every_action_in_foldable_lists(suite, login) -> None:
    page = login(suite["bob"]).get(reverse("evaluations:suite", args=["alpha"])).content.decode()
    assert '<details class="req-actions" open>' in page
    assert "3 acceptance actions" in page and "quota-hit?" in page
    assert 'hx-trigger="toggle once"' not in page


def test_a_large_suite_folds_and_opens_a_requirement_on_demand(suite, login, monkeypatch) -> None:
    monkeypatch.setattr(selectors, "SUITE_UNFOLDED_ACTIONS", 5)
    _more(suite, 4)  # 7 actions in two requirements
    client = login(suite["bob"])
    url = reverse("evaluations:suite", args=["alpha"])
    page = client.get(url).content.decode()
    assert page.count('hx-trigger="toggle once"') == 2
    assert "4 acceptance actions" in page and "3 acceptance actions" in page
    assert "Does load 0 hold?" not in page and "quota-hit?" not in page  # nothing loaded
    assert 'name="direction"' not in page  # the tools come with the opened card
    requirement = suite["alpha"].requirements.get(feature="Load")
    opened = client.get(
        reverse("evaluations:requirement_detail", args=["alpha", requirement.pk]),
        headers={"HX-Request": "true"},
    ).content.decode()
    assert '<details class="req-actions" open>' in opened and 'name="direction"' in opened
    assert all(f"Does load {n} hold?" in opened for n in range(4))
    # Filters count before folding: one scenario's three actions fit unfolded.
    scenario = client.get(url, {"scenario": "real_task"}).content.decode()
    assert "Does load 3 hold?" in scenario and 'hx-trigger="toggle once"' not in scenario
    # The export holds every action, folded or not.
    exported = client.get(reverse("evaluations:suite_export", args=["alpha", "yaml"]))
    text = b"".join(exported.streaming_content) if exported.streaming else exported.content
    assert all(f"load-{n}".encode() in text for n in range(4))


def test_a_folded_suite_reads_the_same_queries_whatever_its_size(suite, login, monkeypatch) -> None:
    monkeypatch.setattr(selectors, "SUITE_UNFOLDED_ACTIONS", 1)
    client = login(suite["bob"])
    url = reverse("evaluations:suite", args=["alpha"])
    client.get(url)
    with CaptureQueriesContext(connection) as small:
        client.get(url)
    _more(suite, 30)
    with CaptureQueriesContext(connection) as large:
        client.get(url)
    assert len(large) == len(small)
