"""JSON nested 10,000 deep is bad input on every route that reads JSON: 400 with a message,
nothing stored. The routes come from the OpenAPI schema, so a new one is walked too."""

import json
import re

import pytest
from rest_framework.test import APIClient

from evaluations.api.parsers import MAX_DEPTH_MESSAGE
from poc.probes.services import clusters as cluster_services
from reports import services as sheet_services
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db

DEEP = ("[" * 10_000 + "]" * 10_000).encode()


def _json_operations() -> list[tuple[str, str]]:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (path, method)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "application/json" in operation.get("requestBody", {}).get("content", {})
    ]


def test_every_json_route_answers_400_to_a_10000_deep_document(evaluation) -> None:
    alpha, volcano = evaluation["alpha"], evaluation["volcano"]
    sheet = sheet_services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=None
    )
    cluster = cluster_services.cluster_save(
        project=alpha,
        data=cluster_services.ClusterData(
            name="lab", kind="ssh", candidate=volcano, hosts="127.0.0.1:9", ssh_user="x"
        ),
        secrets={"ssh_password": "not-used"},
        actor=None,
    )
    values = {
        "slug": "alpha",
        "candidate_slug": "volcano",
        "sheet_id": str(sheet.pk),
        "cluster_id": str(cluster.pk),
    }
    token, _row, _raw = token_client(
        alpha, scopes=("read", "results:write", "probes:write", "costs:write")
    )
    person = APIClient()
    person.force_login(evaluation["alice"])
    operations = _json_operations()
    assert len(operations) >= 7
    for path, method in operations:
        names = re.findall(r"{(\w+)}", path)
        assert set(names) <= set(values), f"{path}: give this test a value for {names}"
        url = re.sub(r"{(\w+)}", lambda m: values[m.group(1)], path)
        answer = getattr(token, method)(url, DEEP, content_type="application/json")
        if answer.status_code in (401, 403):  # a person's act (sign-off, acknowledgement)
            answer = getattr(person, method)(url, DEEP, content_type="application/json")
        assert answer.status_code == 400, (path, answer.status_code, answer.content[:300])
        assert MAX_DEPTH_MESSAGE in json.dumps(answer.json()), (path, answer.content[:300])
    # Nothing was stored by any of them.
    assert not sheet.signoffs.exists()
    assert alpha.sheets.count() == 1
    assert not alpha.results.filter(source="ci").exists()


def test_a_deep_bundle_uploaded_in_the_browser_is_refused_with_a_reason(evaluation, login) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    deep = b'{"format": "workbench-probe-bundle/1", "x": ' + DEEP + b"}"
    page = login(evaluation["bob"]).post(
        reverse("poc:probe_upload", kwargs={"slug": "alpha"}),
        {"candidate": "volcano", "file": SimpleUploadedFile("bundle.json", deep)},
    )
    assert page.status_code == 422, page.content[:300]
    assert "The bundle is not valid JSON" in page.content.decode()
