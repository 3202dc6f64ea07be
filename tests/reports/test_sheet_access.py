"""Who may do what with sheets: outsiders get 404 everywhere, observers cannot write, only
project admins choose the signing roles, and signing needs a person's session."""

from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from rest_framework.test import APIClient

from evaluations.models import Project
from reports import services
from reports.models import Sheet, SheetStatus, SignOff
from tests.reports.helpers import approve_all
from tests.urlwalk import iter_routes

pytestmark = pytest.mark.django_db


def _report_routes() -> list:
    return [r for r in iter_routes() if "slug" in r.converters and r.name.startswith("reports:")]


@pytest.fixture
def sheet(evaluation: dict[str, Any]) -> Sheet:
    """Revision 1 of alpha, ready for sign-off (its PDF a stand-in: no rendering needed)."""
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    sheet.pdf.save("alpha-r1.pdf", ContentFile(b"%PDF-1.7 stand-in"), save=False)
    sheet.status = SheetStatus.READY
    sheet.save()
    return sheet


def _url(route: Any) -> str:
    values = {"slug": "alpha", "revision": 1, "table": "matrix", "fmt": "csv"}
    return reverse(route.name, kwargs={k: values[k] for k in route.converters})


def _state() -> tuple:
    return (
        list(Sheet.objects.values_list("pk", "status", "revision")),
        SignOff.objects.count(),
        Project.objects.get(slug="alpha").signing_roles,
        Project.objects.get(slug="alpha").review_freeze,
    )


POST_ONLY = (
    "reports:sheet_roles",
    "reports:sheet_retry",
    "reports:sheet_freeze",
    "reports:sheet_withdraw",
    "reports:sheet_acknowledge",
    "reports:sheet_recommendation",
)


def test_every_sheet_route_is_walked() -> None:
    names = {r.name for r in _report_routes()}
    assert {
        "reports:sheets",
        "reports:sheet",
        "reports:sheet_roles",
        "reports:sheet_export",
    } <= names


@pytest.mark.parametrize("route", _report_routes(), ids=lambda r: r.name)
def test_outsiders_get_404_and_change_nothing(route, evaluation, sheet, login) -> None:
    client = login(evaluation["charlie"])  # administers beta, not a member of alpha
    before = _state()
    assert client.get(_url(route)).status_code in (404, 405)
    post = {
        "language": "en",
        "signing_roles": ["ops"],
        "role": "ops",
        "decision": "approve",
        "sheet_sha256": sheet.sha256,
        "frozen": "on",
        "reason": "outsider",
    }
    assert client.post(_url(route), post).status_code == 404
    assert _state() == before


@pytest.mark.parametrize(
    "route",
    [r for r in _report_routes() if r.name not in POST_ONLY],
    ids=lambda r: r.name,
)
def test_members_open_every_sheet_page(route, evaluation, sheet, login) -> None:
    assert login(evaluation["dave"]).get(_url(route)).status_code == 200  # even an observer


def test_observers_and_non_admins_cannot_write(evaluation, sheet, login) -> None:
    before = _state()
    observer = login(evaluation["dave"])
    assert (
        observer.post(reverse("reports:sheets", args=["alpha"]), {"language": "en"}).status_code
        == 403
    )
    retry = reverse("reports:sheet_retry", args=["alpha", 1])
    assert observer.post(retry).status_code == 403
    roles = reverse("reports:sheet_roles", args=["alpha"])
    assert login(evaluation["bob"]).post(roles, {"signing_roles": ["ops"]}).status_code == 403
    freeze = reverse("reports:sheet_freeze", args=["alpha"])
    assert login(evaluation["bob"]).post(freeze, {"frozen": "on"}).status_code == 403
    withdraw = reverse("reports:sheet_withdraw", args=["alpha", 1])
    assert observer.post(withdraw, {"reason": "observer"}).status_code == 403
    acknowledge = reverse("reports:sheet_acknowledge", args=["alpha", 1])
    assert observer.post(acknowledge, {"reason": "observer"}).status_code == 403
    assert _state() == before
    page = login(evaluation["bob"]).get(reverse("reports:sheets", args=["alpha"])).content.decode()
    assert "Save signing roles" not in page and "Operations" in page


def test_admins_choose_who_signs_new_revisions(evaluation, sheet, login) -> None:
    admin = login(evaluation["alice"])
    roles = reverse("reports:sheet_roles", args=["alpha"])
    for bad, message in (([], "Choose at least one"), (["observer"], "not one of the available")):
        refused = admin.post(roles, {"signing_roles": bad})
        assert refused.status_code == 422 and message in refused.content.decode()
    assert Project.objects.get(slug="alpha").signing_roles == [
        "platform",
        "architecture",
        "procurement",
        "business",
        "ops",
    ]
    response = admin.post(roles, {"signing_roles": ["ops", "procurement"]})
    assert response.status_code == 302
    alpha = Project.objects.get(slug="alpha")
    assert alpha.signing_roles == ["ops", "procurement"]  # kept in the catalogue's order
    assert alpha.events.filter(verb="project.signing_roles").exists()

    second = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=evaluation["alice"]
    )
    assert second.required_roles == ["ops", "procurement"]
    assert Sheet.objects.get(pk=sheet.pk).required_roles[0] == "platform"  # r1 keeps its own
    Sheet.objects.filter(pk=second.pk).update(status=SheetStatus.READY)
    second.refresh_from_db()
    approve_all(evaluation, second, signers=(("bob", "ops"), ("procurement", "procurement")))
    assert Sheet.objects.get(pk=second.pk).status == SheetStatus.SEALING  # two roles suffice


def test_roles_nobody_holds_are_pointed_out(evaluation, login) -> None:
    from evaluations.models import Membership

    Membership.objects.filter(project=evaluation["alpha"], role="business").delete()
    page = login(evaluation["alice"]).get(reverse("reports:sheets", args=["alpha"]))
    assert "No member holds these signing roles yet: Business" in page.content.decode()


def test_signing_needs_the_session_and_its_csrf_token(evaluation, sheet) -> None:
    api = APIClient(enforce_csrf_checks=True)
    api.force_login(evaluation["bob"])
    url = f"/api/v1/sheets/{sheet.pk}/signoffs/"
    refused = api.post(url, {"decision": "approve"}, format="json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert not SignOff.objects.exists()


def test_only_a_revision_open_for_sign_off_takes_decisions(evaluation, sheet) -> None:
    from django.core.exceptions import ValidationError

    for status in (SheetStatus.PENDING, SheetStatus.RENDERING, SheetStatus.SEALED):
        Sheet.objects.filter(pk=sheet.pk).update(status=status)
        with pytest.raises(ValidationError, match="not open for sign-off"):
            services.signoff_record(
                sheet=sheet,
                user=evaluation["bob"],
                role="ops",
                decision="approve",
                sheet_sha256=sheet.sha256,
            )
    assert not SignOff.objects.exists()


def test_the_list_marks_revisions_the_project_has_moved_past(evaluation, sheet, login) -> None:
    client = login(evaluation["bob"])
    url = reverse("reports:sheets", args=["alpha"])
    assert "outdated" not in client.get(url).content.decode()
    evaluation["alpha"].description = "scope widened"
    evaluation["alpha"].save()
    fresh = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    rows = {
        line.split("</a>")[0].rsplit(">", 1)[-1]: line
        for line in client.get(url).content.decode().split("<tr>")
        if "/sheets/" in line
    }
    assert "outdated" in rows["r1"] and "outdated" not in rows[f"r{fresh.revision}"]


def test_the_api_answer_to_the_last_approval_says_sealing(evaluation, sheet) -> None:
    from evaluations.services import project_signing_roles_set

    project_signing_roles_set(project=evaluation["alpha"], roles=["ops"], actor=evaluation["alice"])
    Sheet.objects.filter(pk=sheet.pk).update(required_roles=["ops"])
    api = APIClient()
    api.force_login(evaluation["bob"])
    answer = api.post(
        f"/api/v1/sheets/{sheet.pk}/signoffs/", {"decision": "approve"}, format="json"
    )
    assert answer.status_code == 201 and answer.json()["sheet"]["status"] == "sealing"


def _more_revisions(sheet: Sheet, upto: int) -> None:
    """Copies of a frozen revision up to r`upto` (what months of nightly sheets leave)."""
    have = Sheet.objects.filter(project=sheet.project).count()
    Sheet.objects.bulk_create(
        [
            Sheet(
                project=sheet.project,
                revision=n,
                language=sheet.language,
                candidate_slugs=sheet.candidate_slugs,
                snapshot=sheet.snapshot,
                snapshot_json=sheet.snapshot_json,
                sha256=sheet.sha256,
                fingerprint=sheet.fingerprint,
                required_roles=sheet.required_roles,
                status=SheetStatus.READY,
            )
            for n in range(have + 1, upto + 1)
        ]
    )


def test_the_list_is_paged_and_its_queries_do_not_grow_with_revisions(
    evaluation, sheet, login
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = login(evaluation["bob"])
    url = reverse("reports:sheets", args=["alpha"])
    _more_revisions(sheet, 5)
    assert client.get(url).status_code == 200  # the current fingerprint is cached from now on
    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    _more_revisions(sheet, 45)
    with CaptureQueriesContext(connection) as many:
        page = client.get(url).content.decode()
    assert len(many.captured_queries) == len(few.captured_queries)
    assert ">r45</a>" in page and ">r26</a>" in page and ">r25</a>" not in page
    assert "page 1 of 3" in page
    older = client.get(url + "?page=3").content.decode()
    assert ">r5</a>" in older and ">r1</a>" in older and ">r6</a>" not in older
    assert client.get(url + "?page=nonsense").status_code == 200  # the first page


def test_the_list_judges_staleness_from_a_cached_fingerprint_that_follows_every_change(
    evaluation, sheet, login, tmp_path
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evaluations import services as evaluation_services
    from poc import services as poc_services
    from poc.models import (
        Result,
    )

    client = login(evaluation["bob"])
    url = reverse("reports:sheets", args=["alpha"])
    with CaptureQueriesContext(connection) as first:
        assert "outdated" not in client.get(url).content.decode()
    with CaptureQueriesContext(connection) as second:
        assert "outdated" not in client.get(url).content.decode()
    # The second visit reads the fingerprint from the cache: no snapshot, far fewer queries.
    assert len(second.captured_queries) < len(first.captured_queries) - 5

    def outdated_after(change: Any) -> bool:
        change()
        stale = "outdated" in client.get(url).content.decode()
        Sheet.objects.filter(pk=sheet.pk).update(fingerprint=_fresh_fingerprint(sheet))
        assert "outdated" not in client.get(url).content.decode()
        return stale

    volcano, quota = evaluation["volcano"], evaluation["actions"][0]
    assert outdated_after(
        lambda: poc_services.result_record(
            candidate=volcano,
            action=quota,
            outcome="failed",
            failure_cause="x",
            change_reason="nightly",
            actor=None,
        )
    )
    latest = Result.objects.filter(candidate=volcano, action=quota).latest("pk")
    assert outdated_after(
        lambda: poc_services.evidence_attach_file(
            result=latest,
            upload=SimpleUploadedFile("log.txt", b"nightly log"),
            actor=evaluation["bob"],
        )
    )
    assert outdated_after(
        lambda: evaluation_services.action_update(
            action=quota, actor=evaluation["alice"], question="Reworded?"
        )
    )
    assert outdated_after(
        lambda: poc_services.responsibility_set(
            candidate=volcano,
            area="upgrade_rollback",
            party="vendor",
            person="Vendor support desk",
            actor=evaluation["alice"],
        )
    )


def _fresh_fingerprint(sheet: Sheet) -> str:
    """The project's fingerprint now: the revision is made current again for the next step."""
    from reports.snapshot import content_fingerprint

    return content_fingerprint(sheet.project, candidate_slugs=sheet.candidate_slugs)
