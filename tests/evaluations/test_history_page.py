"""The history page: members narrow it by kind of change, person and days, a page at a time;
bad filters are named (422), never a 500."""

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluations.models import ProjectEvent
from evaluations.services import event_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(personas: dict[str, Any]) -> dict[str, Any]:
    alpha = personas["alpha"]
    event_record(project=alpha, actor=personas["alice"], verb="candidate.moved", subject="volcano")
    event_record(project=alpha, actor=personas["bob"], verb="result.recorded", subject="quota-hit")
    old = event_record(project=alpha, actor=personas["bob"], verb="result.recorded", subject="aged")
    # Moved back in time for the date filter (the chain check is not this test's business).
    ProjectEvent.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=10))
    return personas


def _page(client: Any, **query: str) -> Any:
    return client.get(reverse("evaluations:project_history", kwargs={"slug": "alpha"}), query)


def test_filters_narrow_the_history(history, login) -> None:
    client = login(history["dave"])  # an observer reads the history too
    text = _page(client).content.decode()
    assert "volcano" in text and "quota-hit" in text and "aged" in text
    text = _page(client, kind="result.recorded").content.decode()
    assert "quota-hit" in text and "aged" in text and "volcano" not in text
    text = _page(client, actor="ALICE").content.decode()
    assert "volcano" in text and "quota-hit" not in text
    since = (timezone.localdate() - timedelta(days=2)).isoformat()
    text = _page(client, kind="result.recorded", since=since).content.decode()
    assert "quota-hit" in text and "aged" not in text


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"since": "yesterday"}, "Enter a valid date"),
        ({"since": "2026-12-02", "until": "2026-11-01"}, "comes after the last one"),
        ({"kind": "no.such.verb"}, "Select a valid choice"),
        ({"actor": "x" * 200}, "at most 150 characters"),
    ],
)
def test_bad_filters_are_named(history, login, query: dict[str, str], message: str) -> None:
    response = _page(login(history["bob"]), **query)
    assert response.status_code == 422
    assert message in response.content.decode()


def test_long_histories_come_a_page_at_a_time(personas, login) -> None:
    for n in range(105):
        event_record(project=personas["alpha"], actor=None, verb="result.recorded", subject=f"r{n}")
    client = login(personas["bob"])
    first = _page(client, kind="result.recorded").content.decode()
    assert "r104" in first and "r4<" not in first and "page 1 of 2" in first
    assert "kind=result.recorded" in first  # the pager keeps the filter
    second = _page(client, kind="result.recorded", page="2").content.decode()
    assert "r4" in second and "r104" not in second
    assert _page(client, page="999").status_code == 200  # past the end: the last page


def test_outsiders_get_404(history, login) -> None:
    assert _page(login(history["charlie"])).status_code == 404
