"""Assigning responsibilities in bulk from the grid: a row, a column or a selection of cells in
one post (a redirect without JavaScript, the grid swapped in place with htmx), one history entry
per changed cell, cells that already held the assignment untouched, all or nothing, and only for
those who may edit one cell."""

import re
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.urls import reverse

from evaluations.models import ProjectEvent
from poc import services
from poc.models import Responsibility, ResponsibilityArea
from tests.factories import CandidateFactory

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
AREAS = len(ResponsibilityArea.values)  # 11 rows


@pytest.fixture
def grid(suite: dict[str, Any]) -> dict[str, Any]:
    """Alpha with two candidates in play: volcano and slurm."""
    slurm = CandidateFactory(project=suite["alpha"], solution_key="slurm")
    return {
        **suite,
        "slurm": slurm,
        "grid_url": reverse("poc:responsibilities", args=["alpha"]),
        "assign_url": reverse("poc:responsibilities_assign", args=["alpha"]),
    }


def _assignment(**extra: Any) -> dict[str, Any]:
    return {"party": "vendor", "person": "Jane Doe", "escalation": "vendor TAM", **extra}


def _state() -> tuple:
    return (
        sorted(
            Responsibility.objects.values_list(
                "candidate__slug", "area", "party", "person", "escalation", "delivery", "note"
            )
        ),
        ProjectEvent.objects.count(),
    )


def _set_events() -> list[ProjectEvent]:
    return list(ProjectEvent.objects.filter(verb="responsibility.set").order_by("seq"))


def test_a_row_is_assigned_in_one_post_without_javascript(grid, login) -> None:
    client = login(grid["bob"])
    answer = client.post(grid["assign_url"], _assignment(row="support_sla", delivery="service"))
    assert answer.status_code == 302 and answer["Location"] == grid["grid_url"]
    rows = Responsibility.objects.filter(area="support_sla").order_by("candidate__slug")
    assert [(r.candidate.slug, r.party, r.person, r.escalation, r.delivery) for r in rows] == [
        ("slurm", "vendor", "Jane Doe", "vendor TAM", "service"),
        ("volcano", "vendor", "Jane Doe", "vendor TAM", "service"),
    ]
    events = _set_events()
    assert [e.subject for e in events] == ["volcano · Support and SLA", "slurm · Support and SLA"]
    assert all(e.actor == grid["bob"] and e.before is None for e in events)
    assert events[0].after["person"] == "Jane Doe"
    page = client.get(grid["grid_url"]).content.decode()
    assert "2 cells assigned to Vendor · Jane Doe." in page


def test_a_column_is_assigned_with_htmx_and_the_grid_comes_back(grid, login) -> None:
    client = login(grid["bob"])
    answer = client.post(grid["assign_url"], _assignment(column="volcano"), headers=HTMX)
    html = answer.content.decode()
    assert answer.status_code == 200 and "<html" not in html
    assert 'id="responsibility-grid"' in html
    status = re.search(r'<div id="bulk-status" hx-swap-oob="innerHTML">(.*?)</div>', html, re.S)
    assert status and f"{AREAS} cells assigned to Vendor · Jane Doe." in status.group(1)
    assert html.count('class="gap"') == AREAS  # slurm's column is still empty
    assert "checked" not in html  # a fresh selection after a success
    assert Responsibility.objects.filter(candidate=grid["volcano"]).count() == AREAS
    assert not Responsibility.objects.filter(candidate=grid["slurm"]).exists()
    assert len(_set_events()) == AREAS
    # The message went with the grid, not into the session for the next page.
    assert "cells assigned" not in client.get(grid["grid_url"]).content.decode()


def test_a_selection_leaves_cells_that_already_hold_it_untouched(grid, login) -> None:
    volcano, slurm = grid["volcano"], grid["slurm"]
    same = services.responsibility_set(
        candidate=volcano, area="deployment", actor=None, **_assignment()
    )
    other = services.responsibility_set(
        candidate=slurm, area="capacity", party="ops_team", person="Omar", note="keep me",
        actor=None,
    )  # fmt: skip
    events_before = ProjectEvent.objects.count()
    cells = ["volcano:deployment", "slurm:capacity", "slurm:identity"]
    answer = login(grid["bob"]).post(grid["assign_url"], _assignment(cell=cells), headers=HTMX)
    text = answer.content.decode()
    assert answer.status_code == 200
    assert "2 cells assigned to Vendor · Jane Doe." in text
    assert "1 cell already held it and was left as it was." in text
    assert ProjectEvent.objects.count() == events_before + 2
    changed = _set_events()[-2:]
    assert [e.subject for e in changed] == [
        "slurm · Capacity expansion",
        "slurm · Identity integration",
    ]
    assert changed[0].before["party"] == "ops_team" and changed[0].after["party"] == "vendor"
    unchanged = Responsibility.objects.get(pk=same.pk)
    assert unchanged.updated_at == same.updated_at
    moved = Responsibility.objects.get(pk=other.pk)
    assert (moved.party, moved.person, moved.note) == ("vendor", "Jane Doe", "keep me")
    assert Responsibility.objects.count() == 3


def test_nothing_changes_when_every_cell_already_holds_it(grid, login) -> None:
    services.responsibility_set(
        candidate=grid["slurm"], area="training", actor=None, **_assignment()
    )
    before = _state()
    answer = login(grid["bob"]).post(
        grid["assign_url"], _assignment(cell=["slurm:training"]), headers=HTMX
    )
    assert answer.status_code == 200
    assert "Nothing changed: every chosen cell already held Vendor · Jane Doe." in (
        answer.content.decode()
    )
    assert _state() == before


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (_assignment(row="deployment", party="nobody"), "nobody is not one of the available"),
        (_assignment(row="deployment", person="  "), "This field is required."),
        (_assignment(row="deployment", person="x" * 201), "at most 200 characters"),
        (_assignment(row="deployment", delivery="magic"), "magic is not one of the available"),
        (
            _assignment(cell=["volcano:deployment", "volcano:catering"]),
            "“volcano:catering” is not a cell of this grid",
        ),
        (_assignment(column=["volcano", "kueue"]), "“kueue” is not a candidate of this grid"),
        (_assignment(row=["deployment", "catering"]), "“catering” is not an area"),
        (_assignment(), "Choose at least one cell, a whole row or a whole column to assign."),
    ],
    ids=["party", "no-person", "long-person", "delivery", "cell", "column", "row", "nothing"],
)
def test_one_bad_value_refuses_the_whole_change(grid, login, data, reason) -> None:
    """Refused with 422 naming what is wrong, the ticks kept; nothing written, with or without
    htmx."""
    client = login(grid["bob"])
    before = _state()
    for headers in ({}, HTMX):
        answer = client.post(grid["assign_url"], data, headers=headers)
        html = answer.content.decode()
        assert answer.status_code == 422
        assert reason in html
        assert ("<html" in html) is (headers == {})
        if "row" in data and "catering" not in data["row"]:
            assert re.search(r'name="row" value="deployment"[^>]*checked', html)
            assert re.search(r'value="slurm:deployment"[^>]*checked', html)
    assert _state() == before


def test_every_reason_is_given_at_once(grid, login) -> None:
    answer = login(grid["bob"]).post(grid["assign_url"], {"party": "vendor"}, headers=HTMX)
    html = answer.content.decode()
    assert answer.status_code == 422
    assert "Choose at least one cell, a whole row or a whole column to assign." in html
    assert "This field is required." in html  # the named person
    assert Responsibility.objects.count() == 0


@pytest.mark.parametrize(
    ("refusal", "reason"),
    [
        (ValidationError({"person": "refused for the test"}), "refused for the test"),
        # Someone else gave a cell that had no assignment one at the same moment.
        (IntegrityError("responsibility_unique"), "Someone else assigned one of these cells"),
    ],
    ids=["refused", "concurrent"],
)
def test_a_refusal_part_way_through_rolls_every_cell_back(
    grid, login, monkeypatch, refusal, reason
) -> None:
    """The cells are written one by one by the single-cell service: when a later one is refused,
    the earlier ones and their history entries go too."""
    from poc.services import responsibilities

    real, calls = responsibilities.responsibility_set, []

    def third_refused(**kwargs: Any) -> Responsibility:
        calls.append(kwargs["area"])
        if len(calls) == 3:
            raise refusal
        return real(**kwargs)

    monkeypatch.setattr(responsibilities, "responsibility_set", third_refused)
    before = _state()
    answer = login(grid["bob"]).post(grid["assign_url"], _assignment(column="volcano"))
    assert answer.status_code == 422 and reason in answer.content.decode()
    assert len(calls) == 3
    assert _state() == before


def test_a_frozen_project_refuses_the_whole_change(grid, login) -> None:
    from reports import services as sheet_services

    alpha = grid["alpha"]
    sheet_services.review_freeze_set(project=alpha, frozen=True, actor=grid["alice"])
    sheet_services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=grid["bob"]
    )
    before = _state()
    answer = login(grid["bob"]).post(grid["assign_url"], _assignment(row="deployment"))
    assert answer.status_code == 422
    assert "The project is frozen for the sign-off of revision r1" in answer.content.decode()
    assert _state() == before


def test_observers_are_refused_and_outsiders_told_nothing(grid, login) -> None:
    before = _state()
    observer = login(grid["dave"])
    assert observer.post(grid["assign_url"], _assignment(row="deployment")).status_code == 403
    refused = observer.post(grid["assign_url"], _assignment(row="deployment"), headers=HTMX)
    assert refused.status_code == 403
    page = observer.get(grid["grid_url"]).content.decode()
    assert 'type="checkbox"' not in page and "bulk-assign" not in page
    assert observer.get(grid["assign_url"]).status_code == 200  # the grid, read-only
    outsider = login(grid["charlie"])
    assert outsider.post(grid["assign_url"], _assignment(row="deployment")).status_code == 404
    assert outsider.get(grid["assign_url"]).status_code == 404
    assert _state() == before


def test_every_checkbox_is_named_by_product_and_area(grid, login) -> None:
    html = login(grid["bob"]).get(grid["grid_url"]).content.decode()
    boxes = re.findall(r'<input type="checkbox"[^>]*>', html)
    assert len(boxes) == 2 + AREAS + 2 * AREAS  # columns, rows, cells
    assert all('aria-label="' in box for box in boxes)
    labels = set(re.findall(r'aria-label="([^"]*)"', "".join(boxes)))
    assert {
        "Select every area of Volcano",
        "Select every area of Slurm",
        "Select every candidate for Support and SLA",
        "Select Volcano · Support and SLA",
        "Select Slurm · Identity integration",
    } <= labels
    assert 'src="/static/js/responsibilities.js"' in html
