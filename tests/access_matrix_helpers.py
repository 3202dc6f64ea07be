"""Shared pieces of the access-matrix tests (docs/security.md section 1): one project with an
object behind every route, the arguments of any project route, a fingerprint of everything a
refused write could have changed, people outside the projects, and a session API client that
carries a real CSRF token."""

import secrets
from pathlib import Path
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from tests.urlwalk import Route, iter_routes

PROJECT_APPS = ("evaluations:", "poc:", "procurement:", "reports:")
SIGNING_PASSPHRASE = "test-passphrase"

# Routes that answer only POST (GET is 405 for anyone who may reach the project).
POST_ONLY = {
    "evaluations:member_remove",
    "evaluations:candidate_remove",
    "evaluations:requirement_delete",
    "evaluations:requirement_move",
    "evaluations:action_delete",
    "evaluations:action_move",
    "poc:evidence_add",
    "poc:token_revoke",
    "poc:probe_upload",
    "poc:probe_cancel",
    "poc:cluster_test",
    "poc:cluster_pin",
    "poc:cluster_run",
    "poc:cluster_delete",
    "procurement:cost_line_remove",
    "reports:sheet_roles",
    "reports:sheet_retry",
    "reports:sheet_freeze",
    "reports:sheet_withdraw",
    "reports:sheet_acknowledge",
    "reports:sheet_recommendation",
}


def project_routes() -> list[Route]:
    """Every browser route of one project (a `slug` in its pattern), from the resolver."""
    return [r for r in iter_routes() if "slug" in r.converters and r.name.startswith(PROJECT_APPS)]


def project_objects(suite: dict[str, Any]) -> dict[str, Any]:
    """Alpha with something behind every route: a result with evidence, a token, a probe run
    with an output, a cluster, revision 1 of its sheet (ready for sign-off, a stand-in PDF),
    the template library. Returns the values of every route argument."""
    from evaluations.catalog import load_templates
    from evaluations.models import Membership
    from evaluations.services import api_token_create, template_catalog_seed
    from poc import services
    from poc.probes.services import clusters as cluster_services
    from poc.probes.services import probes
    from reports import services as sheet_services
    from reports.models import SheetStatus
    from tests.probes.helpers import bundle

    template_catalog_seed(sets=load_templates())
    alpha, volcano, action = suite["alpha"], suite["volcano"], suite["actions"][0]
    result = services.result_record(candidate=volcano, action=action, outcome="passed", actor=None)
    evidence = services.evidence_attach_file(
        result=result, upload=SimpleUploadedFile("run.log", b"ok\n"), actor=None
    )
    token, _raw = api_token_create(project=alpha, name="ci", scopes=["read"], actor=None)
    rows = [
        {
            "candidate": "volcano",
            "action": suite["actions"][1].key,
            "outcome": "failed",
            "failure_cause": "job stalled",
        }
    ]
    record, _notable = services.results_ingest(
        project=alpha,
        run=services.RunData(external_id="pipeline-1"),
        rows=services.validate_rows(alpha, rows),
        token=token,
        user=None,
    )
    probe = probes.probe_ingest_bundle(
        project=alpha, candidate=volcano, bundle=bundle(), actor=None
    ).run
    cluster = cluster_services.cluster_save(
        project=alpha,
        data=cluster_services.ClusterData(
            name="lab", kind="ssh", candidate=volcano, hosts="127.0.0.1:9", ssh_user="x"
        ),
        secrets={"ssh_password": "not-used"},
        actor=None,
    )
    from reports.procurement import services as procurement_services

    cost_line = procurement_services.cost_line_add(
        candidate=volcano,
        data=procurement_services.LineData(
            category="support", kind="per_year", label="Support", low=1, expected=2, high=3,
            currency="USD",
        ),
        actor=None,
    )  # fmt: skip
    sheet = sheet_services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=None
    )
    sheet.pdf.save("alpha-r1.pdf", ContentFile(b"%PDF-1.7 stand-in"), save=False)
    sheet.status = SheetStatus.READY
    sheet.save()
    return {
        "slug": "alpha",
        "candidate_slug": "volcano",
        "membership_id": Membership.objects.get(user=suite["bob"], project=alpha).pk,
        "requirement_id": suite["requirement"].pk,
        "action_id": action.pk,
        "set_key": "elasticity",
        "result_id": result.pk,
        "evidence_id": evidence.pk,
        "area": "support_sla",
        "group": "price",
        "key": "list_price",
        "line_id": cost_line.pk,
        "token_id": token.pk,
        "run_id": probe.pk,  # a probe run; poc:run_detail takes a CI run (ci_run_id)
        "ci_run_id": record.run.pk,
        "output_id": probe.outputs.first().pk,
        "cluster_id": cluster.pk,
        "outcome": "failed",
        "revision": sheet.revision,
        "table": "matrix",
        "sheet": sheet,
        "result": result,
        "evidence": evidence,
        "cluster": cluster,
        "probe": probe,
    }


def route_url(route: Route, objects: dict[str, Any]) -> str:
    values = dict(objects)
    values["fmt"] = "yaml" if route.name.startswith("evaluations:") else "csv"
    if route.name == "poc:run_detail":
        values["run_id"] = objects["ci_run_id"]
    return reverse(route.name, kwargs={name: values[name] for name in route.converters})


def post_data(sheet_sha256: str) -> dict[str, Any]:
    """A form that would change something on any project route, had the caller the right."""
    return {
        "tier": "not_applicable",
        "reason": "refused",
        "role": "ops",
        "username": "charlie",
        "outcome": "failed",
        "failure_cause": "x",
        "party": "vendor",
        "person": "x",
        "license_model": "x",
        "name": "x",
        "scopes": ["read"],
        "check": "gpu_count_at_least",
        "params": '{"count": 1}',
        "text": "GPU 0: NVIDIA H200 (UUID: GPU-1)",
        "language": "en",
        "signing_roles": ["ops"],
        "decision": "approve",
        "sheet_sha256": sheet_sha256,
        "frozen": "on",
        "feature": "x",
        "question": "x",
        "key": "x",
        "file": SimpleUploadedFile("x.log", b"x"),
    }


def stored_state() -> tuple:
    """Everything a refused write could have changed, including the project history (every
    service records an event)."""
    from evaluations.models import (
        AcceptanceAction,
        ApiToken,
        Candidate,
        Membership,
        Project,
        ProjectEvent,
        Requirement,
    )
    from poc.models import (
        Evidence,
        Responsibility,
        Result,
        Run,
    )
    from poc.probes.models import (
        Cluster,
        ProbeBinding,
        ProbeRun,
    )
    from reports.models import Sheet, SignOff
    from reports.procurement.models import Confirmation, CostLine, CostModel, TermEntry

    return (
        list(
            Project.objects.order_by("pk").values_list(
                "pk",
                "name",
                "description",
                "signing_roles",
                "review_freeze",
                "recommended",
                "phase",
            )
        ),
        list(Membership.objects.order_by("pk").values_list("pk", "role", "is_admin")),
        list(Candidate.objects.order_by("pk").values_list("pk", "tier", "reason", "position")),
        list(Requirement.objects.order_by("pk").values_list("pk", "feature", "position")),
        list(AcceptanceAction.objects.order_by("pk").values_list("pk", "key", "position")),
        list(Result.objects.order_by("pk").values_list("pk", "outcome")),
        Evidence.objects.count(),
        Responsibility.objects.count(),
        list(TermEntry.objects.order_by("pk").values_list("pk", "key", "current")),
        list(Confirmation.objects.order_by("pk").values_list("pk", "due", "closed_at")),
        list(CostLine.objects.order_by("pk").values_list("pk", "expected")),
        list(CostModel.objects.order_by("pk").values_list("pk", "currency", "horizon_years")),
        list(ApiToken.objects.order_by("pk").values_list("pk", "revoked_at")),
        ProbeRun.objects.count(),
        Run.objects.count(),
        list(ProbeBinding.objects.order_by("pk").values_list("pk", "check_key")),
        list(Cluster.objects.order_by("pk").values_list("pk", "name", "secrets", "host_keys")),
        list(Sheet.objects.order_by("pk").values_list("pk", "status", "revision")),
        SignOff.objects.count(),
        ProjectEvent.objects.count(),
    )


def staff_users() -> dict[str, Any]:
    """A staff user and a superuser, neither a member of any project."""
    from tests.factories import UserFactory

    return {
        "staff": UserFactory(username="staffer", is_staff=True),
        "superuser": UserFactory(username="root", is_staff=True, is_superuser=True),
    }


def add_signers(suite: dict[str, Any]) -> dict[str, Any]:
    """Members for every default signing role (as the `evaluation` fixture of the sheet
    tests): the keys `tests.reports.helpers.approve_all` reads."""
    from evaluations.services import membership_set
    from tests.factories import UserFactory

    people = {}
    for role in ("architecture", "procurement", "business"):
        people[role] = UserFactory(username=f"{role}-lead")
        membership_set(project=suite["alpha"], user=people[role], role=role, actor=None)
    membership_set(project=suite["alpha"], user=suite["alice"], role="architecture", actor=None)
    return {**suite, **people}


def signing_settings(settings: Any, tmp_path: Path, p12: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.SHEET_SIGNING_P12 = str(p12)
    settings.SHEET_SIGNING_PASSPHRASE = SIGNING_PASSPHRASE


def make_p12(folder: Path) -> Path:
    from reports.signing import create_self_signed_p12

    path = folder / "org.p12"
    create_self_signed_p12(path, SIGNING_PASSPHRASE, subject="Workbench Test Organisation")
    return path


def sealed_sheet(evaluation: dict[str, Any]) -> Any:
    """Revision 1 of alpha rendered for real, approved by every role and sealed."""
    from reports import services
    from reports.models import SheetStatus
    from tests.reports.helpers import approve_all, rendered

    sheet = rendered(evaluation, "en")
    approve_all(evaluation, sheet)
    sealed = services.sheet_seal(sheet_id=sheet.pk)
    assert sealed is not None and sealed.status == SheetStatus.SEALED
    return sealed


def csrf_api_client(user: Any) -> APIClient:
    """A session API client that enforces CSRF as browsers meet it, and carries a valid token
    (the cookie and the `X-CSRFToken` header)."""
    secret = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(32))
    client = APIClient(enforce_csrf_checks=True, headers={"X-CSRFToken": secret})
    client.cookies["csrftoken"] = secret
    client.force_login(user)
    return client


def session_api_client(user: Any) -> APIClient:
    """A session API client without a CSRF token (refused on every write but verify)."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    return client
