"""The probe endpoints: the push agent posts bundles with a probes:write token; members and
tokens read runs; everyone else learns nothing and changes nothing."""

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from poc.models import (
    Result,
)
from poc.probes.models import (
    ProbeRun,
)
from tests.poc.api_helpers import token_client
from tests.probes.helpers import apply_gpu_templates, bundle, h200_bench

pytestmark = pytest.mark.django_db


@pytest.fixture
def gpu_suite(personas: dict[str, Any]) -> dict[str, Any]:
    return {**personas, "actions": apply_gpu_templates(personas["alpha"])}


def _post(client: APIClient, body: Any, query: str = "?candidate=volcano", **headers: str):
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    return client.post(
        f"/api/v1/projects/alpha/probes/{query}",
        data,
        content_type="application/json",
        headers=headers,
    )


def test_agent_token_posts_a_bundle(gpu_suite) -> None:
    client, token, _raw = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    response = _post(client, bundle(benchmarks=[h200_bench()]))
    assert response.status_code == 201, response.content
    body = response.json()
    run = ProbeRun.objects.get()
    assert body["run"]["id"] == run.pk
    assert body["run"]["gpu_count"] == 1
    assert body["run"]["url"].endswith(f"/projects/alpha/probes/{run.pk}/")
    assert body["results"]["stored"] == 8
    assert body["results"]["changes"]["new"] == 8
    assert run.token == token and run.created_by is None


def test_candidate_may_come_from_the_bundle(gpu_suite) -> None:
    client, _token, _raw = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    assert _post(client, bundle(candidate="volcano"), query="").status_code == 201
    response = _post(client, bundle(candidate="slurm"), query="?candidate=volcano")
    assert response.status_code == 400
    assert "slurm" in response.json()["detail"]
    assert ProbeRun.objects.count() == 1


def test_retried_post_with_the_same_key_stores_once(gpu_suite) -> None:
    client, _token, _raw = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    first = _post(client, bundle(), **{"Idempotency-Key": "node-01-abc"})
    again = _post(client, bundle(), **{"Idempotency-Key": "node-01-abc"})
    assert first.status_code == again.status_code == 201
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json() == first.json()
    assert ProbeRun.objects.count() == 1


@pytest.mark.parametrize("scopes", [("read",), ("read", "results:write")])
def test_a_token_without_probes_write_is_refused(gpu_suite, scopes) -> None:
    client, _token, _raw = token_client(gpu_suite["alpha"], scopes=scopes)
    response = _post(client, bundle())
    assert response.status_code == 403
    assert "probes:write" in response.json()["detail"]
    assert ProbeRun.objects.count() == 0


def test_another_projects_token_and_candidate_get_404(gpu_suite) -> None:
    beta_client, _t, _r = token_client(gpu_suite["beta"], scopes=("probes:write",))
    assert _post(beta_client, bundle()).status_code == 404
    alpha_client, _t, _r = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    response = _post(alpha_client, bundle(), query="?candidate=slurm")
    assert response.status_code == 404
    assert "slurm" in response.json()["detail"]
    assert ProbeRun.objects.count() == 0


def test_members_post_with_their_session_observers_and_outsiders_cannot(gpu_suite) -> None:
    def client_for(user: Any) -> APIClient:
        client = APIClient()
        client.force_authenticate(user)
        return client

    assert _post(client_for(gpu_suite["charlie"]), bundle()).status_code == 404
    assert _post(client_for(gpu_suite["dave"]), bundle()).status_code == 403
    assert ProbeRun.objects.count() == 0
    assert _post(client_for(gpu_suite["bob"]), bundle()).status_code == 201
    assert ProbeRun.objects.get().created_by == gpu_suite["bob"]


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<nvidia_smi_log><driver_version>&lol3;</driver_version></nvidia_smi_log>"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<nvidia_smi_log><driver_version>&secret;</driver_version></nvidia_smi_log>"""


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{not json", 400),
        (b"[1, 2, 3]", 400),
        (b"[" * 100_000 + b"]" * 100_000, 400),
        (bundle(outputs=[("nvidia-smi -q -x", BILLION_LAUGHS)]), 400),
        (bundle(outputs=[("nvidia-smi -q -x", EXTERNAL_ENTITY)]), 400),
        (bundle(outputs=[("nvidia-smi -q -x", "<nvidia_smi_log><gpu id=")]), 400),
        ({"format": "something-else/9", "outputs": []}, 400),
        ({"outputs": [{"name": "x", "stdout": 5}]}, 400),
    ],
    ids=["garbled", "array", "deep", "xml-bomb", "external-entity", "truncated", "format", "type"],
)
def test_bad_bodies_get_a_reason_and_store_nothing(gpu_suite, body, status) -> None:
    client, _token, _raw = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    response = _post(client, body)
    assert response.status_code == status
    detail = response.json()["detail"]
    assert detail and "Traceback" not in detail and "/etc/passwd" not in json.dumps(response.json())
    assert ProbeRun.objects.count() == 0 and Result.objects.count() == 0


def test_a_body_over_the_limit_is_refused_before_it_is_read(gpu_suite, settings) -> None:
    settings.API_MAX_BODY_BYTES = 1024 * 1024
    client, _token, _raw = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    response = _post(client, b'{"outputs": "' + b"x" * (2 * 1024 * 1024) + b'"}')
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]
    assert ProbeRun.objects.count() == 0


def test_a_large_node_bundle_over_djangos_form_limit_is_accepted(gpu_suite, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024  # far below the bundle's size
    client, _token, _raw = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    assert _post(client, bundle()).status_code == 201


def test_runs_are_listed_and_read(gpu_suite) -> None:
    writer, _t, _r = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    run_id = _post(writer, bundle()).json()["run"]["id"]
    reader, _t, _r = token_client(gpu_suite["alpha"], scopes=("read",))
    listed = reader.get("/api/v1/projects/alpha/probes/").json()
    assert [r["id"] for r in listed] == [run_id]
    assert reader.get("/api/v1/projects/alpha/probes/?candidate=nope").status_code == 404
    detail = reader.get(f"/api/v1/probes/{run_id}/").json()
    assert detail["nodes"][0]["facts"]["gpus"][0]["name"] == "NVIDIA H200"
    assert detail["nodes"][0]["health"]["verdict"] in ("healthy", "degraded", "failed")
    assert {o["name"] for o in detail["outputs"]} >= {"nvidia-smi -q -x"}
    outsider, _t, _r = token_client(gpu_suite["beta"], scopes=("read",))
    assert outsider.get(f"/api/v1/probes/{run_id}/").status_code == 404
    assert outsider.get("/api/v1/projects/alpha/probes/").status_code == 404


@pytest.mark.parametrize(
    ("query", "body"),
    [
        ("?candidate=volc%00ano", bundle()),
        ("", {**bundle(), "candidate": "volc\x00ano"}),
        ("?candidate=volcano", {**bundle(), "host": "gpu\x00node"}),
        ("?candidate=volcano", {**bundle(), "host": "gpu\ud800node"}),
    ],
    ids=["nul-in-query", "nul-in-bundle-candidate", "nul-in-host", "surrogate-in-host"],
)
def test_text_postgresql_cannot_store_is_named_not_a_500(gpu_suite, query, body) -> None:
    """Found by schemathesis: a NUL in the candidate slug reached the database."""
    client, _token, _raw = token_client(gpu_suite["alpha"], scopes=("read", "probes:write"))
    response = _post(client, json.dumps(body), query=query)
    assert response.status_code == 400, response.content
    assert response.json()["detail"]
    assert ProbeRun.objects.count() == 0
    listed = client.get("/api/v1/projects/alpha/probes/?candidate=a%00b")
    assert listed.status_code == 400
