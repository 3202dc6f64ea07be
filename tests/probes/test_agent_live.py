"""workbench-probe against a live workbench: it posts to the API, and the bundle it writes on
an air-gapped node uploads through the browser form."""

import json
from types import SimpleNamespace
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from poc.models import (
    Result,
    ResultCell,
)
from poc.probes.models import (
    ProbeRun,
)
from tests.poc.api_helpers import token_client
from tests.probes.helpers import apply_gpu_templates
from tests.probes.test_agent import node, probe  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def gpu_suite(personas: dict[str, Any]) -> dict[str, Any]:
    return {**personas, "actions": apply_gpu_templates(personas["alpha"])}


def _post(node: SimpleNamespace, url: str, token: str, *extra: str):  # noqa: F811
    args = ["--url", url, "--project", "alpha", "--candidate", "volcano", "--retries", "0"]
    return probe(node, *args, *extra, WORKBENCH_TOKEN=token)


def test_the_agent_posts_its_bundle(gpu_suite, live_server, node) -> None:  # noqa: F811
    _client, token, raw = token_client(gpu_suite["alpha"], scopes=("probes:write",))
    done = _post(node, live_server.url, raw, "--expected-gpus", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    run = ProbeRun.objects.get()
    assert f"stored probe run {run.pk}" in done.stdout
    assert raw not in done.stdout + done.stderr
    assert (run.source, run.token, run.gpu_count) == ("agent", token, 1)
    node_facts = run.nodes.get().facts
    assert node_facts["gpus"][0]["uuid"] == "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"
    assert [x["code"] for x in node_facts["xid_events"]] == [79]  # from the node's dmesg
    assert {o.name for o in run.outputs.all()} >= {"nvidia-smi -q -x", "bundle.json"}
    outcomes = dict(Result.objects.values_list("action__key", "outcome"))
    assert outcomes["gpu-probe-xid"] == "failed"
    assert outcomes["gpu-probe-driver"] == "passed"
    # Probing again is a new run: its results append to each cell's history.
    again = _post(node, live_server.url, raw, "--expected-gpus", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert ProbeRun.objects.count() == 2
    cell = ResultCell.objects.get(action__key="gpu-probe-driver")
    assert (cell.result_count, cell.outcome) == (2, "passed")


def test_refusals_reach_the_operator(gpu_suite, live_server, node) -> None:  # noqa: F811
    _client, _token, raw = token_client(gpu_suite["alpha"], scopes=("read",))
    done = _post(node, live_server.url, raw)
    assert done.returncode == 1
    assert "probes:write" in done.stdout + done.stderr
    _client, _token, beta = token_client(gpu_suite["beta"], scopes=("probes:write",))
    assert _post(node, live_server.url, beta).returncode == 1
    assert ProbeRun.objects.count() == 0


def test_an_air_gapped_bundle_uploads_in_the_browser(gpu_suite, node, login) -> None:  # noqa: F811
    out = node.tmp / "node-07.json"
    done = probe(node, "--output", str(out), "--expected-gpus", "8")
    assert done.returncode == 0, done.stderr
    client = login(gpu_suite["bob"])
    response = client.post(
        "/projects/alpha/probes/upload/",
        {"candidate": "volcano", "file": SimpleUploadedFile("node-07.json", out.read_bytes())},
    )
    assert response.status_code == 302, response.content.decode()[-2000:]
    run = ProbeRun.objects.get()
    assert run.source == "upload" and run.verdict == "failed"  # 1 GPU of 8 expected
    assert json.loads(out.read_text())["expected_gpus"] == 8
    assert Result.objects.get(action__key="gpu-probe-count").outcome == "failed"
