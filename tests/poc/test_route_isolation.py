"""Every results page of a project is 404 for a non-member, GET and POST, and changes nothing;
its admins open every page that has one."""

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluations import services as evaluation_services
from evaluations.models import ApiToken
from poc import services
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
from poc.probes.services import clusters as cluster_services
from poc.probes.services import probes
from tests.probes.helpers import bundle
from tests.urlwalk import iter_routes

pytestmark = pytest.mark.django_db

POST_ONLY = {
    "poc:evidence_add",
    "poc:token_revoke",
    "poc:probe_upload",
    "poc:probe_cancel",
    "poc:cluster_test",
    "poc:cluster_pin",
    "poc:cluster_run",
    "poc:cluster_delete",
}


def _routes() -> list:
    return [r for r in iter_routes() if "slug" in r.converters and r.name.startswith("poc:")]


@pytest.fixture
def objects(suite: dict[str, Any]) -> dict[str, Any]:
    result = services.result_record(
        candidate=suite["volcano"], action=suite["actions"][0], outcome="passed", actor=None
    )
    evidence = services.evidence_attach_file(
        result=result, upload=SimpleUploadedFile("run.log", b"ok\n"), actor=None
    )
    token, _raw = evaluation_services.api_token_create(
        project=suite["alpha"], name="ci", scopes=["read"], actor=None
    )
    probe = probes.probe_ingest_bundle(
        project=suite["alpha"], candidate=suite["volcano"], bundle=bundle(), actor=None
    ).run
    cluster = cluster_services.cluster_save(
        project=suite["alpha"],
        data=cluster_services.ClusterData(
            name="lab", kind="ssh", candidate=suite["volcano"], hosts="127.0.0.1:9", ssh_user="x"
        ),
        secrets={"ssh_password": "not-used"},
        actor=None,
    )
    ci_run = Run.objects.create(project=suite["alpha"], external_id="nightly-1")
    return {
        "slug": "alpha",
        "cluster_id": cluster.pk,
        "ci_run_id": ci_run.pk,
        "candidate_slug": "volcano",
        "action_id": suite["actions"][0].pk,
        "result_id": result.pk,
        "evidence_id": evidence.pk,
        "area": "support_sla",
        "outcome": "failed",
        "token_id": token.pk,
        "run_id": probe.pk,
        "output_id": probe.outputs.first().pk,
    }


def _url(route: Any, objects: dict[str, Any]) -> str:
    return reverse(route.name, kwargs={k: objects[k] for k in route.converters})


def _state() -> tuple:
    return (
        list(Result.objects.values_list("pk", "outcome")),
        Evidence.objects.count(),
        Responsibility.objects.count(),
        list(ApiToken.objects.values_list("pk", "revoked_at")),
        ProbeRun.objects.count(),
        list(ProbeBinding.objects.values_list("pk", "check_key")),
        list(Cluster.objects.values_list("pk", "name", "secrets", "host_keys", "seen_host_keys")),
    )


def test_every_results_route_is_walked() -> None:
    names = {r.name for r in _routes()}
    assert {"poc:matrix", "poc:cell", "poc:evidence_download", "poc:token_revoke"} <= names


@pytest.mark.parametrize("route", _routes(), ids=lambda r: r.name)
def test_outsiders_get_404_and_change_nothing(route, suite, objects, login) -> None:
    client = login(suite["charlie"])
    before = _state()
    url = _url(route, objects)
    assert client.get(url).status_code in (404, 405)
    data = {
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
        "file": SimpleUploadedFile("x.log", b"x"),
    }
    assert client.post(url, data).status_code == 404
    assert client.get(url, headers={"HX-Request": "true"}).status_code in (404, 405)
    assert _state() == before


@pytest.mark.parametrize(
    "route", [r for r in _routes() if r.name not in POST_ONLY], ids=lambda r: r.name
)
def test_admins_open_every_results_page(route, suite, objects, login) -> None:
    response = login(suite["alice"]).get(_url(route, objects))
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]  # every page carries one
    assert "script-src 'self'" in policy or policy == "sandbox; default-src 'none'", policy
    assert "unsafe-inline" not in policy.split("style-src-attr")[0]
