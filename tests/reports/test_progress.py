"""Where an evaluation stands: the method's steps read from the project, and what comes next."""

from typing import Any

import pytest
from django.urls import reverse

from evaluations import services as evaluation_services
from poc import services as poc_services
from reports import selectors, services
from tests.reports.helpers import approve_all, rendered

pytestmark = pytest.mark.django_db


def _done(project: Any) -> dict[str, bool]:
    project.refresh_from_db()
    return {step.key: step.done for step in selectors.evaluation_progress(project).steps}


def test_the_steps_follow_the_project(evaluation: dict[str, Any], login: Any) -> None:
    alpha = evaluation["alpha"]
    progress = selectors.evaluation_progress(alpha)
    done = _done(alpha)
    assert done["shortlist"] is True and done["sign_off"] is False
    # The fixture's suite lacks node failure, so the suite step is open.
    assert done["suite"] is False
    assert progress.next_step is not None
    # Results for every cell close the PoC step; a sealed current revision closes sign-off.
    for action in evaluation["actions"]:
        poc_services.result_record(
            candidate=evaluation["volcano"],
            action=action,
            outcome="passed",
            change_reason="all green",
            actor=None,
        )
    assert _done(alpha)["poc"] is True
    evaluation_services.project_recommendation_set(
        project=alpha,
        actor=evaluation["alice"],
        candidates=["volcano"],
        conditions="",
        reason="It passed.",
    )
    assert _done(alpha)["recommendation"] is True
    sheet = rendered(evaluation)
    approve_all(evaluation, sheet)
    sealed = services.sheet_seal(sheet_id=sheet.pk)
    assert sealed is not None and sealed.status == "sealed"
    assert _done(alpha)["sign_off"] is True
    # The project moves on after the seal: sign-off is open again.
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][0],
        outcome="failed",
        failure_cause="regressed",
        change_reason="nightly",
        actor=None,
    )
    assert _done(alpha)["sign_off"] is False
    page = login(evaluation["bob"]).get(
        reverse("reports:progress", args=["alpha"]), headers={"HX-Request": "true"}
    )
    text = page.content.decode()
    assert page.status_code == 200 and "<html" not in text and "Where the evaluation stands" in text
    assert (
        login(evaluation["charlie"]).get(reverse("reports:progress", args=["alpha"])).status_code
        == 404
    )
    overview = login(evaluation["bob"]).get(reverse("evaluations:project_detail", args=["alpha"]))
    assert reverse("reports:progress", args=["alpha"]) in overview.content.decode()
