"""Health from what the kernel log says beyond GPU Xids: NVSwitch errors (SXid) judge the node's
fabric by their severity, a GPU the driver could not initialise fails the node, and Xid 154 counts
as the recovery action it names."""

from typing import Any

import pytest

from poc.probes.facts import NodeFacts, new_gpu, new_node
from poc.probes.parsers import parse_output, parse_outputs
from poc.probes.parsers.kernel_log import parse_kernel_log
from poc.probes.rules import xid
from poc.probes.rules.checks import run_check
from poc.probes.rules.health import (
    assess_node,
    gpu_init_failures,
    judge_node,
    node_rule,
    nvswitch_errors,
)
from tests.probes.gpu_fixtures import H200_CSV, fixture_text

# NVSwitch errors as the nvswitch driver logs them on an HGX node: the first line of an error
# names its severity, the next ones (same code) its engine and data.
NON_FATAL = [
    "[ 5212.345678] nvidia-nvswitch2: SXid (PCI:0000:08:00.0): 12028, Non-fatal, Link 43 "
    "egress non-posted PRIV error (First)",
    "[ 5212.345680] nvidia-nvswitch2: SXid (PCI:0000:08:00.0): 12028, Severity 0 Engine "
    "instance 43 Sub-engine instance 00",
]
FATAL = [
    "[ 5300.000001] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 30 "
    "LTSSM Fault Up",
    "[ 5300.000002] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Severity 1 Engine "
    "instance 30 Sub-engine instance 00",
    "[ 5300.000003] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Data {0x00000000, "
    "0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000}",
]
NO_SEVERITY = ["[ 5400.000000] nvidia-nvswitch1: SXid (PCI:0000:07:00.0): 11004, Data {0x1}"]
INIT_FAILED = [
    "Dec  1 09:14:37 node01 kernel: NVRM: GPU 0000:39:00.0: RmInitAdapter failed! (0x62:0x65:2511)",
    "Dec  1 09:14:39 node01 kernel: NVRM: GPU 0000:39:00.0: RmInitAdapter failed! (0x62:0x65:2511)",
]
INIT_FAILED_UNNAMED = ["[  231.105710] NVRM: RmInitAdapter failed! (0x30:0xffffffff:812)"]
QUIET_LOG = (
    "[    0.000000] Linux version 6.8.0-45-generic\n"
    "[    1.000000] nvidia: loading out-of-tree module\n"
)


def log(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def codes(problems: list[dict[str, Any]]) -> list[str]:
    return [problem["code"] for problem in problems]


def node_problems(facts: NodeFacts, code: str) -> list[dict[str, Any]]:
    return [dict(p) for p in judge_node(facts)["problems"] if p["code"] == code]


# --- the facts --------------------------------------------------------------------------------


def test_the_kernel_log_parser_fills_the_switch_errors_as_facts() -> None:
    node = parse_kernel_log(log(*NON_FATAL, *FATAL))

    assert node["sxid_events"] == [
        {
            "switch_bus_id": "PCI:0000:08:00.0",
            "code": 12028,
            "severity": "Non-fatal",
            "timestamp": "5212.345678",
            "lines": 2,
            "message": "Link 43 egress non-posted PRIV error (First)",
        },
        {
            "switch_bus_id": "PCI:0000:06:00.0",
            "code": 20034,
            "severity": "Fatal",
            "timestamp": "5300.000001",
            "lines": 3,
            "message": "Link 30 LTSSM Fault Up",
        },
    ]
    # The warnings stay, as pages and stored runs show them.
    assert sum("NVSwitch SXid" in w for w in node["warnings"]) == 2


def test_the_kernel_log_parser_fills_the_gpus_it_could_not_initialise() -> None:
    node = parse_kernel_log(log(*INIT_FAILED, *INIT_FAILED_UNNAMED))

    assert node["init_failures"] == [
        {"pci_bus_id": "0000:39:00.0", "detail": "(0x62:0x65:2511)"},
        {"pci_bus_id": None, "detail": "(0x30:0xffffffff:812)"},
    ]
    assert len(node["warnings"]) == 2


def test_a_new_node_has_empty_switch_errors_and_init_failures() -> None:
    node = new_node()

    assert node["sxid_events"] == [] and node["init_failures"] == []


# --- NVSwitch errors ----------------------------------------------------------------------------


def test_a_fatal_sxid_fails_the_node_and_a_non_fatal_one_degrades_it() -> None:
    health = judge_node(parse_outputs([("dmesg", log(*NON_FATAL, *FATAL))]))

    assert health["verdict"] == "failed"
    (fatal,) = [p for p in health["problems"] if p["code"] == "sxid_fatal"]
    assert fatal["severity"] == "failed" and fatal["value"] == 20034
    assert fatal["gpu_index"] is None
    assert "PCI:0000:06:00.0" in fatal["message"] and "LTSSM Fault Up" in fatal["message"]
    (non_fatal,) = [p for p in health["problems"] if p["code"] == "sxid_non_fatal"]
    assert non_fatal["severity"] == "degraded" and non_fatal["value"] == 12028


def test_a_non_fatal_sxid_alone_degrades_the_node() -> None:
    facts = parse_outputs(
        [("nvidia-smi --query-gpu", fixture_text(H200_CSV)), ("dmesg", log(*NON_FATAL))]
    )
    health = judge_node(facts)

    assert health["verdict"] == "degraded"
    assert codes(health["problems"]) == ["sxid_non_fatal"]


def test_an_sxid_whose_severity_the_log_does_not_name_needs_review() -> None:
    (problem,) = node_problems(parse_outputs([("dmesg", log(*NO_SEVERITY))]), "sxid")

    assert problem["severity"] == "degraded" and problem["value"] == 11004


def test_switch_errors_judged_from_the_facts_alone() -> None:
    # A document holding the structured field but no warning text.
    facts = parse_kernel_log(log(*FATAL))
    facts["warnings"] = []

    # A kernel log lists no GPU: the inventory is unknown, not empty (no "no_gpus").
    assert codes(judge_node(facts)["problems"]) == ["sxid_fatal"]


def test_a_stored_document_without_the_new_fields_is_judged_from_its_warnings() -> None:
    facts = parse_kernel_log(log(*FATAL, *INIT_FAILED))
    del facts["sxid_events"]
    del facts["init_failures"]

    problems = codes(judge_node(facts)["problems"])

    assert "sxid_fatal" in problems and "gpu_init_failed" in problems


def test_each_switch_error_is_one_problem_however_it_is_recorded() -> None:
    # Both the field and the warning hold the same error, and a second log repeats it.
    facts = parse_outputs([("dmesg", log(*FATAL)), ("journalctl -k", log(*FATAL))])
    facts["sxid_events"] = parse_kernel_log(log(*FATAL))["sxid_events"]

    # A kernel log lists no GPU: the inventory is unknown, not empty (no "no_gpus").
    assert codes(judge_node(facts)["problems"]) == ["sxid_fatal"]


def test_a_kernel_log_without_switch_errors_is_a_conclusion() -> None:
    facts = parse_outputs([("dmesg", QUIET_LOG)])
    assessment = assess_node(facts, rules=[node_rule(nvswitch_errors)])

    assert assessment.conclusive == 1 and assessment.health["verdict"] == "healthy"


def test_without_a_kernel_log_the_fabric_rules_do_not_apply() -> None:
    facts = parse_output(fixture_text(H200_CSV))
    rules = [node_rule(nvswitch_errors), node_rule(gpu_init_failures)]
    assessment = assess_node(facts, rules=rules)

    assert assessment.conclusive == 0
    assert assessment.health["problems"] == [] and assessment.health["could_not_check"] == []


# --- GPUs the driver could not initialise -------------------------------------------------------


def test_a_gpu_the_driver_could_not_initialise_fails_the_node() -> None:
    facts = parse_outputs(
        [("nvidia-smi --query-gpu", fixture_text(H200_CSV)), ("dmesg", log(*INIT_FAILED))]
    )
    health = judge_node(facts)

    assert health["verdict"] == "failed"
    (problem,) = [p for p in health["problems"] if p["code"] == "gpu_init_failed"]
    assert problem["severity"] == "failed" and problem["value"] == "0000:39:00.0"
    assert "0000:39:00.0" in problem["message"] and "0x62:0x65:2511" in problem["message"]
    # The GPU nvidia-smi did read is not blamed for it.
    assert [gpu["verdict"] for gpu in health["gpus"]] == ["healthy"]


def test_a_failure_naming_no_gpu_still_fails_the_node() -> None:
    (problem,) = node_problems(
        parse_outputs([("dmesg", log(*INIT_FAILED_UNNAMED))]), "gpu_init_failed"
    )

    assert problem["value"] is None and "a GPU it does not name" in problem["message"]


def test_a_gpu_that_failed_to_initialise_but_is_present_now_is_degraded() -> None:
    # The H200 of the capture sits at 00000000:00:06.0; the log names it in its own spelling.
    line = "[   12.000000] NVRM: GPU 0000:00:06.0: RmInitAdapter failed! (0x26:0xffff:1463)"
    facts = parse_outputs(
        [("nvidia-smi --query-gpu", fixture_text(H200_CSV)), ("dmesg", log(line))]
    )
    health = judge_node(facts)

    assert health["verdict"] == "degraded"
    assert codes(health["gpus"][0]["problems"]) == ["gpu_init_failed_earlier"]


# --- Xid 154: the recovery action it names ------------------------------------------------------


def xid_154(to: str, bus: str = "PCI:0000:3b:00", prefix: str = "[ 100.000000]") -> str:
    return f"{prefix} NVRM: Xid ({bus}): 154, GPU recovery action changed from 0x0 (None) to {to}"


@pytest.mark.parametrize(
    ("to", "severity"),
    [
        ("0x0 (None)", None),
        ("0x1 (GPU Reset Required)", "failed"),
        ("0x2 (Node Reboot Required)", "failed"),
        ("0x3 (Drain P2P)", "degraded"),
        ("0x4 (Drain and Reset)", "degraded"),
        ("0x2", "failed"),  # the number alone
        ("Drain P2P", "degraded"),  # the name alone
        ("0x9 (Something New)", "degraded"),  # a value not known here: needs review
    ],
)
def test_xid_154_counts_as_the_recovery_action_it_names(to: str, severity: str | None) -> None:
    facts = parse_outputs([("dmesg", log(xid_154(to)))])
    problems = [p for p in judge_node(facts)["problems"] if p["code"] == "xid"]

    assert xid.event_severity(154, facts["xid_events"][0]["message"]) == severity
    if severity is None:
        assert problems == []
    else:
        (problem,) = problems
        assert problem["severity"] == severity and problem["value"] == 154


def test_xid_154_names_the_recovery_action_in_its_problem() -> None:
    facts = parse_outputs([("dmesg", log(xid_154("0x2 (Node Reboot Required)")))])
    (problem,) = node_problems(facts, "xid")

    assert "Node Reboot Required" in problem["message"]


def test_a_later_xid_154_back_to_none_supersedes_the_earlier_action() -> None:
    back = (
        "[ 200.000000] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from "
        "0x1 (GPU Reset Required) to 0x0 (None)"
    )
    facts = parse_outputs([("dmesg", log(xid_154("0x1 (GPU Reset Required)"), back))])

    assert node_problems(facts, "xid") == []
    # Another GPU's action is its own.
    other = xid_154("0x3 (Drain P2P)", bus="PCI:0000:5d:00", prefix="[ 300.000000]")
    facts = parse_outputs([("dmesg", log(xid_154("0x1 (GPU Reset Required)"), back, other))])
    (problem,) = node_problems(facts, "xid")
    assert problem["severity"] == "degraded" and "PCI:0000:5d:00" in problem["message"]


def test_the_last_xid_154_of_a_gpu_decides() -> None:
    later = xid_154("0x2 (Node Reboot Required)", prefix="[ 200.000000]")
    facts = parse_outputs([("dmesg", log(xid_154("0x3 (Drain P2P)"), later))])
    (problem,) = node_problems(facts, "xid")

    assert problem["severity"] == "failed" and "2 events" in problem["message"]


def test_an_xid_154_without_an_action_keeps_the_catalogue_verdict() -> None:
    assert xid.event_severity(154, "pid=1, something else") == "degraded"
    assert xid.event_severity(79, "GPU has fallen off the bus.") == "failed"


# --- checks -------------------------------------------------------------------------------------


def test_no_actionable_xid_follows_the_recovery_action() -> None:
    normal = parse_outputs([("dmesg", log(xid_154("0x0 (None)")))])
    reboot = parse_outputs([("dmesg", log(xid_154("0x2 (Node Reboot Required)")))])

    assert run_check("no_actionable_xid", {}, [normal])["status"] == "passed"
    assert run_check("no_actionable_xid", {}, [reboot])["status"] == "failed"


def test_gpu_health_check_fails_on_a_fatal_switch_error() -> None:
    facts = parse_outputs(
        [("nvidia-smi --query-gpu", fixture_text(H200_CSV)), ("dmesg", log(*FATAL))]
    )
    result = run_check("all_gpus_healthy", {"allow_degraded": True}, [facts])

    assert result["status"] == "failed" and "SXid 20034" in result["detail"]


def test_a_non_fatal_switch_error_is_accepted_when_degraded_is() -> None:
    facts = parse_outputs(
        [("nvidia-smi --query-gpu", fixture_text(H200_CSV)), ("dmesg", log(*NON_FATAL))]
    )

    assert run_check("all_gpus_healthy", {"allow_degraded": True}, [facts])["status"] != "failed"
    assert run_check("all_gpus_healthy", {}, [facts])["status"] == "failed"


def test_a_node_with_gpus_in_facts_keeps_them_healthy_beside_switch_errors() -> None:
    facts = new_node(
        gpus=[new_gpu(index=0, pci_bus_id="00000000:3B:00.0")],
        sources=["dmesg"],
        sxid_events=parse_kernel_log(log(*NON_FATAL))["sxid_events"],
    )
    health = judge_node(facts)

    assert codes(health["problems"]) == ["sxid_non_fatal"]
    assert health["gpus"][0]["problems"] == []
