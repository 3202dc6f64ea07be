"""The GPU probe pages: upload, a run's GPUs and health, raw output, bindings, the agent."""

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from poc.probes.models import (
    ProbeBinding,
    ProbeOutput,
    ProbeRun,
)
from poc.probes.services import probes
from tests.probes.helpers import (
    H100_CAPTURE,
    H200,
    L40S_CAPTURE,
    apply_gpu_templates,
    bundle,
    h200_bench,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def gpu_suite(personas: dict[str, Any]) -> dict[str, Any]:
    return {**personas, "actions": apply_gpu_templates(personas["alpha"])}


def _upload(client: Any, **data: Any):
    return client.post("/projects/alpha/probes/upload/", {"candidate": "volcano", **data})


def test_upload_a_file_and_read_the_run(gpu_suite, login) -> None:
    client = login(gpu_suite["bob"])
    xml = SimpleUploadedFile("node7.xml", (H200 / "nvidia-smi-q-idle.xml").read_bytes())
    response = _upload(client, file=xml, host="node-7", expected_gpus="1")
    run = ProbeRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/projects/alpha/probes/{run.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert "node-7" in page
    assert "NVIDIA H200" in page
    assert "00000000:00:06.0" in page
    assert "gpu-probe-count" in page  # the results it recorded
    output = ProbeOutput.objects.get(run=run)
    assert f"/projects/alpha/probes/outputs/{output.pk}/" in page


def test_a_file_windows_powershell_wrote_in_utf16_is_read(gpu_suite, login) -> None:
    """`nvidia-smi -q > smi.txt` in Windows PowerShell 5 writes UTF-16 with a byte-order mark."""
    client = login(gpu_suite["bob"])
    text = (H200 / "nvidia-smi-q-idle.txt").read_text().replace("\n", "\r\n")
    upload = SimpleUploadedFile("smi.txt", text.encode("utf-16"))
    response = _upload(client, file=upload, host="win-node")
    assert response.status_code == 302, response.content.decode()[:500]
    run = ProbeRun.objects.get()
    assert run.gpu_count == 1
    assert "NVIDIA H200" in client.get(response["Location"]).content.decode()


def test_paste_a_capture_with_several_commands(gpu_suite, login) -> None:
    client = login(gpu_suite["bob"])
    response = _upload(client, text=H100_CAPTURE.read_text())
    assert response.status_code == 302
    run = ProbeRun.objects.get()
    assert run.gpu_count == 1
    assert "H100" in client.get(response["Location"]).content.decode()


def test_bundle_file_with_benchmark_shows_bars_against_peak(gpu_suite, login) -> None:
    client = login(gpu_suite["bob"])
    data = json.dumps(bundle(benchmarks=[h200_bench()])).encode()
    response = _upload(client, file=SimpleUploadedFile("node.json", data))
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "<svg" in page and "bf16 matmul" in page
    assert "78.7 %" in page  # 778.6 of 989 TFLOP/s


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"text": "hello, this is not GPU output"}, "not"),
        ({"file": SimpleUploadedFile("x.bin", b"\x89PNG\r\n\x1a\n" + bytes(300))}, "text"),
        ({}, "Choose a file or paste"),
        ({"text": "x", "file": SimpleUploadedFile("a.txt", b"y")}, "not both"),
        ({"text": (H200 / "nvidia-smi-q-idle.xml").read_text()[:4000]}, ""),
    ],
    ids=["prose", "binary", "nothing", "both", "truncated-xml"],
)
def test_bad_uploads_keep_the_form_and_store_nothing(gpu_suite, login, data, message) -> None:
    response = _upload(login(gpu_suite["bob"]), **data)
    assert response.status_code == 422
    page = response.content.decode()
    assert 'class="error"' in page or 'class="errors"' in page
    assert message in page
    assert ProbeRun.objects.count() == 0


def test_an_upload_over_the_limit_is_refused(gpu_suite, login, settings) -> None:
    settings.API_MAX_BODY_BYTES = 1024 * 1024
    big = SimpleUploadedFile("big.txt", b"x" * (3 * 1024 * 1024))
    response = _upload(login(gpu_suite["bob"]), file=big)
    assert response.status_code == 413
    assert "limit" in response.content.decode()
    assert ProbeRun.objects.count() == 0


def test_observers_read_but_cannot_upload(gpu_suite, login) -> None:
    client = login(gpu_suite["dave"])
    assert client.get("/projects/alpha/probes/").status_code == 200
    assert _upload(client, text=(H200 / "query-gpu.csv").read_text()).status_code == 403
    assert ProbeRun.objects.count() == 0


def test_raw_output_is_served_as_plain_text(gpu_suite, login) -> None:
    client = login(gpu_suite["bob"])
    _upload(client, file=SimpleUploadedFile("l40s.txt", L40S_CAPTURE.read_bytes()))
    output = ProbeOutput.objects.get()
    response = client.get(f"/projects/alpha/probes/outputs/{output.pk}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]
    assert response.content == L40S_CAPTURE.read_bytes()
    download = client.get(f"/projects/alpha/probes/outputs/{output.pk}/?download=1")
    assert download["Content-Disposition"].startswith("attachment;")


def test_probes_page_lists_latest_evidence_per_candidate(gpu_suite, login) -> None:
    probes.probe_ingest_bundle(
        project=gpu_suite["alpha"], candidate=gpu_suite["volcano"], bundle=bundle(), actor=None
    )
    page = login(gpu_suite["bob"]).get("/projects/alpha/probes/").content.decode()
    run = ProbeRun.objects.get()
    assert f"/projects/alpha/probes/{run.pk}/" in page
    assert "Upload probe output" in page


def test_probes_page_queries_do_not_grow_with_runs(
    gpu_suite, login, django_assert_max_num_queries
) -> None:
    client = login(gpu_suite["bob"])
    probes.probe_ingest_bundle(
        project=gpu_suite["alpha"], candidate=gpu_suite["volcano"], bundle=bundle(), actor=None
    )
    with django_assert_max_num_queries(40) as one:
        client.get("/projects/alpha/probes/")
    for _ in range(5):
        probes.probe_ingest_bundle(
            project=gpu_suite["alpha"], candidate=gpu_suite["volcano"], bundle=bundle(), actor=None
        )
    with django_assert_max_num_queries(len(one.captured_queries)):
        client.get("/projects/alpha/probes/")


def test_bind_an_action_with_params(gpu_suite, login) -> None:
    client = login(gpu_suite["bob"])
    action = gpu_suite["actions"]["gpu-probe-count"]
    url = f"/projects/alpha/probes/checks/{action.pk}/"
    form = client.get(url).content.decode()
    assert "gpu_count_at_least" in form and "&quot;count&quot;: 8" in form
    bad = client.post(url, {"check": "gpu_count_at_least", "params": "{count: 8"})
    assert bad.status_code == 422 and "not valid JSON" in bad.content.decode()
    wrong = client.post(url, {"check": "gpu_count_at_least", "params": '{"count": -1}'})
    assert wrong.status_code == 422 and "count" in wrong.content.decode()
    assert not ProbeBinding.objects.exists()
    ok = client.post(url, {"check": "gpu_count_at_least", "params": '{"count": 16}'})
    assert ok.status_code == 302
    assert ProbeBinding.objects.get(action=action).params == {"count": 16}
    listing = client.get("/projects/alpha/probes/checks/").content.decode()
    assert "16" in listing
    client.post(url, {"reset": "1"})
    assert not ProbeBinding.objects.exists()


def test_agent_page_shows_the_command_and_the_agent_downloads(gpu_suite, login) -> None:
    page = login(gpu_suite["bob"]).get("/projects/alpha/probes/agent/").content.decode()
    assert "--project alpha --candidate volcano" in page
    assert "/probe/workbench-probe.py" in page
    from django.test import Client

    download = Client().get("/probe/workbench-probe.py")
    assert download.status_code == 200
    assert b"workbench-probe-bundle/1" in download.content
    assert download["Content-Disposition"].endswith('filename="workbench-probe.py"')
