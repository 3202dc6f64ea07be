"""`nvidia-smi --version` is recognised and read as the driver, NVML and CUDA versions; and
input over the size limit through standard input is named too large, never binary."""

import os
import threading
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from poc.probes import parsers
from poc.probes.parsers import detect, parse_output
from poc.probes.parsers.capture import split_sections
from poc.probes.rules import health
from tests.probes.helpers import H100_CAPTURE, H200, L40S_CAPTURE


def version_section(capture: Path) -> str:
    return next(
        s.body for s in split_sections(capture.read_text()) if s.command == "nvidia-smi --version"
    )


def h200_version() -> str:
    lines = (H200 / "misc.txt").read_text().splitlines()
    start = lines.index("$ nvidia-smi --version") + 1
    return "\n".join(lines[start : start + 4]) + "\n"


@pytest.mark.parametrize(
    ("text", "versions"),
    [
        (h200_version(), ("580.159.04", "580.159", "13.0")),
        (version_section(H100_CAPTURE), ("590.48.01", "590.48", "13.1")),
        (version_section(L40S_CAPTURE), ("595.80", "595.80", "13.2")),
    ],
    ids=["h200", "h100", "l40s"],
)
def test_version_output_is_read(text: str, versions: tuple[str, str, str]) -> None:
    assert detect(text) == "smi-version"
    node = parse_output(text)
    assert (node["driver_version"], node.get("nvml_version"), node["cuda_version"]) == versions
    assert node["sources"] == ["nvidia-smi --version"]
    judged = health.judge_node(node)
    assert "no_gpus" not in [p["code"] for p in judged["problems"]]


def test_older_drivers_print_no_cuda_line() -> None:
    """Drivers before the CUDA line print the first three lines only (same format)."""
    text = (
        "NVIDIA-SMI version  : 470.256.02\n"
        "NVML version        : 470.256\n"
        "DRIVER version      : 470.256.02\n"
    )
    node = parse_output(text)
    assert (node["driver_version"], node["nvml_version"], node["cuda_version"]) == (
        "470.256.02",
        "470.256",
        None,
    )


def test_the_version_merges_into_a_node() -> None:
    node = parsers.parse_outputs(
        [
            ("nvidia-smi -q -x", (H200 / "nvidia-smi-q-idle.xml").read_text()),
            ("versions", h200_version()),
        ]
    )
    assert node["nvml_version"] == "580.159" and node["gpus_listed"] is True
    assert len(node["gpus"]) == 1


def test_a_pipe_over_the_limit_named_as_a_file_is_too_large(tmp_path: Path, monkeypatch) -> None:
    """/dev/stdin, a named pipe or <(command): no size to check first; read to the limit."""
    monkeypatch.setattr(parsers, "MAX_INPUT_BYTES", 1024 * 1024)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("wb") as stream:
            stream.write(("é" * (3 * 1024 * 1024 // 2)).encode() + b"x")

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with pytest.raises(CommandError) as caught:
            call_command("parse_gpu_output", str(fifo))
    finally:
        writer.join(timeout=30)
    message = str(caught.value)
    assert "too large (3.0 MB, limit 1 MB)" in message and "binary" not in message
