"""Health from nvidia-smi's notices about a troubled GPU: a corrupted infoROM degrades the GPU it
names, a GPU nvidia-smi cannot reach fails the node. The facts are read by the parsers from the
H200 `--query-gpu` capture (its GPU sits at 00000000:00:06.0) with the notices where nvidia-smi
prints them, so the bus ids are compared as the parsers leave them."""

from typing import Any

from poc.probes.facts import NodeFacts
from poc.probes.parsers import parse_output, parse_outputs
from poc.probes.rules.health import (
    assess_node,
    bus_key,
    fully_checked,
    inforom,
    judge_node,
    node_rule,
    unreachable_gpus,
)
from tests.probes.gpu_fixtures import DMESG_XID_79, H200_CSV, fixture_text

INFOROM_H200 = "WARNING: infoROM is corrupted at gpu 0000:00:06.0"
INFOROM_ELSEWHERE = "WARNING: infoROM is corrupted at gpu 0000:3B:00.0"
LOST = "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"
# The R470-era wording: no space after "GPU", and the driver's advice after the error.
LOST_NO_SPACE = (
    "Unable to determine the device handle for GPU0000:86:00.0: GPU is lost.  "
    "Reboot the system to recover this GPU"
)


def h200_csv(*notices: str) -> NodeFacts:
    """The H200 --query-gpu capture with notices printed before it, read by the parsers."""
    return parse_output("\n".join([*notices, fixture_text(H200_CSV)]))


def lost_csv(*lines: str) -> NodeFacts:
    """Two GPUs read by --query-gpu, with `lines` where the third GPU's row would be."""
    return parse_output(
        "\n".join(
            [
                "index, pci.bus_id, memory.total [MiB]",
                "0, 00000000:1A:00.0, 40960 MiB",
                *lines,
                "2, 00000000:5D:00.0, 40960 MiB",
            ]
        )
    )


def codes(problems: list[Any]) -> list[str]:
    return [problem["code"] for problem in problems]


def test_bus_ids_of_notices_and_facts_name_the_same_gpu() -> None:
    assert bus_key("0000:3B:00.0") == bus_key("00000000:3b:00.0") == (0, 0x3B, 0, 0)
    assert bus_key("0000:3B:00.1") != bus_key("00000000:3B:00.0")
    assert bus_key("GPU is lost") is None and bus_key(None) is None


# --- infoROM ------------------------------------------------------------------------------------


def test_a_corrupted_inforom_degrades_the_gpu_it_names() -> None:
    facts = h200_csv(INFOROM_H200)
    assert facts["gpus"][0]["pci_bus_id"] == "00000000:00:06.0"  # 8-digit domain in the facts
    health = judge_node(facts)

    assert health["problems"] == []
    gpu = health["gpus"][0]
    assert gpu["verdict"] == "degraded"
    (problem,) = [p for p in gpu["problems"] if p["code"] == "inforom_corrupted"]
    assert problem["severity"] == "degraded" and problem["gpu_index"] == 0
    assert problem["value"] == "0000:00:06.0"
    assert "0000:00:06.0" in problem["message"] and "infoROM" in problem["message"]
    assert "reflashed" in problem["message"]


def test_a_corrupted_inforom_of_a_gpu_not_in_the_facts_stays_with_the_node() -> None:
    health = judge_node(h200_csv(INFOROM_ELSEWHERE))

    (problem,) = health["problems"]
    assert problem["code"] == "inforom_corrupted" and problem["gpu_index"] is None
    assert "0000:3B:00.0" in problem["message"]
    assert health["verdict"] == "degraded"
    assert "inforom_corrupted" not in codes(health["gpus"][0]["problems"])


def test_the_same_notice_from_several_outputs_is_one_problem() -> None:
    facts = parse_outputs(
        [
            ("nvidia-smi --query-gpu", f"{INFOROM_H200}\n{fixture_text(H200_CSV)}"),
            # The same notice with the driver's 8-digit domain.
            (
                "nvidia-smi -L",
                "WARNING: infoROM is corrupted at gpu 00000000:00:06.0\n"
                "GPU 0: NVIDIA H200 (UUID: GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e)\n",
            ),
        ]
    )
    gpu = judge_node(facts)["gpus"][0]

    assert codes(gpu["problems"]).count("inforom_corrupted") == 1


def test_output_without_an_inforom_notice_is_fine_but_proves_nothing() -> None:
    """Not every output keeps the notices: their absence is no finding, and no unknown."""
    facts = h200_csv()
    assessment = assess_node(facts, rules=[node_rule(inforom)])

    assert assessment.health["verdict"] == "healthy" and fully_checked(assessment.health)
    assert assessment.conclusive == 0
    assert "inforom_corrupted" not in codes(judge_node(facts)["gpus"][0]["problems"])


# --- a GPU nvidia-smi cannot reach --------------------------------------------------------------


def test_a_gpu_nvidia_smi_cannot_reach_fails_the_node_with_its_bus_and_error() -> None:
    facts = lost_csv(LOST)
    health = judge_node(facts)

    assert health["verdict"] == "failed"
    (problem,) = [p for p in health["problems"] if p["code"] == "gpu_unreachable"]
    assert problem["severity"] == "failed" and problem["gpu_index"] is None
    assert problem["value"] == "0000:3B:00.0"
    assert "0000:3B:00.0" in problem["message"] and "Unknown Error" in problem["message"]
    assert "Xid 79" in problem["message"]
    # The GPUs nvidia-smi did read are not blamed for it.
    assert [gpu["verdict"] for gpu in health["gpus"]] == ["healthy", "healthy"]


def test_the_wording_without_a_space_after_gpu_is_read() -> None:
    health = judge_node(lost_csv(LOST_NO_SPACE))

    (problem,) = [p for p in health["problems"] if p["code"] == "gpu_unreachable"]
    assert problem["value"] == "0000:86:00.0"
    assert "GPU is lost" in problem["message"] and "Reboot the system" in problem["message"]


def test_an_unreachable_gpu_the_facts_still_list_takes_the_problem() -> None:
    # nvidia-smi lost the H200 after an earlier output had read it.
    facts = h200_csv("Unable to determine the device handle for GPU 0000:00:06.0: Unknown Error")
    health = judge_node(facts)

    assert health["verdict"] == "failed"
    assert health["gpus"][0]["verdict"] == "failed"
    assert "gpu_unreachable" in codes(health["gpus"][0]["problems"])


def test_output_with_every_gpu_reachable_is_fine_but_proves_nothing() -> None:
    facts = lost_csv()
    assessment = assess_node(facts, rules=[node_rule(unreachable_gpus)])

    assert assessment.health["verdict"] == "healthy" and fully_checked(assessment.health)
    assert assessment.conclusive == 0
    assert "gpu_unreachable" not in codes(judge_node(facts)["problems"])


def test_a_notice_is_a_conclusion() -> None:
    assessment = assess_node(lost_csv(LOST), rules=[node_rule(unreachable_gpus)])

    assert assessment.conclusive == 1 and assessment.health["verdict"] == "failed"


# --- without nvidia-smi output ------------------------------------------------------------------


def test_without_nvidia_smi_output_nothing_is_found_or_listed() -> None:
    facts = parse_outputs([("dmesg", fixture_text(DMESG_XID_79))])
    assessment = assess_node(facts, rules=[node_rule(inforom), node_rule(unreachable_gpus)])

    assert assessment.conclusive == 0
    assert assessment.health["problems"] == [] and assessment.health["could_not_check"] == []
