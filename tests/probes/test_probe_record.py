"""Probe output becomes a probe run, evidence and PoC results through the ingest service."""

import hashlib
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage

from poc.models import (
    Evidence,
    Result,
    ResultCell,
    Run,
)
from poc.probes.models import (
    ProbeBinding,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
    ProbeSource,
)
from poc.probes.services import probes
from poc.services import probe_results
from tests.probes.helpers import (
    GPU_TEMPLATE_ACTIONS,
    H200,
    XID_79,
    apply_gpu_templates,
    bundle,
    h200_bench,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def gpu_suite(personas: dict[str, Any]) -> dict[str, Any]:
    return {**personas, "actions": apply_gpu_templates(personas["alpha"])}


def _record(project: Any, candidate: Any, data: dict[str, Any], actor: Any = None):
    return probes.probe_ingest_bundle(
        project=project, candidate=candidate, bundle=data, actor=actor
    )


def _outcomes(candidate: Any) -> dict[str, str]:
    return dict(
        ResultCell.objects.filter(candidate=candidate).values_list("action__key", "outcome")
    )


def test_template_actions_come_bound_to_checks(gpu_suite) -> None:
    assert set(gpu_suite["actions"]) >= GPU_TEMPLATE_ACTIONS
    bound = {b.action.key: b for b in probes.bindings_for_project(gpu_suite["alpha"])}
    assert set(bound) == GPU_TEMPLATE_ACTIONS
    assert bound["gpu-probe-count"].check == "gpu_count_at_least"
    assert bound["gpu-probe-count"].from_template


def test_h200_bundle_is_judged_and_recorded(gpu_suite) -> None:
    alpha, volcano = gpu_suite["alpha"], gpu_suite["volcano"]
    recorded = _record(alpha, volcano, bundle(benchmarks=[h200_bench()]), gpu_suite["bob"])
    run = recorded.run
    assert run.status == "done" and run.source == ProbeSource.AGENT
    assert (run.node_count, run.gpu_count) == (1, 1)
    node = ProbeNode.objects.get(run=run)
    assert node.host == "gpu-node-01"
    assert node.facts["gpus"][0]["name"] == "NVIDIA H200"
    assert node.facts["driver_version"] == "580.159.04"
    assert node.verdict == run.verdict
    outcomes = _outcomes(volcano)
    # One GPU where the template expects eight; MIG is off; no kernel log was read.
    assert outcomes["gpu-probe-count"] == "failed"
    assert outcomes["gpu-probe-driver"] == "passed"
    assert outcomes["gpu-probe-mig-layout"] == "failed"
    assert outcomes["gpu-probe-xid"] == "not_covered"
    # bench.json: 779 bf16 TFLOP/s of a 989 peak (78.7 %) and 4.19 of 4.8 TB/s (87 %).
    assert outcomes["gpu-probe-matmul"] == "passed"
    assert outcomes["gpu-probe-memory-bandwidth"] == "passed"
    assert outcomes["gpu-probe-host-link"] == "passed"
    results = {r.action.key: r for r in Result.objects.filter(run=run.run).select_related("action")}
    assert all(r.source == "probe" for r in results.values())
    assert "78." in results["gpu-probe-matmul"].note
    assert "1" in results["gpu-probe-count"].failure_cause
    assert "kernel log" in results["gpu-probe-xid"].note.lower()
    assert Run.objects.get(pk=run.run_id).external_id == f"probe-{run.pk}"


def test_raw_outputs_are_kept_and_cited_as_evidence(gpu_suite) -> None:
    alpha, volcano = gpu_suite["alpha"], gpu_suite["volcano"]
    run = _record(alpha, volcano, bundle()).run
    xml = (H200 / "nvidia-smi-q-idle.xml").read_bytes()
    output = ProbeOutput.objects.get(run=run, name="nvidia-smi -q -x")
    assert output.sha256 == hashlib.sha256(xml).hexdigest()
    assert output.size == len(xml)
    with default_storage.open(output.file.name, "rb") as handle:
        assert handle.read() == xml
    result = Result.objects.get(run=run.run, action__key="gpu-probe-count")
    cited = Evidence.objects.filter(result=result)
    assert output.sha256 in set(cited.values_list("sha256", flat=True))
    assert {e.file.name for e in cited if e.sha256 == output.sha256} == {output.file.name}
    cell = ResultCell.objects.get(candidate=volcano, action__key="gpu-probe-count")
    assert cell.evidence_count == cited.count()


def test_a_second_run_reports_regressions(gpu_suite) -> None:
    alpha, volcano = gpu_suite["alpha"], gpu_suite["volcano"]
    _record(alpha, volcano, bundle(benchmarks=[h200_bench()]))
    slow = _record(alpha, volcano, bundle(benchmarks=[h200_bench(scale=0.5)]))
    assert slow.results is not None
    assert {"candidate": "volcano", "action": "gpu-probe-matmul"} in slow.results.regressed
    result = Result.objects.get(run=slow.run.run, action__key="gpu-probe-matmul")
    assert result.outcome == "failed" and result.previous is not None
    assert ResultCell.objects.get(candidate=volcano, action=result.action).result_count == 2


def test_kernel_log_with_xid_79_fails_health_and_xid_checks(gpu_suite) -> None:
    alpha, volcano = gpu_suite["alpha"], gpu_suite["volcano"]
    data = bundle()
    data["outputs"].append(
        {"name": "kernel log", "exit_code": 0, "stdout": XID_79.read_text(), "stderr": ""}
    )
    run = _record(alpha, volcano, data).run
    assert run.verdict == "failed"
    outcomes = _outcomes(volcano)
    assert outcomes["gpu-probe-xid"] == "failed"
    assert outcomes["gpu-probe-health"] == "failed"
    cause = Result.objects.get(run=run.run, action__key="gpu-probe-xid").failure_cause
    assert "79" in cause


def test_expected_gpus_in_the_bundle_fails_a_short_node(gpu_suite) -> None:
    run = _record(gpu_suite["alpha"], gpu_suite["volcano"], bundle(expected_gpus=8)).run
    assert run.verdict == "failed"
    problems = ProbeNode.objects.get(run=run).health["problems"]
    assert any("8" in p["message"] for p in problems)


def test_explicit_binding_overrides_the_template_and_can_unbind(gpu_suite) -> None:
    alpha, volcano, bob = gpu_suite["alpha"], gpu_suite["volcano"], gpu_suite["bob"]
    count = gpu_suite["actions"]["gpu-probe-count"]
    probes.probe_binding_set(
        action=count, check="gpu_count_at_least", params={"count": 1}, actor=bob
    )
    mig = gpu_suite["actions"]["gpu-probe-mig-layout"]
    probes.probe_binding_set(action=mig, check="", params={}, actor=bob)
    _record(alpha, volcano, bundle())
    outcomes = _outcomes(volcano)
    assert outcomes["gpu-probe-count"] == "passed"
    assert "gpu-probe-mig-layout" not in outcomes
    probes.probe_binding_reset(action=mig, actor=bob)
    assert not ProbeBinding.objects.filter(action=mig).exists()
    _record(alpha, volcano, bundle())
    assert _outcomes(volcano)["gpu-probe-mig-layout"] == "failed"


def test_any_action_can_be_bound(suite) -> None:
    action = suite["actions"][1]
    probes.probe_binding_set(
        action=action, check="driver_at_least", params={"version": "600.1"}, actor=None
    )
    probes.probe_ingest_bundle(
        project=suite["alpha"], candidate=suite["volcano"], bundle=bundle(), actor=None
    )
    result = Result.objects.get(action=action)
    assert result.outcome == "failed"
    assert "580.159.04" in result.failure_cause + result.note


@pytest.mark.parametrize(
    ("check", "params"),
    [
        ("no_such_check", {}),
        ("gpu_count_at_least", {}),
        ("gpu_count_at_least", {"count": "eight"}),
        ("gpu_count_at_least", {"count": 0}),
        ("gpu_count_at_least", {"count": 8, "extra": 1}),
        ("matmul_percent_of_peak", {"dtype": "int4", "percent": 50}),
    ],
)
def test_bad_bindings_are_refused_and_nothing_is_saved(suite, check, params) -> None:
    with pytest.raises(ValidationError) as caught:
        probes.probe_binding_set(action=suite["actions"][0], check=check, params=params, actor=None)
    assert caught.value.messages
    assert not ProbeBinding.objects.exists()


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.parametrize(
    "data",
    [
        "not a bundle",
        {"format": "workbench-probe-bundle/1", "outputs": "nope"},
        bundle(outputs=[("nvidia-smi -q -x", "<nvidia_smi_log><gpu")]),
        bundle(outputs=[("nvidia-smi -q -x", "\x00\x01\x02 garbage")]),
        bundle(benchmarks=[{"gpu_index": 0, "matmul_tflops": {"bf16": "fast"}}]),
    ],
    ids=["string", "outputs-not-a-list", "truncated-xml", "garbage", "bad-benchmark"],
)
def test_bad_bundles_store_nothing(gpu_suite, settings, data) -> None:
    with pytest.raises(probes.ProbeInputError) as caught:
        _record(gpu_suite["alpha"], gpu_suite["volcano"], data)
    assert str(caught.value)
    assert "Traceback" not in str(caught.value)
    assert ProbeRun.objects.count() == 0
    assert Result.objects.count() == 0
    assert _files(Path(settings.MEDIA_ROOT)) == []


def test_a_failed_write_leaves_no_file(gpu_suite, settings, monkeypatch) -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("database went away")

    monkeypatch.setattr(probe_results, "results_ingest", broken)
    with pytest.raises(RuntimeError):
        _record(gpu_suite["alpha"], gpu_suite["volcano"], bundle())
    assert ProbeRun.objects.count() == 0
    assert _files(Path(settings.MEDIA_ROOT)) == []


def test_plain_text_upload_is_one_node_with_its_output(gpu_suite) -> None:
    text = (H200 / "nvidia-smi-q-idle.txt").read_bytes()
    nodes = probes.nodes_from_text(text, name="smi.txt", host="n7", expected_gpus=1)
    assert nodes[0].facts["host"] == "n7"
    recorded = probes.probe_record(
        project=gpu_suite["alpha"],
        candidate=gpu_suite["volcano"],
        source=ProbeSource.UPLOAD,
        nodes=nodes,
        actor=gpu_suite["bob"],
    )
    assert recorded.run.gpu_count == 1
    assert list(recorded.run.outputs.values_list("name", flat=True)) == ["smi.txt"]


def test_binary_upload_is_refused(gpu_suite) -> None:
    with pytest.raises(probes.ProbeInputError, match="not text"):
        probes.nodes_from_text(b"\xff\xd8\xff\xe0" + bytes(range(256)), name="photo.jpg")


def test_candidate_of_another_project_is_refused(gpu_suite) -> None:
    with pytest.raises(probes.ProbeInputError):
        _record(gpu_suite["alpha"], gpu_suite["beta_slurm"], bundle())
    assert ProbeRun.objects.count() == 0
