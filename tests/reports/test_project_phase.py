"""The phase moves on its own with the project's state (framing -> shortlisting -> proof of
concept -> sign-off -> decided), judged by the beat; only archiving is a person's choice."""

from typing import Any

import pytest
from django.conf import settings
from django.urls import reverse

from evaluations import services as evaluation_services
from evaluations.models import Phase, Project, ProjectEvent, Solution
from reports import services, tasks
from reports.selectors import Progress, ProgressStep
from tests.factories import make_actions

pytestmark = pytest.mark.django_db

STEPS = ("framing", "shortlist", "suite", "poc", "responsibilities", "recommendation", "sign_off")


def _progress(first_open: str | None, actions: int = 1) -> Progress:
    opened = STEPS.index(first_open) if first_open else len(STEPS)
    return Progress(
        [ProgressStep(k, k, n < opened, "", "/") for n, k in enumerate(STEPS)],
        stage="",
        actions=actions,
    )


def test_the_phase_is_the_first_open_step_of_the_method() -> None:
    assert _progress("suite", actions=0).phase == Phase.SHORTLISTING  # nothing to run yet
    assert [_progress(key).phase for key in STEPS] == [
        Phase.FRAMING,
        Phase.SHORTLISTING,
        Phase.POC,
        Phase.POC,
        Phase.POC,
        Phase.REVIEW,
        Phase.REVIEW,
    ]
    assert _progress(None).phase == Phase.SIGNED  # every step done: decided


def _phase_events(project: Project) -> list[tuple[Any, Any, Any]]:
    return [
        (e.actor_id, e.before, e.after)
        for e in ProjectEvent.objects.filter(project=project, verb="project.phase").order_by("seq")
    ]


def _frame(project: Project, actor: Any) -> None:
    evaluation_services.project_update(
        project=project,
        actor=actor,
        workloads=["training"],
        existing_base="kubernetes",
        layer_needed="queues-quotas",
    )


def test_a_project_moves_on_as_it_is_framed_and_shortlisted(personas: dict[str, Any]) -> None:
    alice = personas["alice"]
    project = evaluation_services.project_create(
        name="Gamma pool", creator=alice, creator_role="platform"
    )
    assert services.project_phase_refresh(project_id=project.pk) is None
    _frame(project, alice)
    assert Project.objects.get(pk=project.pk).phase == Phase.FRAMING  # not until judged
    assert services.project_phase_refresh(project_id=project.pk) == Phase.SHORTLISTING
    evaluation_services.candidate_add(
        project=project, solution=Solution.objects.get(key="kueue"), actor=alice
    )
    # Shortlisted, but no acceptance action yet: no proof of concept to be in.
    assert services.project_phase_refresh(project_id=project.pk) is None
    assert Project.objects.get(pk=project.pk).phase == Phase.SHORTLISTING
    make_actions(project, [("quota-hit", "resource_shortage")])
    assert services.project_phase_refresh(project_id=project.pk) == Phase.POC
    assert services.project_phase_refresh(project_id=project.pk) is None  # nothing new
    assert Project.objects.get(pk=project.pk).phase == Phase.POC
    assert _phase_events(project) == [
        (None, {"phase": "framing"}, {"phase": "shortlisting"}),
        (None, {"phase": "shortlisting"}, {"phase": "poc"}),
    ]


def test_only_projects_whose_history_moved_are_judged(
    personas: dict[str, Any], django_assert_num_queries: Any
) -> None:
    make_actions(personas["alpha"], [("quota-hit", "resource_shortage")])
    services.project_phases_refresh()  # the fixture's projects, judged once
    with django_assert_num_queries(1):
        assert services.project_phases_refresh() == 0
    alpha = Project.objects.get(slug="alpha")
    _frame(alpha, personas["alice"])  # alpha has a candidate: framing answered moves it on
    assert services.project_phases_refresh() == 1
    assert Project.objects.get(slug="alpha").phase == Phase.POC
    assert Project.objects.get(slug="beta").phase == Phase.FRAMING


def test_the_overview_says_where_the_phase_is_going(personas: dict[str, Any], login: Any) -> None:
    make_actions(personas["alpha"], [("quota-hit", "resource_shortage")])
    url = reverse("reports:progress", args=["alpha"])
    page = login(personas["bob"]).get(url, headers={"HX-Request": "true"}).content.decode()
    assert "Phase: Framing" in page and "Moving to" not in page  # alpha is not framed yet
    _frame(personas["alpha"], personas["alice"])
    page = login(personas["bob"]).get(url, headers={"HX-Request": "true"}).content.decode()
    assert "Phase: Framing" in page and "Moving to Proof of concept within a minute" in page
    assert Project.objects.get(slug="alpha").phase == Phase.FRAMING  # a GET writes nothing
    services.project_phases_refresh()
    page = login(personas["bob"]).get(url, headers={"HX-Request": "true"}).content.decode()
    assert "Phase: Proof of concept" in page and "Moving to" not in page


def test_an_archived_project_stays_until_taken_out(personas: dict[str, Any]) -> None:
    alpha, alice = personas["alpha"], personas["alice"]
    make_actions(alpha, [("quota-hit", "resource_shortage")])
    _frame(alpha, alice)
    evaluation_services.project_update(project=alpha, actor=alice, archived=True)
    assert services.project_phases_refresh() == 0
    assert services.project_phase_refresh(project_id=alpha.pk) is None
    assert Project.objects.get(pk=alpha.pk).phase == Phase.ARCHIVED
    evaluation_services.project_update(project=alpha, actor=alice, archived=False)
    assert Project.objects.get(pk=alpha.pk).phase == Phase.FRAMING
    tasks.project_phases_task()  # what the beat runs each minute
    assert Project.objects.get(pk=alpha.pk).phase == Phase.POC
    beat = settings.CELERY_BEAT_SCHEDULE["project-phases"]
    assert beat["task"] == "reports.tasks.project_phases_task" and beat["schedule"] <= 60


def test_the_framing_page_archives_and_offers_no_phase(
    personas: dict[str, Any], login: Any
) -> None:
    url = reverse("evaluations:project_framing", args=["alpha"])
    page = login(personas["alice"]).get(url).content.decode()
    assert 'name="archived"' in page and 'name="phase"' not in page
    assert "moves on its own" in page
    answer = login(personas["alice"]).post(
        url, {"name": "Alpha", "workloads": ["training"], "archived": "on"}
    )
    assert answer.status_code == 302
    assert Project.objects.get(slug="alpha").phase == Phase.ARCHIVED
    # Saving the framing again without the box takes it out of the archive.
    login(personas["alice"]).post(url, {"name": "Alpha", "workloads": ["training"]})
    assert Project.objects.get(slug="alpha").phase == Phase.FRAMING
    # A member who is no project admin is not offered the box, and sending it changes nothing.
    member = login(personas["bob"])
    assert 'name="archived"' not in member.get(url).content.decode()
    member.post(url, {"name": "Alpha", "workloads": ["training"], "archived": "on"})
    assert Project.objects.get(slug="alpha").phase == Phase.FRAMING


def test_the_overview_shows_each_candidate_at_a_glance(suite: dict[str, Any], login: Any) -> None:
    """Outcomes per candidate as a bar with its counts, coverage, and integration effort per
    owning team: what the sheet's first page shows, on the web overview."""
    from decimal import Decimal

    from poc import services as poc_services

    volcano, (quota, job, tenant) = suite["volcano"], suite["actions"]
    poc_services.result_record(candidate=volcano, action=quota, outcome="passed", actor=None)
    poc_services.result_record(
        candidate=volcano, action=job, outcome="failed", failure_cause="stalled", actor=None
    )
    poc_services.result_record(
        candidate=volcano,
        action=tenant,
        outcome="needs_integration",
        integration_what="LDAP groups",
        integration_owner_team="platform",
        integration_effort_days=Decimal("2.5"),
        actor=None,
    )
    url = reverse("reports:progress", args=["alpha"])
    page = login(suite["bob"]).get(url, headers={"HX-Request": "true"}).content.decode()
    glance = page[page.index('id="glance-h"') :]
    row = glance[glance.index("Volcano") : glance.index("</tr>", glance.index("Volcano"))]
    assert 'aria-label="Passed 1, Failed 1, Not covered 0, Needs integration 1"' in row
    assert 'class="o-passed" style="width: 33%"' in row
    assert "3 of 3" in row and "Platform 2.5" in row
