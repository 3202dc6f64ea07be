"""Recording results: the four outcomes and their rules, append-only history, reasons, 404s."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evaluations import services as evaluation_services
from evaluations.models import ProjectEvent
from poc import services
from poc.models import (
    AppendOnlyError,
    Result,
    ResultCell,
)

pytestmark = pytest.mark.django_db


def _cell_url(slug: str, candidate_slug: str, action_id: int) -> str:
    return reverse(
        "poc:cell", kwargs={"slug": slug, "candidate_slug": candidate_slug, "action_id": action_id}
    )


def test_record_adds_rows_and_the_cell_points_at_the_latest(suite) -> None:
    volcano, action = suite["volcano"], suite["actions"][0]
    first = services.result_record(
        candidate=volcano,
        action=action,
        outcome="failed",
        failure_cause="No queue",
        actor=suite["bob"],
    )
    second = services.result_record(
        candidate=volcano,
        action=action,
        outcome="passed",
        change_reason="Queue configured",
        actor=suite["bob"],
    )
    assert Result.objects.filter(candidate=volcano, action=action).count() == 2
    cell = ResultCell.objects.get(candidate=volcano, action=action)
    assert (cell.result_id, cell.outcome, cell.result_count) == (second.pk, "passed", 2)
    assert second.previous_id == first.pk
    first.refresh_from_db()
    assert (first.outcome, first.failure_cause) == ("failed", "No queue")


def test_results_cannot_be_changed_or_deleted(suite) -> None:
    result = services.result_record(
        candidate=suite["volcano"], action=suite["actions"][0], outcome="passed", actor=None
    )
    result.outcome = "failed"
    with pytest.raises(AppendOnlyError):
        result.save()
    with pytest.raises(AppendOnlyError):
        result.delete()
    assert Result.objects.get(pk=result.pk).outcome == "passed"


def test_candidate_and_action_with_results_cannot_be_removed(suite) -> None:
    services.result_record(
        candidate=suite["volcano"], action=suite["actions"][0], outcome="passed", actor=None
    )
    with pytest.raises(ValidationError, match="never deleted"):
        evaluation_services.candidate_remove(candidate=suite["volcano"], actor=suite["alice"])
    with pytest.raises(ValidationError, match="never deleted"):
        evaluation_services.action_delete(action=suite["actions"][0], actor=suite["alice"])
    with pytest.raises(ValidationError, match="never deleted"):
        evaluation_services.requirement_delete(requirement=suite["requirement"], actor=None)
    assert Result.objects.count() == 1
    assert not ProjectEvent.objects.filter(
        verb__in=["candidate.removed", "action.deleted"]
    ).exists()


@pytest.mark.parametrize(
    ("fields", "error_field"),
    [
        ({"outcome": "failed"}, "failure_cause"),
        (
            {
                "outcome": "needs_integration",
                "integration_owner_team": "ops",
                "integration_effort_days": Decimal(3),
            },
            "integration_what",
        ),
        (
            {
                "outcome": "needs_integration",
                "integration_what": "SSO",
                "integration_effort_days": Decimal(3),
            },
            "integration_owner_team",
        ),
        (
            {
                "outcome": "needs_integration",
                "integration_what": "SSO",
                "integration_owner_team": "ops",
            },
            "integration_effort_days",
        ),
        ({"outcome": "great"}, "outcome"),
    ],
)
def test_outcome_rules(suite, fields, error_field) -> None:
    with pytest.raises(ValidationError) as info:
        services.result_record(
            candidate=suite["volcano"], action=suite["actions"][0], actor=None, **fields
        )
    assert error_field in info.value.message_dict
    assert not Result.objects.exists()
    assert not ResultCell.objects.exists()


def test_changing_an_outcome_by_hand_needs_a_reason_kept_in_history(suite, login) -> None:
    volcano, action = suite["volcano"], suite["actions"][1]
    services.result_record(candidate=volcano, action=action, outcome="passed", actor=None)
    client = login(suite["bob"])
    url = _cell_url("alpha", "volcano", action.pk)
    refused = client.post(
        url, {"outcome": "failed", "failure_cause": "OOM"}, headers={"HX-Request": "true"}
    )
    assert refused.status_code == 422
    assert "say why it changes" in refused.content.decode()
    assert Result.objects.count() == 1
    accepted = client.post(
        url,
        {
            "outcome": "failed",
            "failure_cause": "OOM",
            "change_reason": "Rerun with the real dataset",
        },
        headers={"HX-Request": "true"},
    )
    assert accepted.status_code == 200
    assert accepted["HX-Trigger"] == "cellChanged"
    body = accepted.content.decode()
    assert "Rerun with the real dataset" in body
    assert body.index("Failure cause:") < body.index('o-passed"><span aria-hidden')  # newest first
    event = ProjectEvent.objects.filter(verb="result.recorded").latest("pk")
    assert event.before == {"outcome": "passed"}
    assert event.after == {"outcome": "failed", "reason": "Rerun with the real dataset"}
    assert event.actor == suite["bob"]
    # The same outcome again needs no reason.
    again = client.post(
        url, {"outcome": "failed", "failure_cause": "OOM again"}, headers={"HX-Request": "true"}
    )
    assert again.status_code == 200


def test_form_errors_name_the_four_outcomes(suite, login) -> None:
    response = login(suite["bob"]).post(
        _cell_url("alpha", "volcano", suite["actions"][0].pk),
        {"outcome": "maybe"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 422
    assert "passed, failed, not covered, needs integration" in response.content.decode()
    response = login(suite["bob"]).post(
        _cell_url("alpha", "volcano", suite["actions"][0].pk),
        {"outcome": "failed"},
        headers={"HX-Request": "true"},
    )
    assert "needs its failure cause" in response.content.decode()
    assert not Result.objects.exists()


def test_cells_of_other_projects_are_404(suite, login) -> None:
    client = login(suite["alice"])
    # beta's action under alpha's URL, and beta's candidate under alpha's URL
    assert (
        client.post(
            _cell_url("alpha", "volcano", suite["beta_action"].pk), {"outcome": "passed"}
        ).status_code
        == 404
    )
    assert (
        client.post(
            _cell_url("alpha", "slurm", suite["actions"][0].pk), {"outcome": "passed"}
        ).status_code
        == 404
    )
    assert (
        login(suite["charlie"])
        .post(_cell_url("alpha", "volcano", suite["actions"][0].pk), {"outcome": "passed"})
        .status_code
        == 404
    )
    assert not Result.objects.exists()
    with pytest.raises(ValidationError):
        services.result_record(
            candidate=suite["volcano"], action=suite["beta_action"], outcome="passed", actor=None
        )


def test_observer_cannot_record(suite, login) -> None:
    response = login(suite["dave"]).post(
        _cell_url("alpha", "volcano", suite["actions"][0].pk), {"outcome": "passed"}
    )
    assert response.status_code == 403
    assert not Result.objects.exists()


def test_empty_cell_reads_not_covered(suite, login) -> None:
    panel = login(suite["bob"]).get(
        _cell_url("alpha", "volcano", suite["actions"][0].pk), headers={"HX-Request": "true"}
    )
    assert panel.status_code == 200
    assert "Not covered" in panel.content.decode()
    assert "<html" not in panel.content.decode()


def test_responsibilities_are_recorded_in_history(suite, login) -> None:
    client = login(suite["bob"])
    url = reverse(
        "poc:responsibility_edit",
        kwargs={"slug": "alpha", "candidate_slug": "volcano", "area": "deployment"},
    )
    assert client.post(url, {"party": "vendor", "person": ""}).status_code == 422
    assert (
        client.post(
            url, {"party": "vendor", "person": "Li Lei", "escalation": "vendor TAM"}
        ).status_code
        == 302
    )
    assert client.post(url, {"party": "ops_team", "person": "Han Meimei"}).status_code == 302
    event = ProjectEvent.objects.filter(verb="responsibility.set").latest("pk")
    assert event.before["party"] == "vendor" and event.after["party"] == "ops_team"
    assert client.post(url, {"clear": "1"}).status_code == 302
    assert not suite["volcano"].responsibilities.exists()
    assert ProjectEvent.objects.filter(verb="responsibility.cleared").exists()
    bad_area = reverse(
        "poc:responsibility_edit",
        kwargs={"slug": "alpha", "candidate_slug": "volcano", "area": "catering"},
    )
    assert client.get(bad_area).status_code == 404


def test_integration_gaps_add_up_by_owning_team_across_candidates(suite, login) -> None:
    from tests.factories import CandidateFactory

    alpha, volcano = suite["alpha"], suite["volcano"]
    quota, job, tenant = suite["actions"]
    slurm = CandidateFactory(project=alpha, slug="slurm-b")

    def integrate(candidate, action, team, days, what="LDAP groups") -> None:
        services.result_record(
            candidate=candidate,
            action=action,
            outcome="needs_integration",
            integration_what=what,
            integration_owner_team=team,
            integration_effort_days=Decimal(days),
            actor=None,
        )

    integrate(volcano, quota, "platform", "3.5")
    integrate(volcano, tenant, "ops", "2")
    integrate(slurm, quota, "platform", "4", what="Quota exporter")
    integrate(slurm, job, "platform", "1")
    services.result_record(
        candidate=slurm, action=job, outcome="passed", change_reason="fixed", actor=None
    )
    from poc import selectors

    report = selectors.integration_gaps_for_project(alpha)
    teams = {t.team: (t.days, t.gaps) for t in report.teams}
    assert teams == {"platform": (Decimal("7.5"), 2), "ops": (Decimal("2"), 1)}
    assert report.total_days == Decimal("9.5")  # the passed cell's old gap no longer counts
    platform = next(t for t in report.teams if t.team == "platform")
    assert platform.by_candidate == {volcano.pk: Decimal("3.5"), slurm.pk: Decimal("4")}
    page = login(suite["bob"]).get(reverse("poc:integration_gaps", args=["alpha"]))
    text = page.content.decode()
    assert page.status_code == 200 and "Quota exporter" in text and "9.5" in text
    assert text.count("<tr><td>") == 3  # one row per open gap
    assert (
        login(suite["charlie"]).get(reverse("poc:integration_gaps", args=["alpha"])).status_code
        == 404
    )


def test_the_responsibility_grid_marks_gaps_and_edits_in_place(suite, login) -> None:
    from poc.models import (
        Responsibility,
    )

    volcano = suite["volcano"]
    bob = login(suite["bob"])
    grid_url = reverse("poc:responsibilities", args=["alpha"])
    page = bob.get(grid_url).content.decode()
    assert page.count('class="gap"') == 11  # one candidate in play, nothing assigned yet
    edit = reverse("poc:responsibility_edit", args=["alpha", "volcano", "support_sla"])
    panel = bob.get(edit + "?grid=1", headers={"HX-Request": "true"})
    assert panel.status_code == 200 and "<html" not in panel.content.decode()
    bad = bob.post(edit + "?grid=1", {"party": "nobody"}, headers={"HX-Request": "true"})
    assert bad.status_code == 422 and 'id="responsibility-editor"' in bad.content.decode()
    saved = bob.post(
        edit + "?grid=1",
        {"party": "vendor", "person": "Vendor support desk", "escalation": "", "note": ""},
        headers={"HX-Request": "true"},
    )
    assert saved.status_code == 204 and saved["HX-Refresh"] == "true"  # the grid loads again
    assert Responsibility.objects.get(candidate=volcano, area="support_sla").party == "vendor"
    # The editor shows the kind of delivery held, so saving another change keeps it.
    Responsibility.objects.filter(candidate=volcano, area="support_sla").update(delivery="service")
    panel = bob.get(edit + "?grid=1", headers={"HX-Request": "true"}).content.decode()
    assert '<option value="service" selected>' in panel
    page = bob.get(grid_url).content.decode()
    assert page.count('class="gap"') == 10 and "Vendor support desk" in page
    # Without htmx the form goes back to the grid too; an observer reads without links.
    cleared = bob.post(edit + "?grid=1", {"clear": "1"})
    assert cleared.status_code == 302 and cleared["Location"].startswith(grid_url)
    observer = login(suite["dave"]).get(grid_url).content.decode()
    assert "hx-get" not in observer and observer.count('class="gap"') == 11


def test_cell_history_is_paged_newest_first(suite, login) -> None:
    from poc.selectors import HISTORY_PER_PAGE

    volcano, quota = suite["volcano"], suite["actions"][0]
    outcomes = ["passed", "not_covered"]
    for n in range(HISTORY_PER_PAGE + 5):
        services.result_record(
            candidate=volcano,
            action=quota,
            outcome=outcomes[n % 2],
            change_reason=f"run {n}",
            note=f"note {n}",
            actor=None,
        )
    bob = login(suite["bob"])
    url = reverse("poc:cell", args=["alpha", "volcano", quota.pk])
    first = bob.get(url, headers={"HX-Request": "true"}).content.decode()
    assert first.count("<p>note ") == HISTORY_PER_PAGE
    assert f"note {HISTORY_PER_PAGE + 4}" in first and "note 0<" not in first
    assert f"page 1 of 2 ({HISTORY_PER_PAGE + 5} results)" in first and "?page=2" in first
    older = bob.get(url + "?page=2", headers={"HX-Request": "true"}).content.decode()
    assert older.count("<p>note ") == 5 and "note 0<" in older and "?page=1" in older
    # The latest result still carries the evidence form on an older page.
    latest = Result.objects.filter(candidate=volcano, action=quota).latest("recorded_at", "pk")
    assert f"/results/{latest.pk}/evidence/" in older


def test_the_comparison_side_by_side_marks_where_candidates_differ(suite, login) -> None:
    from tests.factories import CandidateFactory

    alpha, volcano = suite["alpha"], suite["volcano"]
    quota, job, tenant = suite["actions"]
    other = CandidateFactory(project=alpha, slug="runai", solution_key="runai")
    for candidate in (volcano, other):
        services.result_record(candidate=candidate, action=quota, outcome="passed", actor=None)
    services.result_record(
        candidate=volcano,
        action=job,
        outcome="failed",
        failure_cause="stuck at step 40",
        actor=None,
    )
    services.result_record(candidate=other, action=job, outcome="passed", actor=None)
    services.responsibility_set(
        candidate=volcano, area="support_sla", party="vendor", person="Desk", actor=None
    )
    from poc import selectors

    side = selectors.side_by_side(alpha)
    rows = {row.key: row for group in side.requirements for row in group.rows}
    assert rows[quota.key].differs is False  # both passed
    assert rows[job.key].differs is True
    assert [c.detail for c in rows[job.key].cells] == ["stuck at step 40", ""]
    assert rows[tenant.key].differs is False  # neither covered
    support = next(r for r in side.responsibilities if r.key == "support_sla")
    assert support.differs is True
    page = login(suite["bob"]).get(reverse("poc:comparison", args=["alpha"]), {"columns": "1"})
    text = page.content.decode()
    assert page.status_code == 200 and text.count('class="differs"') == 2
    assert "stuck at step 40" in text and "Comparison side by side" in text
