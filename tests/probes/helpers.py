"""Shared pieces of the probe tests: the real captures, a project with the GPU templates
applied, and agent bundles built from captures."""

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT.parent / "shared" / "fixtures" / "gpu"
H200 = GPU / "h200"
H100_CAPTURE = GPU / "public" / "linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
L40S_CAPTURE = GPU / "public" / "linux-x86_64__nvidia-l40s__595.80.txt"
XID_79 = GPU / "logs" / "dmesg-xid-79-fallen-off-bus.txt"

GPU_TEMPLATE_ACTIONS = {
    "gpu-probe-count",
    "gpu-probe-driver",
    "gpu-probe-health",
    "gpu-probe-xid",
    "gpu-probe-mig-layout",
    "gpu-probe-matmul",
    "gpu-probe-memory-bandwidth",
    "gpu-probe-host-link",
}


def h200_bench(scale: float = 1.0) -> dict[str, Any]:
    """The real H200 benchmark figures (bench.json) as the agent reports them, optionally
    scaled down to stand for a slower GPU."""
    raw = json.loads((H200 / "bench.json").read_text())
    return {
        "gpu_index": 0,
        "device_name": raw["device"],
        "framework": f"torch {raw['torch']}",
        "matmul_tflops": {
            "bf16": raw["matmul_bfloat16_tflops"] * scale,
            "fp16": raw["matmul_float16_tflops"] * scale,
            "tf32": raw["matmul_tf32_tflops"] * scale,
        },
        "matmul_size": 8192,
        "device_copy_tbps": raw["d2d_GBps_rw"] / 1000 * scale,
        "host_to_device_gbps": raw["h2d_GBps"] * scale,
        "device_to_host_gbps": raw["d2h_GBps"] * scale,
    }


def bundle(
    *,
    outputs: list[tuple[str, str]] | None = None,
    benchmarks: list[dict[str, Any]] | None = None,
    host: str = "gpu-node-01",
    expected_gpus: int | None = None,
    candidate: str | None = None,
) -> dict[str, Any]:
    """An agent bundle holding the H200 captures (or the given outputs)."""
    if outputs is None:
        outputs = [
            ("nvidia-smi -q -x", (H200 / "nvidia-smi-q-idle.xml").read_text()),
            ("nvidia-smi --query-gpu=... --format=csv", (H200 / "query-gpu.csv").read_text()),
        ]
    data: dict[str, Any] = {
        "format": "workbench-probe-bundle/1",
        "agent": {"version": "1.0.0", "python": "3.8.18"},
        "host": host,
        "collected_at": "2026-12-01T10:00:00Z",
        "expected_gpus": expected_gpus,
        "outputs": [
            {"name": name, "exit_code": 0, "stdout": text, "stderr": "", "duration_s": 0.1}
            for name, text in outputs
        ],
        "benchmarks": benchmarks or [],
    }
    if candidate is not None:
        data["candidate"] = candidate
    return data


def apply_gpu_templates(project: Any) -> dict[str, Any]:
    """The GPU node evidence template set applied to `project`: its actions by key."""
    from evaluations.catalog import load_templates
    from evaluations.models import AcceptanceAction, TemplateSet
    from evaluations.services import template_catalog_seed, template_set_apply

    template_catalog_seed(sets=load_templates())
    template_set_apply(
        project=project, template_set=TemplateSet.objects.get(key="gpu-node-evidence"), actor=None
    )
    return {a.key: a for a in AcceptanceAction.objects.filter(project=project)}
