"""Running `manage.py demo` again keeps what people did in the demo project and adds nothing;
`--rebuild` deletes the demo project, and only it, and builds it again; production refuses."""

from decimal import Decimal
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command

from evaluations.models import AcceptanceAction, Candidate, Membership, Project
from evaluations.services import membership_set
from poc import services
from poc.models import Evidence, Outcome, Responsibility, Result, ResultCell
from reports.models import Sheet
from reports.services import review_freeze_set
from tests.demo.conftest import finish_sheets

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(db: None) -> Project:
    """A demo project of the test's own (its stored files in the test's folder): these tests
    run the command again and delete files, which the demo tests' shared copy cannot undo."""
    call_command("demo", stdout=StringIO())
    return Project.objects.get(slug="demo")


def _counts() -> dict[str, int]:
    labels = ("auth", "evaluations", "poc", "probes", "procurement", "reports")
    return {
        model._meta.label: model.objects.count()
        for model in apps.get_models()
        if model._meta.app_label in labels
    }


def _cell(project: Project, candidate: str, action: str) -> tuple[Candidate, AcceptanceAction]:
    return (
        Candidate.objects.get(project=project, slug=candidate),
        AcceptanceAction.objects.get(project=project, key=action),
    )


def test_running_it_again_keeps_what_people_changed(demo: Project) -> None:
    finish_sheets(demo)
    ops = User.objects.get(username="ops")
    open_cell = _cell(demo, "runai", "int-disaster-recovery")
    assert not ResultCell.objects.filter(candidate=open_cell[0], action=open_cell[1]).exists()
    added = services.result_record(
        candidate=open_cell[0],
        action=open_cell[1],
        outcome=Outcome.NEEDS_INTEGRATION,
        integration_what="A second site for the control plane.",
        integration_owner_team="ops",
        integration_effort_days=Decimal("12"),
        actor=ops,
    )
    changed_cell = _cell(demo, "volcano", "tenancy-borrow-reclaim")
    changed = services.result_record(
        candidate=changed_cell[0],
        action=changed_cell[1],
        outcome=Outcome.FAILED,
        failure_cause="Reclaim took 20 minutes under load.",
        change_reason="Measured again under load.",
        actor=ops,
    )
    k8s = Candidate.objects.get(project=demo, slug="k8s-gpu-operator")
    services.responsibility_clear(candidate=k8s, area="deployment", actor=ops)
    platform = User.objects.get(username="platform")
    membership_set(project=demo, user=ops, role="ops", is_admin=True, actor=platform)
    review_freeze_set(project=demo, frozen=True, actor=platform)  # revision 2 is open
    before = _counts()

    call_command("demo", stdout=StringIO())

    assert _counts() == before
    assert Membership.objects.get(project=demo, user=ops, role="ops").is_admin
    assert Project.objects.get(pk=demo.pk).frozen_revision == 2
    assert ResultCell.objects.get(candidate=open_cell[0], action=open_cell[1]).result == added
    assert ResultCell.objects.get(candidate=changed_cell[0], action=changed_cell[1]).result == (
        changed
    )
    assert not Responsibility.objects.filter(candidate=k8s, area="deployment").exists()


def test_rebuild_deletes_the_demo_project_only(
    demo: Project, personas: dict, django_capture_on_commit_callbacks
) -> None:
    alpha_result = services.result_record(
        candidate=personas["volcano"],
        action=_alpha_action(personas["alpha"]),
        outcome=Outcome.PASSED,
        actor=personas["alice"],
    )
    platform = User.objects.get(username="platform")
    cell = _cell(demo, "runai", "int-disaster-recovery")
    services.result_record(
        candidate=cell[0], action=cell[1], outcome=Outcome.PASSED, actor=platform, note="mine"
    )
    stored = list(
        Evidence.objects.filter(project=demo).exclude(file="").values_list("file", flat=True)
    )
    assert stored and all(default_storage.exists(name) for name in stored)
    accounts = set(User.objects.values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", "--rebuild", stdout=StringIO())

    rebuilt = Project.objects.get(slug="demo")
    assert rebuilt.pk != demo.pk
    assert not Project.objects.filter(pk=demo.pk).exists()
    assert not Result.objects.filter(note="mine").exists()
    assert Result.objects.filter(pk=alpha_result.pk).exists()
    assert Project.objects.filter(slug="alpha").exists()
    assert set(User.objects.values_list("pk", flat=True)) == accounts
    assert not any(default_storage.exists(name) for name in stored)
    assert ResultCell.objects.filter(project=rebuilt).count() > 200
    assert Sheet.objects.filter(project=rebuilt).count() == 1


def test_production_refuses_a_rebuild(demo: Project, settings) -> None:
    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="production"):
        call_command("demo", "--rebuild", stdout=StringIO())
    assert Project.objects.filter(pk=demo.pk).exists()


def _alpha_action(project: Project) -> AcceptanceAction:
    from tests.factories import make_actions

    _requirement, (action,) = make_actions(project, [("alpha-job", "real_task")])
    return action
