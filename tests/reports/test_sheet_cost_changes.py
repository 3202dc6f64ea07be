"""Editing costs makes stale only the revisions whose figures rest on what changed, and their
list of changes names the input or the line that moved: another team's day rate or a currency
no chosen line is quoted in leaves a revision as it is."""

from datetime import date
from typing import Any

import pytest

from reports import services
from reports.diff import snapshot_changes
from reports.procurement.models import CostLine
from reports.procurement.services import (
    LineData,
    ModelData,
    cost_line_add,
    cost_line_remove,
    cost_model_save,
)
from reports.selectors import changes_since_freeze, sheet_is_stale
from tests.factories import CandidateFactory

pytestmark = pytest.mark.django_db

EURO = {"rate": "1.08", "date": "2026-11-30", "source": "ECB reference rate"}
POUND = {"rate": "1.27", "date": "2026-11-30", "source": "ECB reference rate"}


def _model(evaluation: dict[str, Any], **changed: object) -> None:
    given: dict[str, object] = {
        "currency": "USD", "horizon_years": 3, "gpus": 64, "nodes": 8, "named_users": 40,
        "day_rates": {"platform": 800, "ops": 700}, "exchange_rates": {"EUR": EURO, "GBP": POUND},
    }  # fmt: skip
    data = ModelData(**{**given, **changed})  # type: ignore[arg-type]
    cost_model_save(project=evaluation["alpha"], data=data, actor=None)


@pytest.fixture
def frozen(evaluation: dict[str, Any]) -> dict[str, Any]:
    """A revision of volcano alone (its PoC effort is the platform team's 3.5 days; its support
    is quoted in euros), and runai outside it, quoted in pounds."""
    _model(evaluation)
    volcano = evaluation["volcano"]
    cost_line_add(
        candidate=volcano,
        data=LineData(
            "support", "per_year", "Vendor support", 9000, 10000, 12000, "EUR", basis="estimate"
        ),
        actor=None,
    )
    runai = CandidateFactory(project=evaluation["alpha"], solution_key="runai")
    cost_line_add(
        candidate=runai,
        data=LineData("licence", "per_unit", "Seats", 90, 100, 110, "GBP", unit="per_named_user"),
        actor=None,
    )
    return {**evaluation, "sheet": _revision(evaluation), "runai": runai}


def _revision(evaluation: dict[str, Any]) -> Any:
    """A new revision of volcano alone."""
    return services.sheet_generate(
        acknowledgement="known gaps",
        project=evaluation["alpha"],
        language="en",
        actor=None,
        candidate_slugs=["volcano"],
    )


def _listed(sheet: Any) -> dict[tuple[str, str], tuple[str, str]]:
    return {(c.section, c.subject): (c.before, c.after) for c in changes_since_freeze(sheet).shown}


def test_inputs_no_chosen_figure_uses_leave_the_revision_as_it_is(frozen) -> None:
    sheet = frozen["sheet"]
    inputs = dict(sheet.snapshot["costs"]["inputs"])
    assert inputs["Day rate: Platform"] == "800"
    assert inputs["Exchange rate: EUR"] == "1.08 · 2026-11-30 · ECB reference rate"
    # Named users price only runai's seats; ops has no effort; nobody chosen quotes in pounds.
    assert "Named users" not in inputs and "Day rate: Operations" not in inputs
    assert "Exchange rate: GBP" not in inputs
    _model(
        frozen,
        named_users=400,
        day_rates={"platform": 800, "ops": 950},
        exchange_rates={"EUR": EURO, "GBP": {**POUND, "rate": "1.31"}},
    )
    cost_line_add(
        candidate=frozen["runai"],
        data=LineData("training", "one_off", "Admin course", 5, 5, 5, "USD"),
        actor=None,
    )
    assert not sheet_is_stale(sheet)


def test_a_changed_input_is_named_with_what_it_was_and_is(frozen) -> None:
    sheet = frozen["sheet"]
    _model(
        frozen,
        gpus=80,
        day_rates={"platform": 900, "ops": 700},
        exchange_rates={"EUR": {**EURO, "rate": "1.10"}, "GBP": POUND},
    )
    assert sheet_is_stale(sheet)
    listed = _listed(sheet)
    assert listed[("Cost model", "GPUs")] == ("64", "80")
    assert listed[("Cost model", "Day rate: Platform")] == ("800", "900")
    assert listed[("Cost model", "Exchange rate: EUR")] == (
        "1.08 · 2026-11-30 · ECB reference rate",
        "1.10 · 2026-11-30 · ECB reference rate",
    )
    assert not any(subject.startswith("Day rate: Operations") for _s, subject in listed)


def test_a_line_added_changed_or_removed_is_named(frozen) -> None:
    sheet = frozen["sheet"]
    volcano = frozen["volcano"]
    support = CostLine.objects.get(candidate=volcano, label="Vendor support")
    cost_line_add(
        candidate=volcano,
        data=LineData(
            "support", "per_year", "Vendor support", 9500, 10500, 12000, "EUR", basis="quote",
            reference="Q-31", valid_until=date(2099, 1, 1),
        ),
        actor=None,
        replaces=support,
    )  # fmt: skip
    cost_line_add(
        candidate=volcano,
        data=LineData("exit", "one_off", "Migration", 1000, 1200, 2000, "USD", first_year=3),
        actor=None,
    )
    listed = _listed(sheet)
    before, after = listed[("Cost lines", "Volcano: Vendor support")]
    assert before == "9000 · 10000 · 12000 EUR (flat, each year · years 1–…; our estimate)"
    assert after == (
        "9500 · 10500 · 12000 EUR (flat, each year · years 1–…; vendor quote · Q-31 · 2099-01-01)"
    )
    assert listed[("Cost lines", "Volcano: Migration")] == (
        "—",
        "1000 · 1200 · 2000 USD (once · year 3; to be confirmed)",
    )
    # The totals move with them, and a removed line reads as gone.
    assert ("Costs", "Volcano: total") in listed
    cost_line_remove(line=CostLine.objects.get(label="Migration"), actor=None)
    later = _revision(frozen)
    cost_line_add(
        candidate=volcano,
        data=LineData("exit", "one_off", "Migration", 1000, 1200, 2000, "USD", first_year=3),
        actor=None,
    )
    now = _revision(frozen)
    backwards = {
        (c.section, c.subject): (c.before, c.after)
        for c in snapshot_changes(now.snapshot, later.snapshot).shown
    }
    assert backwards[("Cost lines", "Volcano: Migration")][1] == "—"


def test_a_revision_frozen_before_lines_compares_totals_only(frozen) -> None:
    old = frozen["sheet"].snapshot
    for owner in old["costs"]["candidates"]:
        del owner["lines"]
    del old["costs"]["inputs"]
    _model(frozen, gpus=80)
    now = _revision(frozen)
    sections = {c.section for c in snapshot_changes(old, now.snapshot).shown}
    assert "Cost model" not in sections and "Cost lines" not in sections
