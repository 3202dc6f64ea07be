"""What the probe endpoints accept is checked by their input serializers before anything is read
further: a refused post names the field and what is wrong with it, stores nothing, and the
schema describes the same body."""

import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from poc.models import Result
from poc.probes.models import ProbeOutput, ProbeRun
from tests.poc.api_helpers import token_client
from tests.probes.helpers import apply_gpu_templates, bundle

pytestmark = pytest.mark.django_db
PROBES = "/api/v1/projects/alpha/probes/"
DOCUMENTS = "/api/v1/projects/alpha/probes/documents/"


@pytest.fixture
def writer(personas: dict[str, Any]) -> APIClient:
    apply_gpu_templates(personas["alpha"])
    client, _token, _raw = token_client(personas["alpha"], scopes=("read", "probes:write"))
    return client


def _post(client: APIClient, body: Any, url: str = PROBES + "?candidate=volcano", **headers: str):
    return client.post(url, json.dumps(body), content_type="application/json", headers=headers)


def _nothing_stored(settings: Any) -> bool:
    media = Path(settings.MEDIA_ROOT)
    files = [p for p in media.rglob("*") if p.is_file()] if media.exists() else []
    return not (ProbeRun.objects.exists() or Result.objects.exists() or files)


def _with_output(**changes: Any) -> dict[str, Any]:
    body = bundle()
    body["outputs"][1] = {**body["outputs"][1], **changes}
    return body


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({**bundle(), "expected_gpus": "eight"}, "expected_gpus must be an integer"),
        ({**bundle(), "expected_gpus": -1}, "expected_gpus must be at least 0"),
        ({**bundle(), "outputs": "nvidia-smi"}, "outputs must be a list"),
        ({**bundle(), "outputs": ["nvidia-smi"]}, "outputs[0] must be an object"),
        (_with_output(exit_code=True), "outputs[1].exit_code must be an integer"),
        (_with_output(stdout=["<xml/>"]), "outputs[1].stdout must be a string"),
        (_with_output(name="gpu\x00smi"), "outputs[1].name contains a NUL character"),
        ({**bundle(), "benchmarks": [{"gpu_index": 0}, 7]}, "benchmarks[1] must be an object"),
        ({**bundle(), "agent": "1.0.0"}, "agent must be an object"),
        ({k: v for k, v in bundle().items() if k != "format"}, "format is required"),
    ],
    ids=[
        "count-as-text",
        "negative-count",
        "outputs-not-a-list",
        "output-not-an-object",
        "exit-code-boolean",
        "stdout-a-list",
        "nul-in-a-name",
        "benchmark-not-an-object",
        "agent-not-an-object",
        "no-format",
    ],
)
def test_a_bad_bundle_field_is_named_and_nothing_is_stored(writer, settings, body, detail) -> None:
    response = _post(writer, body)
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith(detail)
    assert _nothing_stored(settings)


def test_a_candidate_that_is_no_string_is_refused_not_looked_up(writer, settings) -> None:
    response = _post(writer, {**bundle(), "candidate": 7}, url=PROBES)
    assert response.status_code == 400
    assert response.json() == {"detail": "candidate must be a string"}
    response = _post(writer, bundle(), url=PROBES + "?candidate=vol%00cano")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("query parameter candidate contains a NUL")
    response = _post(writer, bundle(), url=PROBES)
    assert response.json() == {"detail": "name the candidate: ?candidate=SLUG"}
    assert _nothing_stored(settings)


def test_a_refused_bundle_is_refused_again_under_its_key_and_stores_nothing(writer, settings):
    body = {**bundle(), "outputs": "nvidia-smi"}
    first = _post(writer, body, **{"Idempotency-Key": "node-07-a"})
    again = _post(writer, body, **{"Idempotency-Key": "node-07-a"})
    assert first.status_code == again.status_code == 400
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json() == first.json() == {"detail": "outputs must be a list"}
    assert _nothing_stored(settings)


def test_the_bundle_reaches_the_parsers_as_it_was_sent(writer) -> None:
    """The serializer checks the bundle; the run keeps the bundle itself, unknown keys too."""
    response = _post(writer, {**bundle(), "rack": "r12", "expected_gpus": 1})
    assert response.status_code == 201, response.content
    kept = ProbeOutput.objects.get(name="bundle.json")
    with kept.file.open("rb") as handle:
        stored = json.loads(handle.read())
    assert stored["rack"] == "r12" and stored["expected_gpus"] == 1


@pytest.mark.parametrize(
    ("query", "body", "detail"),
    [
        ("?candidate=volcano", {"documents": [{"name": "nodes.yaml"}]}, "documents[0].text is"),
        ("?candidate=volcano", {"documents": ["kind: List"]}, "documents[0] must be an object"),
        (
            "?candidate=volcano",
            {"documents": [{"name": "a\x00.yaml", "text": "kind: List\nitems: []\n"}]},
            "documents[0].name contains a NUL character",
        ),
        ("?candidate=volcano&cluster=+3", {"documents": []}, "query parameter cluster must be"),
        ("?cluster=3", {"documents": []}, "query parameter candidate is required"),
    ],
    ids=["no-text", "not-an-object", "nul-in-a-name", "cluster-not-an-id", "no-candidate"],
)
def test_a_bad_documents_post_names_the_field(writer, settings, query, body, detail) -> None:
    response = _post(writer, body, url=DOCUMENTS + query)
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith(detail)
    assert _nothing_stored(settings) and not ProbeOutput.objects.exists()


def test_the_schema_describes_the_bundle_the_serializer_checks() -> None:
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    body = schema["paths"]["/api/v1/projects/{slug}/probes/"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ProbeBundleInput"
    }
    bundle_schema = schema["components"]["schemas"]["ProbeBundleInput"]
    assert set(bundle_schema["required"]) == {"format", "outputs"}
    assert bundle_schema["properties"]["expected_gpus"]["minimum"] == 0
    command = schema["components"]["schemas"]["ProbeCommandInput"]
    assert command["required"] == ["name"]
    assert command["properties"]["exit_code"]["type"] == "integer"
