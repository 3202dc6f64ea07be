"""The GPU's recovery action: read from -q -x, -q and --query-gpu CSV, and judged.

Newer drivers print "GPU Recovery Action" (`<gpu_recovery_action>`, the CSV field
`gpu_recovery_action`), as the H200 (580), H100 (590) and L40S (595) captures do ("None"). The
inputs with another action are those captures with the value replaced. nvidia-smi prints the short
names of NVIDIA's documentation ("Reset", "Reboot", "Drain P2P", "Drain and Reset"; GPU Memory
Error Management, Error Recovery and Response Flags); Xid 154 messages the longer ones ("GPU Reset
Required"). Drivers before it (public -q outputs of R530 to R560) print a "GPU Reset Status"
section instead ("Reset Required", "Drain and Reset Recommended": Yes or No), and R570 prints both,
the reset status marked deprecated: those inputs are written from that layout, in place of the
captures' line.
"""

from typing import Any

import pytest

from poc.probes.facts import NodeFacts, new_gpu, new_node
from poc.probes.parsers import merge_nodes, parse_output, parse_outputs
from poc.probes.parsers import values as v
from poc.probes.parsers.capture import split_sections
from poc.probes.rules.checks import run_check
from poc.probes.rules.health import assess_node, gpu_rule, judge_node
from poc.probes.rules.health import recovery_action as recovery_rule
from tests.probes.gpu_fixtures import (
    H100_CAPTURE,
    H200_CSV,
    H200_TEXT,
    H200_XML,
    L40S_CAPTURE,
    fixture_text,
)
from tests.probes.test_health import good_gpu, good_node

XML_LINE = "<gpu_recovery_action>None</gpu_recovery_action>"
TEXT_LINE = "    GPU Recovery Action                                : None"

# (what the driver prints, what the facts hold)
SPELLINGS = [
    ("None", "None"),
    ("Reset", "GPU Reset Required"),
    ("Reboot", "Node Reboot Required"),
    ("Drain P2P", "Drain P2P"),
    ("Drain and Reset", "Drain and Reset"),
    ("GPU Reset Required", "GPU Reset Required"),
    ("Node Reboot Required", "Node Reboot Required"),
    ("Recover IMEX Domain", "Recover IMEX Domain"),  # a newer action: kept as written
]
# What stands for "not reported": N/A, deprecation, NVML's error texts.
UNREPORTED = ["N/A", "[N/A]", "Requested functionality has been deprecated", "GPU is lost"]


def xml_with(value: str) -> str:
    text = fixture_text(H200_XML)
    assert text.count(XML_LINE) == 1
    return text.replace(XML_LINE, f"<gpu_recovery_action>{value}</gpu_recovery_action>")


def text_with(value: str) -> str:
    text = fixture_text(H200_TEXT)
    assert text.count(TEXT_LINE) == 1
    return text.replace(TEXT_LINE, TEXT_LINE.removesuffix("None") + value)


def h100_csv_with(value: str) -> str:
    """The H100 capture's idle --query-gpu section (header and row), the action replaced."""
    sections = split_sections(fixture_text(H100_CAPTURE))
    body = next(s.body for s in sections if s.label.startswith("idle: nvidia-smi --query-gpu"))
    lines = [line for line in body.split("\n") if line.strip()]
    header = [column.strip() for column in lines[0].split(",")]
    column = header.index("gpu_recovery_action")
    cells = lines[1].split(",")
    assert cells[column].strip() == "None"
    cells[column] = f" {value}"
    return "\n".join([lines[0], ",".join(cells)])


def action_of(text: str) -> Any:
    node = parse_output(text)
    assert len(node["gpus"]) == 1
    return node["gpus"][0]["recovery_action"]


# --- the captures -----------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [H200_XML, H200_TEXT, H100_CAPTURE, L40S_CAPTURE])
def test_the_captures_report_none(relative: str) -> None:
    assert action_of(fixture_text(relative)) == "None"


def test_the_h100_csv_reports_none() -> None:
    sections = split_sections(fixture_text(H100_CAPTURE))
    body = next(s.body for s in sections if s.label.startswith("load: nvidia-smi --query-gpu"))
    assert action_of(body) == "None"


def test_a_csv_without_the_field_leaves_it_unknown() -> None:
    # The H200 CSV asks for no recovery action.
    assert action_of(fixture_text(H200_CSV)) is None


# --- each format, each value ------------------------------------------------------------------


@pytest.mark.parametrize(("printed", "expected"), SPELLINGS)
def test_xml(printed: str, expected: str) -> None:
    assert action_of(xml_with(printed)) == expected


@pytest.mark.parametrize(("printed", "expected"), SPELLINGS)
def test_text(printed: str, expected: str) -> None:
    assert action_of(text_with(printed)) == expected


@pytest.mark.parametrize(("printed", "expected"), SPELLINGS)
def test_csv(printed: str, expected: str) -> None:
    assert action_of(h100_csv_with(printed)) == expected


@pytest.mark.parametrize("printed", UNREPORTED)
def test_markers_and_errors_are_not_reported(printed: str) -> None:
    assert action_of(xml_with(printed)) is None
    assert action_of(text_with(printed)) is None
    assert action_of(h100_csv_with(printed)) is None


def test_a_gpu_without_the_field_has_it_unknown() -> None:
    assert new_gpu()["recovery_action"] is None
    text = fixture_text(H200_TEXT).replace(TEXT_LINE + "\n", "")
    assert action_of(text) is None
    xml = fixture_text(H200_XML).replace(XML_LINE, "")
    assert action_of(xml) is None


# --- the reset status of older drivers --------------------------------------------------------

# (Reset Required, Drain and Reset Recommended, the facts' action)
RESET_STATUS = [
    ("No", "No", "None"),
    ("No", "N/A", "None"),  # GPUs without drain-and-reset (consumer and older boards)
    ("Yes", "No", "GPU Reset Required"),
    ("No", "Yes", "Drain and Reset"),
    ("Yes", "Yes", "GPU Reset Required"),
    ("N/A", "N/A", None),
]


def text_reset_status(reset: str, drain: str, recovery_line: str = "") -> str:
    section = (
        "    GPU Reset Status\n"
        f"        Reset Required                                 : {reset}\n"
        f"        Drain and Reset Recommended                    : {drain}\n"
    )
    return fixture_text(H200_TEXT).replace(TEXT_LINE + "\n", section + recovery_line)


def xml_reset_status(reset: str, drain: str, recovery_element: str = "") -> str:
    section = (
        "<gpu_reset_status>\n"
        f"\t\t\t<reset_required>{reset}</reset_required>\n"
        f"\t\t\t<drain_and_reset_recommended>{drain}</drain_and_reset_recommended>\n"
        "\t\t</gpu_reset_status>"
    )
    if recovery_element:
        section += "\n\t\t" + recovery_element
    return fixture_text(H200_XML).replace(XML_LINE, section)


@pytest.mark.parametrize(("reset", "drain", "expected"), RESET_STATUS)
def test_text_reset_status(reset: str, drain: str, expected: str | None) -> None:
    assert action_of(text_reset_status(reset, drain)) == expected


@pytest.mark.parametrize(("reset", "drain", "expected"), RESET_STATUS)
def test_xml_reset_status(reset: str, drain: str, expected: str | None) -> None:
    assert action_of(xml_reset_status(reset, drain)) == expected


@pytest.mark.parametrize(("reset", "drain", "expected"), RESET_STATUS)
def test_csv_reset_status(reset: str, drain: str, expected: str | None) -> None:
    text = "\n".join(
        [
            "index, pci.bus_id, reset_status.reset_required, "
            "reset_status.drain_and_reset_recommended",
            f"0, 00000000:00:06.0, {reset}, {drain}",
        ]
    )
    assert action_of(text) == expected


def test_the_recovery_action_wins_over_a_deprecated_reset_status() -> None:
    deprecated = "Requested functionality has been deprecated"
    line = TEXT_LINE.removesuffix("None") + "Reset\n"
    assert action_of(text_reset_status(deprecated, deprecated, line)) == "GPU Reset Required"
    element = "<gpu_recovery_action>None</gpu_recovery_action>"
    assert action_of(xml_reset_status(deprecated, deprecated, element)) == "None"


def test_values_helpers() -> None:
    assert v.to_recovery_action("  drain   and reset ") == "Drain and Reset"
    assert v.to_recovery_action("[Unknown Error]") is None
    assert v.recovery_from_reset_status(None, None) is None
    assert v.recovery_action(None, "Yes", None) == "GPU Reset Required"


# --- merging ----------------------------------------------------------------------------------


def test_merging_keeps_the_reported_action() -> None:
    node = parse_outputs(
        [
            ("nvidia-smi -q -x", xml_with("Reset")),
            ("nvidia-smi --query-gpu", fixture_text(H200_CSV)),
        ]
    )
    assert node["gpus"][0]["recovery_action"] == "GPU Reset Required"


def test_a_stored_gpu_without_the_field_merges_and_is_judged() -> None:
    stored = new_gpu(index=0, uuid="GPU-1")
    del stored["recovery_action"]
    merged = merge_nodes([new_node(gpus=[stored])])
    assert merged["gpus"][0].get("recovery_action") is None
    health = assess_node(merged, rules=[gpu_rule(recovery_rule)])
    assert health.health["verdict"] == "healthy" and health.conclusive == 0


# --- the rule ---------------------------------------------------------------------------------


def only(action: str | None) -> NodeFacts:
    return good_node(gpus=[good_gpu(0, recovery_action=action)])


@pytest.mark.parametrize(
    ("action", "verdict", "code"),
    [
        ("GPU Reset Required", "failed", "recovery_gpu_reset"),
        ("Node Reboot Required", "failed", "recovery_node_reboot"),
        ("Drain P2P", "degraded", "recovery_drain_p2p"),
        ("Drain and Reset", "degraded", "recovery_drain_and_reset"),
        ("Recover IMEX Domain", "degraded", "recovery_action_unknown"),
    ],
)
def test_the_rule(action: str, verdict: str, code: str) -> None:
    health = judge_node(only(action))
    gpu = health["gpus"][0]
    assert health["verdict"] == verdict and gpu["verdict"] == verdict
    assert [(p["code"], p["severity"], p["value"]) for p in gpu["problems"]] == [
        (code, verdict, action)
    ]
    assert action in gpu["problems"][0]["message"]
    assert gpu["could_not_check"] == []


def test_none_is_a_pass_and_not_reported_is_nothing() -> None:
    for action in ("None", None):
        health = judge_node(only(action))
        assert health["verdict"] == "healthy"
        assert health["gpus"][0]["problems"] == [] and health["gpus"][0]["could_not_check"] == []
    checked = assess_node(only("None"), rules=[gpu_rule(recovery_rule)])
    unreported = assess_node(only(None), rules=[gpu_rule(recovery_rule)])
    assert checked.conclusive == 1 and unreported.conclusive == 0


def test_the_rule_on_parsed_text() -> None:
    health = judge_node(parse_output(text_with("Reboot")))
    assert health["verdict"] == "failed"
    assert [p["code"] for p in health["gpus"][0]["problems"]] == ["recovery_node_reboot"]
    older = judge_node(parse_output(text_reset_status("No", "Yes")))
    assert [p["code"] for p in older["gpus"][0]["problems"]] == ["recovery_drain_and_reset"]


@pytest.mark.parametrize(
    "outputs",
    [
        [("nvidia-smi -q -x", H200_XML), ("nvidia-smi -q", H200_TEXT)],
        [("capture", H100_CAPTURE)],
        [("capture", L40S_CAPTURE)],
    ],
)
def test_nodes_whose_captures_say_none_stay_healthy(outputs: list[tuple[str, str]]) -> None:
    node = parse_outputs([(name, fixture_text(relative)) for name, relative in outputs])
    assert [gpu["recovery_action"] for gpu in node["gpus"]] == ["None"]
    health = judge_node(node)
    assert health["verdict"] == "healthy"
    assessment = assess_node(node, rules=[gpu_rule(recovery_rule)])
    assert assessment.conclusive == 1 and assessment.health["verdict"] == "healthy"
    result = run_check("all_gpus_healthy", {"allow_degraded": False}, [node])
    assert result["status"] != "failed"


def test_a_node_needing_a_reset_fails_all_gpus_healthy() -> None:
    node = parse_output(xml_with("Reset"))
    result = run_check("all_gpus_healthy", {"allow_degraded": True}, [node])
    assert result["status"] == "failed"
