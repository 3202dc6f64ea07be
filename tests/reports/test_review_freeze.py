"""Freeze for sign-off: while a revision is open, edits to what it froze are refused naming it;
results are still recorded after the freeze; sealing, a rejection or a withdrawal ends it."""

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evaluations import services as evaluation_services
from evaluations.models import AcceptanceAction, Candidate, Project
from evaluations.services import ScopeFrozen
from poc import services as poc_services
from poc.models import (
    Responsibility,
    ResultCell,
)
from reports import services
from reports.models import Sheet, SheetStatus
from reports.procurement.models import Confirmation, TermEntry
from reports.procurement.services import TermChange, confirmation_set, terms_record
from tests.reports.helpers import approve_all

pytestmark = pytest.mark.django_db


def _ready(sheet: Sheet) -> Sheet:
    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.READY)
    sheet.refresh_from_db()
    return sheet


def _frozen(evaluation: dict[str, Any]) -> Sheet:
    alpha = evaluation["alpha"]
    services.review_freeze_set(project=alpha, frozen=True, actor=evaluation["alice"])
    return _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=alpha, language="en", actor=evaluation["bob"]
        )
    )


def _scope_edits(evaluation: dict[str, Any]) -> dict[str, Any]:
    volcano, action = evaluation["volcano"], evaluation["actions"][0]
    return {
        "framing": lambda: evaluation_services.project_update(
            project=Project.objects.get(pk=evaluation["alpha"].pk),
            actor=evaluation["alice"],
            description="widened",
        ),
        "shortlist": lambda: evaluation_services.candidate_update(
            candidate=volcano,
            actor=evaluation["alice"],
            tier="alternative",
            decided_by_step="workload",
            reason="moved",
        ),
        "action": lambda: evaluation_services.action_update(
            action=action, actor=evaluation["alice"], question="reworded?"
        ),
        "new action": lambda: evaluation_services.action_create(
            requirement=action.requirement,
            key="late-addition",
            question="late?",
            pass_criterion="it works",
            scenario="real_task",
            actor=evaluation["alice"],
        ),
        "order": lambda: evaluation_services.reorder(item=action, direction="down"),
        "responsibility": lambda: poc_services.responsibility_set(
            candidate=volcano, area="upgrade_rollback", party="vendor", person="Li Wei", actor=None
        ),
        "terms": lambda: terms_record(
            candidate=volcano, changes=[TermChange("exit_notes", "none")], actor=None
        ),
        "to confirm": lambda: confirmation_set(
            candidate=volcano, subject="term:list_price", actor=None, owner_team="procurement"
        ),
    }


def test_edits_to_the_frozen_scope_are_refused_naming_the_revision(evaluation) -> None:
    sheet = _frozen(evaluation)
    alpha = Project.objects.get(pk=evaluation["alpha"].pk)
    assert (alpha.frozen_revision, alpha.frozen_at) == (1, sheet.created_at)
    questions = list(AcceptanceAction.objects.order_by("pk").values_list("question", flat=True))
    for name, edit in _scope_edits(evaluation).items():
        with pytest.raises(ScopeFrozen, match="frozen for the sign-off of revision r1") as caught:
            edit()
        assert caught.value.code == "scope_frozen", name
    # Nothing was written.
    assert Project.objects.get(pk=alpha.pk).description == alpha.description
    assert Candidate.objects.get(pk=evaluation["volcano"].pk).tier == "validate_first"
    assert list(AcceptanceAction.objects.order_by("pk").values_list("question", flat=True)) == (
        questions
    )
    assert not Responsibility.objects.filter(area="upgrade_rollback").exists()
    assert not TermEntry.objects.exists() and not Confirmation.objects.exists()
    # Archiving is not in the sheet, and results come after the freeze: both still recorded.
    evaluation_services.project_update(project=alpha, actor=evaluation["alice"], archived=True)
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][0],
        outcome="failed",
        failure_cause="nightly regression",
        change_reason="CI",
        actor=None,
    )
    assert ResultCell.objects.get(action=evaluation["actions"][0]).outcome == "failed"
    assert services.sheet_is_stale(Sheet.objects.get(pk=sheet.pk))


@pytest.mark.parametrize("ending", ["reject", "withdraw", "seal", "lift"])
def test_the_freeze_ends_with_its_revision_or_by_hand(evaluation, ending) -> None:
    sheet = _frozen(evaluation)
    edit = _scope_edits(evaluation)["terms"]
    if ending == "reject":
        services.signoff_record(
            sheet=sheet,
            user=evaluation["procurement"],
            role="procurement",
            decision="reject",
            sheet_sha256=sheet.sha256,
            comment="exit plan missing",
        )
    elif ending == "withdraw":
        with pytest.raises(ValidationError, match="Say why"):
            services.sheet_withdraw(sheet=sheet, actor=evaluation["bob"], reason=" ")
        services.sheet_withdraw(sheet=sheet, actor=evaluation["bob"], reason="wrong candidates")
        with pytest.raises(ValidationError, match="not open for sign-off"):
            services.signoff_record(
                sheet=sheet,
                user=evaluation["bob"],
                role="ops",
                decision="approve",
                sheet_sha256=sheet.sha256,
            )
    elif ending == "seal":
        approve_all(evaluation, sheet)
        with pytest.raises(ScopeFrozen):  # approved, not yet sealed: still frozen
            edit()
        Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.SEALED)
        services.freeze_refresh(project_id=sheet.project_id)
    else:
        services.review_freeze_set(project=sheet.project, frozen=False, actor=evaluation["alice"])
    assert Project.objects.get(pk=sheet.project_id).frozen_revision is None
    edit()  # allowed again
    # A new revision while the project is still frozen takes the freeze up again.
    if ending != "lift":
        services.sheet_generate(
            acknowledgement="known gaps", project=sheet.project, language="en", actor=None
        )
        assert Project.objects.get(pk=sheet.project_id).frozen_revision == 2
        with pytest.raises(ScopeFrozen, match="r2"):
            edit()


def test_a_sealed_revision_cannot_be_withdrawn(evaluation) -> None:
    sheet = _frozen(evaluation)
    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.SEALED)
    with pytest.raises(ValidationError, match="cannot be withdrawn"):
        services.sheet_withdraw(sheet=sheet, actor=evaluation["alice"], reason="late")
    assert Sheet.objects.get(pk=sheet.pk).status == SheetStatus.SEALED


def test_pages_show_the_freeze_and_refuse_with_the_reason(evaluation, login) -> None:
    alice, bob = login(evaluation["alice"]), login(evaluation["bob"])
    sheets = reverse("reports:sheets", kwargs={"slug": "alpha"})
    freeze = reverse("reports:sheet_freeze", kwargs={"slug": "alpha"})
    assert bob.post(freeze, {"frozen": "on"}).status_code == 403  # not a project admin
    assert alice.post(freeze, {"frozen": "on"}).status_code == 302
    assert "the next revision will hold the freeze" in alice.get(sheets).content.decode()
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps",
            project=evaluation["alpha"],
            language="en",
            actor=evaluation["bob"],
        )
    )
    matrix = bob.get(reverse("poc:matrix", kwargs={"slug": "alpha"})).content.decode()
    assert "Frozen for the sign-off of" in matrix and "come after the freeze" in matrix
    # A form shows the refusal on the form; an HTMX request gets it as text; a page as a page.
    framing = bob.post(
        reverse("evaluations:project_framing", kwargs={"slug": "alpha"}),
        {"name": evaluation["alpha"].name, "description": "widened"},
    )
    assert framing.status_code == 422 and "revision r1" in framing.content.decode()
    # Archiving alone is no edit to the frozen scope.
    moved = alice.post(
        reverse("evaluations:project_framing", kwargs={"slug": "alpha"}),
        {
            "name": evaluation["alpha"].name,
            "description": evaluation["alpha"].description,
            "archived": "on",
        },
    )
    assert moved.status_code == 302, moved.content.decode()[-1500:]
    action = evaluation["actions"][0]
    move = reverse("evaluations:action_move", kwargs={"slug": "alpha", "action_id": action.pk})
    refused = bob.post(move, {"direction": "down"}, headers={"HX-Request": "true"})
    assert refused.status_code == 409 and refused["Content-Type"].startswith("text/plain")
    assert "frozen for the sign-off of revision r1" in refused.content.decode()
    page = bob.post(move, {"direction": "down"})
    assert page.status_code == 409 and "This was not done" in page.content.decode()
    # Whoever generated the revision may withdraw it, with a reason.
    withdraw = reverse("reports:sheet_withdraw", kwargs={"slug": "alpha", "revision": 1})
    assert login(evaluation["procurement"]).post(withdraw, {"reason": "x"}).status_code == 403
    assert bob.post(withdraw, {"reason": ""}).status_code == 302
    assert Sheet.objects.get(pk=sheet.pk).status == SheetStatus.READY
    assert bob.post(withdraw, {"reason": "wrong candidate set"}).status_code == 302
    detail = bob.get(reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1}))
    assert "Withdrawn: wrong candidate set" in detail.content.decode()
    assert "Your decision as" not in detail.content.decode()
    assert Project.objects.get(pk=evaluation["alpha"].pk).frozen_revision is None


def test_an_uncaught_refusal_is_json_under_the_api(rf) -> None:
    import json

    from workbench.middleware import ServiceRefusalMiddleware

    middleware = ServiceRefusalMiddleware(lambda request: None)  # type: ignore[arg-type,return-value]
    frozen = middleware.process_exception(rf.post("/api/v1/projects/alpha/x/"), ScopeFrozen(4))
    assert frozen is not None and frozen.status_code == 409
    assert "revision r4" in json.loads(frozen.content)["detail"]
    other = middleware.process_exception(rf.post("/api/v1/x/"), ValidationError("bad value"))
    assert other is not None and other.status_code == 400
    assert json.loads(other.content) == {"detail": "bad value"}
    assert middleware.process_exception(rf.get("/api/v1/x/"), KeyError("x")) is None


def test_cells_recorded_after_the_freeze_are_marked_in_matrix_panel_and_api(
    evaluation, login
) -> None:
    from rest_framework.test import APIClient

    quota, job = evaluation["actions"][0], evaluation["actions"][1]
    volcano = evaluation["volcano"]
    bob = login(evaluation["bob"])
    matrix_url = reverse("poc:matrix", kwargs={"slug": "alpha"})
    _frozen(evaluation)
    poc_services.result_record(
        candidate=volcano,
        action=quota,
        outcome="failed",
        failure_cause="nightly regression",
        change_reason="CI",
        actor=None,
    )
    page = bob.get(matrix_url).content.decode()
    quota_cell = page.split(f'id="cell-{volcano.slug}-{quota.pk}"')[1].split("</td>")[0]
    job_cell = page.split(f'id="cell-{volcano.slug}-{job.pk}"')[1].split("</td>")[0]
    assert "after r1" in quota_cell and "Recorded after the freeze: not in r1" in quota_cell
    assert "after r1" not in job_cell  # its result is the one r1 froze
    assert page.count('class="after-freeze"') == 1
    panel = bob.get(f"{matrix_url}cell/{volcano.slug}/{quota.pk}/").content.decode()
    assert panel.count("after the freeze: not in r1") == 1  # the new result, not the old one
    api = APIClient()
    api.force_authenticate(evaluation["bob"])
    cells = api.get("/api/v1/projects/alpha/matrix/").json()
    assert cells["frozen_revision"] == 1
    marked = {(c["candidate"], c["action"]) for c in cells["cells"] if c["after_freeze"]}
    assert marked == {(volcano.slug, quota.key)}
    # Once the revision is withdrawn the project is no longer frozen: no marks.
    services.sheet_withdraw(
        sheet=Sheet.objects.get(project=evaluation["alpha"], revision=1),
        actor=evaluation["bob"],
        reason="regenerate with the regression",
    )
    assert "after-freeze" not in bob.get(matrix_url).content.decode()
