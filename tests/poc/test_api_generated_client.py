"""A client generated from the served schema by openapi-python-client works against a running
server: it posts results (JSON) and a JUnit report (multipart), reads the matrix, and has the
sheet PDF download as a file. What the generator cannot express it leaves out with a warning,
so each endpoint CI pipelines use is checked to be there."""

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from poc.models import Result
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db

VENV_BIN = Path(sys.executable).parent
JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="poc" tests="2" failures="1">
<testcase classname="poc" name="real-job"><failure message="job stalled at step 40"/></testcase>
<testcase classname="poc" name="cross-tenant"/>
</testsuite></testsuites>
"""


def generated_client(tmp_path: Path, name: str):
    schema = APIClient().get("/api/schema/", {"format": "json"})
    assert schema.status_code == 200
    (tmp_path / "schema.json").write_text(json.dumps(schema.json()))
    done = subprocess.run(
        [
            str(VENV_BIN / "openapi-python-client"),
            "generate",
            "--path",
            str(tmp_path / "schema.json"),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / name),
        ],
        cwd=tmp_path,
        env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name), done.stdout
    finally:
        sys.path.remove(str(tmp_path))


@pytest.mark.django_db(transaction=True)  # the live server reads what the test wrote
def test_a_generated_client_posts_results_and_a_junit_report(suite, live_server, tmp_path) -> None:
    package, warnings = generated_client(tmp_path, "wbclient")
    # Every endpoint a pipeline uses was generated (the generator skips what it cannot read).
    for skipped in ("/junit/", "/results/", "/sheets/{sheet_id}/pdf"):
        assert f"{skipped} within" not in warnings.replace("Endpoint will not", ""), warnings
    results_api = importlib.import_module("wbclient.api.projects.projects_results_create")
    junit_api = importlib.import_module("wbclient.api.projects.projects_junit_create")
    matrix_api = importlib.import_module("wbclient.api.projects.projects_matrix_retrieve")
    pdf_api = importlib.import_module("wbclient.api.sheets.sheets_pdf_retrieve")
    models = importlib.import_module("wbclient.models")
    types = importlib.import_module("wbclient.types")
    _client, _token, raw = token_client(suite["alpha"])
    client = package.AuthenticatedClient(base_url=live_server.url, token=raw)

    body = models.ResultsInput(
        run=models.RunInput(external_id="nightly-1", candidate="volcano"),
        results=[{"action": "quota-hit", "outcome": "passed"}],
    )
    answer = results_api.sync_detailed("alpha", client=client, body=body)
    assert answer.status_code == 201, answer.content
    assert answer.parsed is not None and answer.parsed.stored == 1

    report = models.ProjectsJunitCreateFilesBody(
        file=types.File(payload=JUNIT, file_name="report.xml", mime_type="application/xml")
    )
    answer = junit_api.sync_detailed(
        "alpha", client=client, body=report, candidate="volcano", run="junit-1"
    )
    assert answer.status_code == 201, answer.content
    outcomes = dict(
        Result.objects.filter(run__external_id="junit-1").values_list("action__key", "outcome")
    )
    assert outcomes == {"real-job": "failed", "cross-tenant": "passed"}

    matrix = matrix_api.sync_detailed("alpha", client=client)
    assert matrix.status_code == 200
    # The PDF download is generated as a file (declared binary); no sheet here: 404.
    assert "File" in str(pdf_api.sync_detailed.__annotations__["return"])
    assert pdf_api.sync_detailed(999_999, client=client).status_code == 404


def test_a_junit_report_as_multipart_without_its_field_is_named(suite) -> None:
    client, _token, _raw = token_client(suite["alpha"])
    answer = client.post(
        "/api/v1/projects/alpha/junit/?candidate=volcano&run=junit-2",
        {"report": b"<testsuite/>"},
        format="multipart",
    )
    assert answer.status_code == 400
    assert answer.json()["detail"] == "send the report as multipart field 'file'"
