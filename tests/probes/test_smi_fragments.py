"""A fragment of `nvidia-smi -q` without its GPU header (a section or two pasted into a ticket,
or grep's matches) is read as the sections of an unknown GPU, with a warning; its facts count
for health. The sections are cut out of the real captures."""

import pytest

from poc.probes.parsers import ParseError, detect, parse_output
from poc.probes.parsers.capture import split_sections
from poc.probes.rules import health
from tests.probes.helpers import H100_CAPTURE, H200

H200_QUERY = (H200 / "nvidia-smi-q-idle.txt").read_text()


def section(report: str, label: str) -> str:
    """One top-level section of a GPU block, its lines as the report prints them."""
    lines = report.splitlines()
    start = next(n for n, line in enumerate(lines) if line.strip() == label)
    end = start + 1
    while end < len(lines) and lines[end].startswith(" " * 8):
        end += 1
    return "\n".join(lines[start:end]) + "\n"


def h100_query() -> str:
    sections = split_sections(H100_CAPTURE.read_text())
    return next(s.body for s in sections if s.command == "nvidia-smi -q")


def pending(block: str) -> str:
    """The remapped rows block with a remapping pending (the value the driver prints then)."""
    lines = block.splitlines()
    changed = [line.replace(": No", ": Yes") if "Pending" in line else line for line in lines]
    assert changed != lines
    return "\n".join(changed) + "\n"


def test_a_remapped_rows_block_alone_is_an_unknown_gpu() -> None:
    text = section(H200_QUERY, "Remapped Rows")
    assert detect(text) == "smi-text"
    node = parse_output(text)
    (gpu,) = node["gpus"]
    assert (gpu["index"], gpu["pci_bus_id"], gpu["uuid"]) == (None, None, None)
    assert gpu["remapped_rows_pending"] is False
    assert gpu["remapped_rows_failure"] is False
    assert any("without its GPU header" in w for w in node["warnings"])
    assert node["gpus_listed"] is False


def test_a_pending_remap_in_a_fragment_counts_for_health() -> None:
    judged = health.judge_node(parse_output(pending(section(H200_QUERY, "Remapped Rows"))))
    (gpu,) = judged["gpus"]
    assert "remapped_rows_pending" in [p["code"] for p in gpu["problems"]]
    assert judged["verdict"] != "healthy"
    # The node's GPUs are not listed: the count is unknown, not "no GPU".
    assert "no_gpus" not in [p["code"] for p in judged["problems"]]
    assert "gpu_count" in [c["code"] for c in judged["could_not_check"]]


@pytest.mark.parametrize("report", [H200_QUERY, h100_query()], ids=["h200-580", "h100-590"])
def test_an_ecc_errors_block_alone_with_an_uncorrectable_error_fails(report: str) -> None:
    block = section(report, "ECC Errors")
    lines = block.splitlines()
    first = next(n for n, line in enumerate(lines) if "Uncorrectable" in line)
    lines[first] = lines[first].rsplit(":", 1)[0] + ": 2"
    node = parse_output("\n".join(lines) + "\n")
    (gpu,) = node["gpus"]
    assert (gpu["ecc_volatile_uncorrected"] or 0) + (gpu["ecc_aggregate_uncorrected"] or 0) >= 2
    judged = health.judge_node(node)
    assert judged["gpus"][0]["verdict"] == "failed"


def test_grep_matches_of_several_gpus_are_several_unknown_gpus() -> None:
    """`nvidia-smi -q | grep -A 6 "Remapped Rows"` on two GPUs: grep parts the groups with
    "--"; the same section again is the next GPU."""
    block = section(H200_QUERY, "Remapped Rows")
    text = block + "--\n" + pending(block)
    node = parse_output(text)
    assert [g["remapped_rows_pending"] for g in node["gpus"]] == [False, True]
    assert any("2 unknown GPUs" in w for w in node["warnings"])


def test_two_sections_of_one_gpu_are_one_gpu() -> None:
    text = section(H200_QUERY, "ECC Errors") + section(H200_QUERY, "Remapped Rows")
    (gpu,) = parse_output(text)["gpus"]
    assert gpu["ecc_volatile_uncorrected"] == 0 and gpu["remapped_rows_pending"] is False


def test_a_fragment_in_a_capture_section_is_read() -> None:
    command = 'nvidia-smi -q | grep -A 6 "Remapped Rows"'
    text = f"$ {command}\n" + pending(section(H200_QUERY, "Remapped Rows"))
    node = parse_output(text)
    assert [g["remapped_rows_pending"] for g in node["gpus"]] == [True]


def test_other_indented_text_is_still_refused() -> None:
    text = "Notes\n    Remapped : maybe\n    Pending : ask the vendor\n"
    with pytest.raises(ParseError):
        parse_output(text)
