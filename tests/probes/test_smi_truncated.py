"""A `nvidia-smi -q` report cut off mid-way is read as truncated, with a warning naming where
it stops; a report narrowed with `-i` (complete for the GPUs it lists) is not. The reports are
the real captures, cut; the two-GPU report puts the real H200 block under two bus ids."""

import re

import pytest

from poc.probes.parsers import parse_output
from poc.probes.parsers.capture import split_sections
from tests.probes.helpers import H100_CAPTURE, H200, L40S_CAPTURE

H200_QUERY = (H200 / "nvidia-smi-q-idle.txt").read_text()
BUS = "GPU 00000000:00:06.0"


def query_of(capture) -> str:
    return next(s.body for s in split_sections(capture.read_text()) if s.command == "nvidia-smi -q")


def cut_after(report: str, marker: str, extra: int = 0) -> str:
    """The report up to the end of the line holding `marker` (plus `extra` lines)."""
    lines = report.split("\n")
    at = next(n for n, line in enumerate(lines) if marker in line)
    return "\n".join(lines[: at + 1 + extra]) + "\n"


def two_gpus(report: str) -> str:
    """The H200 report with its GPU block twice, the second under another bus id."""
    head, _, block = report.partition(BUS)
    head = re.sub(r"Attached GPUs\s*: 1", "Attached GPUs : 2", head)
    assert "Attached GPUs : 2" in head
    second = block.replace("00000000:00:06.0", "00000000:00:07.0")
    return head + BUS + block + BUS.replace("06.0", "07.0") + second


def cut_warnings(node) -> list[str]:
    return [w for w in node["warnings"] if "cut off" in w]


@pytest.mark.parametrize(
    "report",
    [H200_QUERY, query_of(H100_CAPTURE), query_of(L40S_CAPTURE), two_gpus(H200_QUERY)],
    ids=["h200", "h100", "l40s", "two-gpus"],
)
def test_complete_reports_are_not_truncated(report: str) -> None:
    node = parse_output(report)
    assert cut_warnings(node) == []
    assert node["gpus_listed"] is True


@pytest.mark.parametrize(
    ("report", "marker", "where"),
    [
        (H200_QUERY, "DRAM Uncorrectable", "ECC Errors > "),
        (query_of(H100_CAPTURE), "Remapped Rows", "Remapped Rows"),
        (query_of(L40S_CAPTURE), "Clocks Event Reasons", "Clocks Event Reasons"),
    ],
    ids=["h200-in-ecc", "h100-at-remapped-rows", "l40s-at-clock-events"],
)
def test_a_single_gpu_report_cut_mid_way_names_where_it_stops(report, marker, where) -> None:
    node = parse_output(cut_after(report, marker))
    (warning,) = cut_warnings(node)
    assert where in warning and "the last section read" in warning
    (gpu,) = node["gpus"]
    assert gpu["index"] == 0  # a cut report lists its first GPUs in order
    assert gpu["name"] is not None  # what was read before the cut is kept


def test_a_cut_second_gpu_is_truncated_not_narrowed() -> None:
    report = two_gpus(H200_QUERY)
    second = report.index(BUS.replace("06.0", "07.0"))
    ecc = report.index("ECC Errors", second)
    node = parse_output(report[: report.index("\n", ecc) + 1])
    (warning,) = cut_warnings(node)
    assert "00000000:00:07.0" in warning and "ECC Errors" in warning
    assert not any("narrowed" in w for w in node["warnings"])
    assert [g["index"] for g in node["gpus"]] == [0, 1]


def test_a_second_gpu_cut_between_sections_is_truncated() -> None:
    """Cut exactly before "Processes": the block ends as the one before it does not."""
    report = two_gpus(H200_QUERY)
    second = report.index(BUS.replace("06.0", "07.0"))
    processes = report.index("    Processes", second)
    node = parse_output(report[:processes])
    (warning,) = cut_warnings(node)
    assert "Fabric" in warning


def test_a_report_cut_in_the_first_line_of_the_second_gpu_is_truncated() -> None:
    report = two_gpus(H200_QUERY)
    second = report.index(BUS.replace("06.0", "07.0"))
    node = parse_output(report[: report.index("\n", report.index("Product Name", second)) + 1])
    (warning,) = cut_warnings(node)
    assert "00000000:00:07.0 at Product Name" in warning
    assert [g["index"] for g in node["gpus"]] == [0, 1]


def test_a_narrowed_report_stays_narrowed() -> None:
    """`nvidia-smi -q -i 1` on a two-GPU node: one complete block of two attached."""
    report = two_gpus(H200_QUERY)
    second = report.index(BUS.replace("06.0", "07.0"))
    first_block = report.index(BUS)
    narrowed = report[:first_block] + report[second:]
    node = parse_output(narrowed)
    assert cut_warnings(node) == []
    assert any("narrowed with -i" in w for w in node["warnings"])
    assert node["gpus"][0]["index"] is None


def test_a_report_cut_before_its_first_gpu() -> None:
    node = parse_output(cut_after(H200_QUERY, "Attached GPUs"))
    (warning,) = cut_warnings(node)
    assert "before its first GPU" in warning
    assert node["gpus"] == [] and node["gpus_listed"] is False
