"""Probe facts in procurement sheets: frozen in the snapshot, shown as a GPU table per
candidate in the PDF, in the sheet's language."""

import subprocess
from pathlib import Path
from typing import Any

import pytest

from poc.probes.services import probes
from reports import services
from reports.selectors import sheet_is_stale
from tests.probes.helpers import XID_79, bundle, h200_bench
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db


def _probe(evaluation: dict[str, Any], data: dict[str, Any]) -> None:
    probes.probe_ingest_bundle(
        project=evaluation["alpha"], candidate=evaluation["volcano"], bundle=data, actor=None
    )


def test_snapshot_freezes_the_latest_probe_run(evaluation) -> None:
    _probe(evaluation, bundle(host="old-node"))
    _probe(evaluation, bundle(host="gpu-node-09", benchmarks=[h200_bench()]))
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    (facts,) = sheet.snapshot["probe_facts"]
    assert facts["candidate"] == "volcano"
    (node,) = facts["nodes"]
    assert node["host"] == "gpu-node-09"
    assert node["gpus"] == "1 × NVIDIA H200"
    assert node["driver"] == "580.159.04"
    assert node["benchmarks"][0]["bf16_percent"] == pytest.approx(78.7, abs=0.1)


def test_a_new_probe_run_makes_an_open_revision_stale(evaluation) -> None:
    _probe(evaluation, bundle())
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    assert not sheet_is_stale(sheet)
    data = bundle()
    data["outputs"].append({"name": "kernel log", "exit_code": 0, "stdout": XID_79.read_text()})
    _probe(evaluation, data)
    assert sheet_is_stale(sheet)


def _text(sheet: Any) -> str:
    path = Path(sheet.pdf.path)
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def test_the_pdf_shows_the_gpu_inventory_and_health(evaluation) -> None:
    data = bundle(host="gpu-node-09", expected_gpus=8, benchmarks=[h200_bench()])
    _probe(evaluation, data)
    text = _text(rendered(evaluation))
    assert "GPU nodes probed" in text
    assert "gpu-node-09" in text
    assert "1 × NVIDIA H200" in text
    assert "580.159.04" in text
    assert "78.7 %" in text
    row = next(line for line in text.splitlines() if "gpu-node-09" in line)
    assert "Failed" in row  # one GPU where eight are expected


def test_the_chinese_pdf_judges_in_chinese(evaluation) -> None:
    _probe(evaluation, bundle(host="gpu-node-09", expected_gpus=8))
    text = _text(rendered(evaluation, language="zh-hans"))
    assert "已探测的 GPU 节点" in text
    row = next(line for line in text.splitlines() if "gpu-node-09" in line)
    assert "失败" in row
