"""The OpenAPI schema tells the truth: every documented operation is called for real, and each
answer is checked against the response the schema documents for its status code, strictly (a
key the schema does not name is a failure, a documented key that is missing is a failure)."""

import copy
import json
from typing import Any

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from poc.probes.services import clusters as cluster_services
from reports import services as sheet_services
from tests.fakes.k8s_api import FIXTURES as K8S_FIXTURES
from tests.poc.api_helpers import token_client
from tests.probes.helpers import bundle
from tests.reports.helpers import approve_all, rendered

pytestmark = pytest.mark.django_db

JUNIT = b"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="poc" tests="2"><testcase classname="poc" name="quota-hit"/>
<testcase classname="poc" name="real-job"><failure message="stuck at step 40"/></testcase>
<testcase classname="poc" name="not-an-action"/></testsuite>"""


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))


def _strict(node: Any) -> Any:
    """The OpenAPI 3.0 schema as JSON Schema: `nullable` as a null type, and objects that name
    their properties closed to any other key."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _strict(value) for key, value in node.items() if key != "nullable"}
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def _check(openapi: dict[str, Any], path: str, method: str, response: Any) -> None:
    operation = openapi["paths"][path][method]
    documented = operation["responses"].get(str(response.status_code))
    assert documented is not None, (path, method, response.status_code, response.content[:300])
    content = documented.get("content", {})
    if not content:  # an answer documented as empty (204) has no body
        assert response.content == b"", (path, response.content[:300])
        return
    if "application/json" not in content:
        assert response["Content-Type"].split(";")[0] in content, (path, response["Content-Type"])
        return
    schema = _strict(copy.deepcopy(content["application/json"]["schema"]))
    schema["components"] = _strict(copy.deepcopy(openapi["components"]))
    jsonschema.validate(response.json(), schema, cls=jsonschema.Draft202012Validator)


def test_every_documented_answer_matches_a_real_one(evaluation, openapi) -> None:
    client, _token, _raw = token_client(
        evaluation["alpha"],
        scopes=("read", "results:write", "probes:write", "costs:write", "clusters:run"),
    )
    volcano, actions = evaluation["volcano"], evaluation["actions"]
    called: set[tuple[str, str]] = set()

    def call(path: str, method: str, url: str, expect: int, **kwargs: Any) -> Any:
        response = getattr(client, method)(url, **kwargs)
        assert response.status_code == expect, (url, response.status_code, response.content[:500])
        _check(openapi, path, method, response)
        called.add((path, method))
        return response

    call("/api/v1/projects/", "get", "/api/v1/projects/", 200)
    call("/api/v1/projects/{slug}/", "get", "/api/v1/projects/alpha/", 200)
    call("/api/v1/projects/{slug}/candidates/", "get", "/api/v1/projects/alpha/candidates/", 200)
    call("/api/v1/projects/{slug}/actions/", "get", "/api/v1/projects/alpha/actions/", 200)
    posted = call(
        "/api/v1/projects/{slug}/results/",
        "post",
        "/api/v1/projects/alpha/results/",
        201,
        data={
            "run": {"external_id": "nightly-1", "commit": "abc123"},
            "results": [
                {
                    "candidate": "volcano",
                    "action": actions[0].key,
                    "outcome": "failed",
                    "failure_cause": "quota ignored",
                    "evidence_urls": ["https://ci.example/1"],
                },
                {
                    "candidate": "volcano",
                    "action": actions[2].key,
                    "outcome": "needs_integration",
                    "integration": {"what": "LDAP", "owner_team": "platform", "effort_days": 2},
                },
            ],
        },
        format="json",
    ).json()
    call(
        "/api/v1/projects/{slug}/results/",
        "post",
        "/api/v1/projects/alpha/results/",
        201,
        data={
            "run": {"external_id": "nightly-2"},
            "results": [{"candidate": "volcano", "action": actions[0].key, "outcome": "passed"}],
        },
        format="json",
    )  # a recovery: the regressed / recovered lists hold cells
    call(
        "/api/v1/projects/{slug}/junit/",
        "post",
        "/api/v1/projects/alpha/junit/?candidate=volcano&run=junit-1",
        201,
        data=JUNIT,
        content_type="application/xml",
    )
    call("/api/v1/runs/{run_id}/", "get", f"/api/v1/runs/{posted['run']['id']}/", 200)
    call("/api/v1/projects/{slug}/matrix/", "get", "/api/v1/projects/alpha/matrix/", 200)
    from poc.models import (
        Result,
    )

    result = Result.objects.filter(candidate=volcano).latest("pk")
    call(
        "/api/v1/results/{result_id}/evidence/",
        "post",
        f"/api/v1/results/{result.pk}/evidence/",
        201,
        data={"file": SimpleUploadedFile("run.log", b"all green\n")},
        format="multipart",
    )
    probe = call(
        "/api/v1/projects/{slug}/probes/",
        "post",
        "/api/v1/projects/alpha/probes/?candidate=volcano",
        201,
        data=bundle(),
        format="json",
    ).json()
    call(
        "/api/v1/projects/{slug}/probes/documents/",
        "post",
        "/api/v1/projects/alpha/probes/documents/?candidate=volcano&name=nodes.yaml",
        201,
        data=(K8S_FIXTURES / "node-2x-tesla-t4.yaml").read_bytes(),
        content_type="application/yaml",
    )
    call("/api/v1/projects/{slug}/probes/", "get", "/api/v1/projects/alpha/probes/", 200)
    call("/api/v1/probes/{run_id}/", "get", f"/api/v1/probes/{probe['run']['id']}/", 200)
    cluster = cluster_services.cluster_save(
        project=evaluation["alpha"],
        data=cluster_services.ClusterData(
            name="lab", kind="ssh", candidate=volcano, hosts="127.0.0.1:9", ssh_user="x"
        ),
        secrets={"ssh_password": "not-used"},
        actor=None,
    )
    call("/api/v1/projects/{slug}/clusters/", "get", "/api/v1/projects/alpha/clusters/", 200)
    call(
        "/api/v1/clusters/{cluster_id}/runs/",
        "post",
        f"/api/v1/clusters/{cluster.pk}/runs/",
        202,
        data={},
        format="json",
    )
    queued = call(
        "/api/v1/projects/{slug}/sheets/",
        "post",
        "/api/v1/projects/alpha/sheets/",
        202,
        data={"language": "en"},
        format="json",
    ).json()
    call("/api/v1/projects/{slug}/sheets/", "get", "/api/v1/projects/alpha/sheets/", 200)
    sheet = sheet_services.sheet_render(sheet_id=queued["id"])
    assert sheet is not None
    call("/api/v1/sheets/{sheet_id}/", "get", f"/api/v1/sheets/{sheet.pk}/", 200)
    call("/api/v1/sheets/{sheet_id}/pdf", "get", f"/api/v1/sheets/{sheet.pk}/pdf", 200)
    # Signing is a person's act, in their session.
    person = APIClient()
    person.force_login(evaluation["bob"])
    # The token's revision froze gaps: a member acknowledges them before anyone approves.
    response = person.post(
        f"/api/v1/sheets/{sheet.pk}/acknowledge/", {"reason": "known gaps"}, format="json"
    )
    assert response.status_code == 200, response.content
    _check(openapi, "/api/v1/sheets/{sheet_id}/acknowledge/", "post", response)
    called.add(("/api/v1/sheets/{sheet_id}/acknowledge/", "post"))
    response = person.post(
        f"/api/v1/sheets/{sheet.pk}/signoffs/",
        {"decision": "approve", "comment": "ok", "role": "ops", "sha256": sheet.sha256},
        format="json",
    )
    assert response.status_code == 201, response.content
    _check(openapi, "/api/v1/sheets/{sheet_id}/signoffs/", "post", response)
    called.add(("/api/v1/sheets/{sheet_id}/signoffs/", "post"))
    # A stale revision's detail carries what changed since the freeze.
    call(
        "/api/v1/projects/{slug}/results/",
        "post",
        "/api/v1/projects/alpha/results/",
        201,
        data={
            "run": {"external_id": "nightly-3"},
            "results": [{"candidate": "volcano", "action": actions[1].key, "outcome": "passed"}],
        },
        format="json",
    )
    recorded = call(
        "/api/v1/projects/{slug}/candidates/{candidate_slug}/terms/",
        "post",
        "/api/v1/projects/alpha/candidates/volcano/terms/",
        200,
        data={"terms": [{"key": "licence_spdx", "value": "apache-2.0", "basis": "estimate"}]},
        format="json",
    ).json()
    assert recorded["recorded"] == 1
    call("/api/v1/projects/{slug}/terms/", "get", "/api/v1/projects/alpha/terms/", 200)
    call(
        "/api/v1/projects/{slug}/costs/model/",
        "put",
        "/api/v1/projects/alpha/costs/model/",
        200,
        data={"gpus": 8, "nodes": 1, "baseline_label": "today", "fte_cost": 100000},
        format="json",
    )
    added = call(
        "/api/v1/projects/{slug}/costs/lines/",
        "post",
        "/api/v1/projects/alpha/costs/lines/",
        201,
        data={
            "lines": [
                {"candidate": "volcano", "category": "support", "kind": "per_year",
                 "label": "Support", "low": 1, "expected": 2, "high": 3, "currency": "USD"},
                {"candidate": "baseline", "category": "operations", "kind": "fte",
                 "label": "Ops", "low": 1, "expected": 1, "high": 1},
            ]
        },
        format="json",
    ).json()  # fmt: skip
    assert added == {"added": 2}
    call("/api/v1/projects/{slug}/costs/", "get", "/api/v1/projects/alpha/costs/", 200)
    call(
        "/api/v1/projects/{slug}/compatibility/claims/",
        "post",
        "/api/v1/projects/alpha/compatibility/claims/",
        201,
        data={"candidate": "volcano", "gpu_model": "NVIDIA H200", "status": "tbc"},
        format="json",
    )
    call(
        "/api/v1/projects/{slug}/compatibility/",
        "get",
        "/api/v1/projects/alpha/compatibility/",
        200,
    )
    from reports.procurement.models import CostLine

    removed = CostLine.objects.filter(candidate=None).get()
    call(
        "/api/v1/projects/{slug}/costs/lines/{line_id}/",
        "delete",
        f"/api/v1/projects/alpha/costs/lines/{removed.pk}/",
        204,
    )
    stale = call("/api/v1/sheets/{sheet_id}/", "get", f"/api/v1/sheets/{sheet.pk}/", 200).json()
    assert stale["stale"] is True and stale["changes_since_freeze"]["total"] >= 1
    sealed_sheet = rendered(evaluation)
    approve_all(evaluation, sealed_sheet)
    sealed = sheet_services.sheet_seal(sheet_id=sealed_sheet.pk)
    assert sealed is not None and sealed.status == "sealed"
    with sealed.sealed_pdf.open("rb") as handle:
        report = call(
            "/api/v1/sheets/verify/",
            "post",
            "/api/v1/sheets/verify/",
            200,
            data=handle.read(),
            content_type="application/pdf",
        ).json()
    assert report["valid"] is True
    documented = {
        (path, method)
        for path, operations in openapi["paths"].items()
        if path.startswith("/api/v1/")
        for method in operations
    }
    assert documented - called == set(), "documented operations this test does not call"
