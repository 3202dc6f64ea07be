"""Health rules: for each rule a failing case, a passing case and an unknown input that lands in
could_not_check; then how verdicts combine, and the Xid catalogue."""

import json
from typing import Any

import pytest

from poc.probes.facts import GpuFacts, NodeFacts, new_gpu, new_node
from poc.probes.rules import xid
from poc.probes.rules.health import (
    RULES,
    Findings,
    assess_node,
    fully_checked,
    gpu_rule,
    judge_node,
    worst,
)

ALL_REASONS = (
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
    "sync_boost",
    "display_clock_setting",
)


def good_gpu(index: int = 0, **values: Any) -> GpuFacts:
    """An H200 SXM with every health fact reported, and nothing wrong."""
    facts: dict[str, Any] = {
        "index": index,
        "uuid": f"GPU-{index:04d}",
        "name": "NVIDIA H200",
        "pci_device_id": "0x2335",
        "persistence_mode": True,
        "mig_mode_current": False,
        "ecc_mode_current": True,
        "ecc_mode_pending": True,
        "ecc_volatile_corrected": 0,
        "ecc_volatile_uncorrected": 0,
        "ecc_aggregate_corrected": 12,
        "ecc_aggregate_uncorrected": 0,
        "remapped_rows_correctable": 0,
        "remapped_rows_uncorrectable": 0,
        "remapped_rows_pending": False,
        "remapped_rows_failure": False,
        "pcie_gen_current": 5,
        "pcie_gen_max": 5,
        "pcie_width_current": 16,
        "pcie_width_max": 16,
        "clock_event_reasons": {reason: False for reason in ALL_REASONS},
        "fabric_state": "Completed",
        "fabric_status": "Success",
        "nvlink_links": [
            {
                "link": link,
                "active": True,
                "speed_gbps": 26.562,
                "errors": {"replay_errors": 0, "recovery_errors": 0, "crc_errors": 0},
            }
            for link in range(18)
        ],
    }
    facts.update(values)
    return new_gpu(**facts)


def good_node(count: int = 8, **values: Any) -> NodeFacts:
    """A node of `count` good GPUs (or `gpus`) whose every check can be made, and passes."""
    gpus = values.pop("gpus") if "gpus" in values else [good_gpu(i) for i in range(count)]
    facts: dict[str, Any] = {
        "host": "node-a",
        "driver_version": "580.159.04",
        "cuda_version": "13.0",
        "gpus": gpus,
        "expected_gpu_count": len(gpus),
        "sources": [
            "nvidia-smi -q -x",
            "nvidia-smi nvlink -s",
            "nvidia-smi nvlink -e",
            "kernel log",
        ],
        "dcgm": [
            {"name": "memory", "category": "Hardware", "result": "Pass", "gpu_index": 0, "info": ""}
        ],
    }
    facts.update(values)
    return new_node(**facts)


def one_gpu(**values: Any) -> NodeFacts:
    """A node of one GPU, good except for `values`."""
    return good_node(gpus=[good_gpu(0, **values)])


def codes(items: list[Any]) -> list[str]:
    return [item["code"] for item in items]


def gpu0(facts: NodeFacts) -> Any:
    return judge_node(facts)["gpus"][0]


# --- the baseline -------------------------------------------------------------------------------


def test_a_node_with_everything_reported_and_fine_is_healthy_and_fully_checked() -> None:
    health = judge_node(good_node())

    assert health["verdict"] == "healthy"
    assert health["problems"] == [] and health["could_not_check"] == []
    assert [gpu["verdict"] for gpu in health["gpus"]] == ["healthy"] * 8
    assert [gpu["index"] for gpu in health["gpus"]] == list(range(8))
    assert health["gpus"][3]["uuid"] == "GPU-0003"
    assert fully_checked(health) is True


def test_a_gpu_with_nothing_reported_is_healthy_in_verdict_only_and_not_fully_checked() -> None:
    # The rule: the verdict is about problems found; what could not be checked is listed, and
    # fully_checked() says that "healthy" here proves nothing.
    facts = new_node(gpus=[new_gpu(index=0)])
    assessment = assess_node(facts)

    assert assessment.health["verdict"] == "healthy"
    assert fully_checked(assessment.health) is False
    assert assessment.conclusive == 0
    assert set(codes(assessment.health["gpus"][0]["could_not_check"])) == {
        "ecc_mode",
        "ecc_errors",
        "remapped_rows",
        "retired_pages",
        "pcie_width",
        "pcie_gen",
        "clock_event_reasons",
    }
    assert set(codes(assessment.health["could_not_check"])) == {
        "gpu_count",
        "xid",
        "dcgm",
        "nvlink",
    }


def test_the_document_is_plain_json() -> None:
    facts = one_gpu(ecc_volatile_uncorrected=2)
    facts["xid_events"] = [
        {"code": 79, "pci_bus_id": "0000:ca:00", "gpu_index": 0, "message": "", "timestamp": None}
    ]
    health = judge_node(facts)

    assert json.loads(json.dumps(health)) == health


# --- ECC --------------------------------------------------------------------------------------


def test_ecc_disabled_is_degraded_and_its_counters_are_unknown() -> None:
    gpu = gpu0(
        one_gpu(ecc_mode_current=False, ecc_mode_pending=False, ecc_volatile_uncorrected=None)
    )

    assert gpu["verdict"] == "degraded"
    [problem] = gpu["problems"]
    assert problem["code"] == "ecc_disabled" and problem["value"] is False
    assert problem["gpu_index"] == 0
    [unknown] = gpu["could_not_check"]
    assert unknown["code"] == "ecc_errors" and "disabled" in unknown["reason"]


def test_ecc_disabled_but_pending_says_so() -> None:
    gpu = gpu0(one_gpu(ecc_mode_current=False, ecc_mode_pending=True))

    assert "next GPU reset" in gpu["problems"][0]["message"]


def test_ecc_mode_unknown_lands_in_could_not_check() -> None:
    gpu = gpu0(one_gpu(ecc_mode_current=None))

    assert gpu["verdict"] == "healthy"
    assert codes(gpu["could_not_check"]) == ["ecc_mode"]


def test_uncorrected_ecc_errors_since_driver_load_fail_the_gpu() -> None:
    gpu = gpu0(one_gpu(ecc_volatile_uncorrected=2, ecc_aggregate_uncorrected=2))

    assert gpu["verdict"] == "failed"
    [problem] = gpu["problems"]
    assert problem["code"] == "ecc_uncorrected_volatile"
    assert problem["severity"] == "failed" and problem["value"] == 2
    assert "2 uncorrected ECC errors" in problem["message"]


def test_uncorrected_ecc_errors_only_in_the_lifetime_count_degrade_the_gpu() -> None:
    gpu = gpu0(one_gpu(ecc_volatile_uncorrected=0, ecc_aggregate_uncorrected=3))

    assert gpu["verdict"] == "degraded"
    assert [(p["code"], p["value"]) for p in gpu["problems"]] == [("ecc_uncorrected_aggregate", 3)]


def test_corrected_ecc_errors_are_not_a_problem() -> None:
    assert gpu0(one_gpu(ecc_volatile_corrected=500, ecc_aggregate_corrected=9000))["problems"] == []


def test_unknown_ecc_error_count_lands_in_could_not_check() -> None:
    gpu = gpu0(one_gpu(ecc_volatile_uncorrected=None, ecc_aggregate_uncorrected=None))

    assert gpu["verdict"] == "healthy"
    assert codes(gpu["could_not_check"]) == ["ecc_errors"]


# --- remapped rows and retired pages ----------------------------------------------------------


def test_a_row_remapping_failure_fails_the_gpu() -> None:
    gpu = gpu0(one_gpu(remapped_rows_failure=True))

    assert gpu["verdict"] == "failed"
    assert codes(gpu["problems"]) == ["remapped_rows_failure"]


def test_a_pending_row_remapping_degrades_the_gpu() -> None:
    gpu = gpu0(one_gpu(remapped_rows_pending=True))

    assert gpu["verdict"] == "degraded"
    assert codes(gpu["problems"]) == ["remapped_rows_pending"]
    assert "reset" in gpu["problems"][0]["message"]


def test_rows_remapped_after_uncorrectable_errors_degrade_the_gpu() -> None:
    gpu = gpu0(one_gpu(remapped_rows_uncorrectable=2, remapped_rows_correctable=7))

    assert [(p["code"], p["severity"], p["value"]) for p in gpu["problems"]] == [
        ("remapped_rows_uncorrectable", "degraded", 2)
    ]


def test_rows_remapped_after_correctable_errors_only_are_fine() -> None:
    assert gpu0(one_gpu(remapped_rows_correctable=7))["problems"] == []


def test_unknown_row_remapping_on_a_gpu_without_retired_pages_is_listed() -> None:
    gpu = gpu0(
        one_gpu(
            remapped_rows_correctable=None,
            remapped_rows_uncorrectable=None,
            remapped_rows_pending=None,
            remapped_rows_failure=None,
        )
    )

    assert gpu["verdict"] == "healthy"
    assert codes(gpu["could_not_check"]) == ["remapped_rows", "retired_pages"]


def test_a_partial_row_remapping_report_lists_what_is_missing() -> None:
    gpu = gpu0(one_gpu(remapped_rows_failure=None))

    assert codes(gpu["could_not_check"]) == ["remapped_rows"]


def pre_ampere(**values: Any) -> NodeFacts:
    """A GPU that retires pages (V100): no row remapping."""
    facts: dict[str, Any] = {
        "name": "Tesla V100-SXM2-32GB",
        "remapped_rows_correctable": None,
        "remapped_rows_uncorrectable": None,
        "remapped_rows_pending": None,
        "remapped_rows_failure": None,
        "retired_pages_single_bit": 0,
        "retired_pages_double_bit": 0,
        "retired_pages_pending": False,
    }
    facts.update(values)
    return one_gpu(**facts)


def test_a_gpu_that_retires_pages_is_not_asked_for_row_remapping() -> None:
    gpu = gpu0(pre_ampere())

    assert gpu["problems"] == [] and gpu["could_not_check"] == []


def test_retired_pages_at_the_limit_of_64_fail_the_gpu() -> None:
    gpu = gpu0(pre_ampere(retired_pages_single_bit=40, retired_pages_double_bit=24))

    assert gpu["verdict"] == "failed"
    [problem] = gpu["problems"]
    assert problem["code"] == "retired_pages_limit" and problem["value"] == 64


def test_retired_pages_below_the_limit_do_not_fail_the_gpu() -> None:
    gpu = gpu0(pre_ampere(retired_pages_single_bit=40, retired_pages_double_bit=23))

    assert gpu["verdict"] == "degraded"  # double-bit retirements are worth a look, not a failure
    assert codes(gpu["problems"]) == ["retired_pages_double_bit"]


def test_single_bit_retirements_alone_are_fine() -> None:
    assert gpu0(pre_ampere(retired_pages_single_bit=10))["problems"] == []


def test_pages_pending_retirement_degrade_the_gpu() -> None:
    gpu = gpu0(pre_ampere(retired_pages_pending=True))

    assert gpu["verdict"] == "degraded"
    assert codes(gpu["problems"]) == ["retired_pages_pending"]


def test_an_unknown_retired_page_count_lands_in_could_not_check() -> None:
    gpu = gpu0(pre_ampere(retired_pages_single_bit=None))

    assert gpu["problems"] == []
    assert codes(gpu["could_not_check"]) == ["retired_pages"]


# --- PCIe -------------------------------------------------------------------------------------


def test_a_narrower_pcie_link_degrades_the_gpu_even_when_idle() -> None:
    reasons = {reason: False for reason in ALL_REASONS} | {"gpu_idle": True}
    gpu = gpu0(one_gpu(pcie_width_current=8, clock_event_reasons=reasons))

    assert gpu["verdict"] == "degraded"
    [problem] = gpu["problems"]
    assert problem["code"] == "pcie_width_reduced" and problem["value"] == 8
    assert "x8 of x16" in problem["message"]


def test_a_slower_pcie_generation_on_a_busy_gpu_degrades_it() -> None:
    gpu = gpu0(one_gpu(pcie_gen_current=4))

    assert [(p["code"], p["value"]) for p in gpu["problems"]] == [("pcie_gen_reduced", 4)]
    assert "Gen 4 of Gen 5" in gpu["problems"][0]["message"]


def test_a_slower_pcie_generation_on_an_idle_gpu_is_power_saving() -> None:
    reasons = {reason: False for reason in ALL_REASONS} | {"gpu_idle": True}
    gpu = gpu0(one_gpu(pcie_gen_current=1, clock_event_reasons=reasons))

    assert gpu["problems"] == [] and gpu["could_not_check"] == []


def test_a_slower_pcie_generation_with_idleness_unknown_is_not_judged() -> None:
    reasons = {reason: False for reason in ALL_REASONS if reason != "gpu_idle"}
    gpu = gpu0(one_gpu(pcie_gen_current=1, clock_event_reasons=reasons))

    assert gpu["problems"] == []
    [unknown] = gpu["could_not_check"]
    assert unknown["code"] == "pcie_gen" and "Gen 1 of Gen 5" in unknown["reason"]


def test_unknown_pcie_link_lands_in_could_not_check() -> None:
    gpu = gpu0(one_gpu(pcie_gen_max=None, pcie_width_current=None))

    assert gpu["problems"] == []
    assert codes(gpu["could_not_check"]) == ["pcie_width", "pcie_gen"]


# --- clock event reasons ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "reason",
    ["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"],
)
def test_an_active_slowdown_degrades_the_gpu(reason: str) -> None:
    reasons = {name: False for name in ALL_REASONS} | {reason: True}
    gpu = gpu0(one_gpu(clock_event_reasons=reasons))

    assert gpu["verdict"] == "degraded"
    [problem] = gpu["problems"]
    assert problem["code"] == f"clock_{reason}" and problem["value"] == reason


def test_idle_power_cap_and_application_clocks_are_normal_operation() -> None:
    reasons = {name: False for name in ALL_REASONS} | {
        "gpu_idle": True,
        "sw_power_cap": True,
        "applications_clocks_setting": True,
        "sync_boost": True,
    }

    assert gpu0(one_gpu(clock_event_reasons=reasons))["problems"] == []


def test_unreported_clock_event_reasons_land_in_could_not_check() -> None:
    gpu = gpu0(one_gpu(clock_event_reasons={"gpu_idle": True, "hw_slowdown": False}))

    [unknown] = gpu["could_not_check"]
    assert unknown["code"] == "clock_event_reasons"
    assert "hw_thermal_slowdown" in unknown["reason"] and "hw_slowdown," not in unknown["reason"]


# --- fabric -----------------------------------------------------------------------------------


def test_a_fabric_not_completed_degrades_the_gpu() -> None:
    gpu = gpu0(one_gpu(fabric_state="In Progress", fabric_status=None))

    assert [(p["code"], p["severity"], p["value"]) for p in gpu["problems"]] == [
        ("fabric_not_completed", "degraded", "In Progress")
    ]


def test_a_fabric_error_fails_the_gpu() -> None:
    gpu = gpu0(one_gpu(fabric_state="Completed", fabric_status="NV_ERR_INSUFFICIENT_RESOURCES"))

    assert gpu["verdict"] == "failed"
    assert [(p["code"], p["value"]) for p in gpu["problems"]] == [
        ("fabric_error", "NV_ERR_INSUFFICIENT_RESOURCES")
    ]


def test_a_gpu_without_a_fabric_is_not_judged_on_it() -> None:
    gpu = gpu0(one_gpu(fabric_state="Not Supported", fabric_status=None, nvlink_links=[]))
    also = gpu0(one_gpu(fabric_state=None, fabric_status=None, nvlink_links=[]))

    assert gpu["problems"] == [] and gpu["could_not_check"] == []
    assert also["problems"] == [] and also["could_not_check"] == []


def test_an_unreported_fabric_state_on_an_nvlink_gpu_lands_in_could_not_check() -> None:
    gpu = gpu0(one_gpu(fabric_state=None, fabric_status=None))

    assert codes(gpu["could_not_check"]) == ["fabric"]


# --- NVLink -----------------------------------------------------------------------------------


def links(active: int, total: int = 18, **errors: int) -> list[dict[str, Any]]:
    counters = {"replay_errors": 0, "recovery_errors": 0, "crc_errors": 0} | errors
    return [
        {
            "link": n,
            "active": n < active,
            "speed_gbps": 26.562 if n < active else None,
            "errors": counters,
        }
        for n in range(total)
    ]


def test_some_inactive_nvlink_links_degrade_the_gpu() -> None:
    gpu = gpu0(one_gpu(nvlink_links=links(active=16)))

    [problem] = gpu["problems"]
    assert problem["code"] == "nvlink_inactive" and problem["value"] == 2
    assert "links 16, 17" in problem["message"]


def test_all_links_inactive_is_not_judged_a_bridge_may_be_missing() -> None:
    gpu = gpu0(one_gpu(nvlink_links=links(active=0, total=12)))

    assert gpu["problems"] == []


def test_nvlink_error_counters_above_zero_degrade_the_gpu() -> None:
    gpu = gpu0(one_gpu(nvlink_links=links(active=18, crc_errors=3)))

    [problem] = gpu["problems"]
    assert problem["code"] == "nvlink_errors" and problem["value"] == 3 * 18
    assert "crc_errors 54" in problem["message"]


def test_nvlink_packet_counters_are_not_errors() -> None:
    gpu = gpu0(one_gpu(nvlink_links=links(active=18, tx_packets=10**9)))

    assert gpu["problems"] == []


def test_unread_nvlink_error_counters_land_in_could_not_check() -> None:
    bare = [{**link, "errors": {}} for link in links(active=18)]
    gpu = gpu0(one_gpu(nvlink_links=bare))

    assert codes(gpu["could_not_check"]) == ["nvlink_errors"]


def test_unread_nvlink_status_lands_in_could_not_check_on_the_node() -> None:
    facts = good_node(
        gpus=[good_gpu(0, nvlink_links=[], fabric_state=None, fabric_status=None)],
        sources=["nvidia-smi -q -x", "kernel log"],
    )
    health = judge_node(facts)

    assert codes(health["could_not_check"]) == ["nvlink"]
    assert health["gpus"][0]["could_not_check"] == []


def test_counters_without_status_do_not_count_links_as_down() -> None:
    # nvlink -e alone: every link reads "not active", which says nothing about the link.
    counters_only = [{**link, "active": False, "speed_gbps": None} for link in links(active=18)]
    facts = good_node(
        gpus=[good_gpu(0, nvlink_links=counters_only)],
        sources=["nvidia-smi -q -x", "nvidia-smi nvlink -e", "kernel log"],
    )
    health = judge_node(facts)

    assert health["gpus"][0]["problems"] == []
    assert codes(health["could_not_check"]) == ["nvlink"]


def test_a_node_read_for_nvlink_without_links_has_nothing_unknown() -> None:
    facts = good_node(gpus=[good_gpu(0, nvlink_links=[], fabric_state="Not Supported")])

    assert fully_checked(judge_node(facts)) is True


# --- GPU count --------------------------------------------------------------------------------


def test_fewer_gpus_than_expected_fail_the_node() -> None:
    facts = good_node(6, expected_gpu_count=8)
    health = judge_node(facts)

    assert health["verdict"] == "failed"
    [problem] = health["problems"]
    assert problem == {
        "code": "fewer_gpus",
        "severity": "failed",
        "gpu_index": None,
        "value": 6,
        "message": "6 GPUs found, 8 expected",
    }
    assert all(gpu["verdict"] == "healthy" for gpu in health["gpus"])


def test_no_gpu_at_all_fails_the_node() -> None:
    health = judge_node(good_node(0, expected_gpu_count=None, dcgm=[]))

    assert health["verdict"] == "failed"
    assert codes(health["problems"]) == ["no_gpus"]


def test_as_many_gpus_as_expected_is_fine() -> None:
    assert judge_node(good_node(4))["problems"] == []


def test_no_expected_gpu_count_lands_in_could_not_check() -> None:
    health = judge_node(good_node(4, expected_gpu_count=None))

    assert health["verdict"] == "healthy"
    assert codes(health["could_not_check"]) == ["gpu_count"]


# --- Xid --------------------------------------------------------------------------------------


def event(code: int, gpu_index: int | None = 0, bus: str | None = "0000:3b:00") -> dict[str, Any]:
    return {
        "code": code,
        "pci_bus_id": bus,
        "gpu_index": gpu_index,
        "message": "",
        "timestamp": None,
    }


def test_xid_79_fails_the_gpu_it_names() -> None:
    health = judge_node(good_node(xid_events=[event(79, gpu_index=3)]))

    assert health["verdict"] == "failed"
    assert health["problems"] == []
    gpu3 = health["gpus"][3]
    assert gpu3["verdict"] == "failed"
    [problem] = gpu3["problems"]
    assert problem["code"] == "xid" and problem["value"] == 79 and problem["gpu_index"] == 3
    assert "GPU has fallen off the bus" in problem["message"] and "RESTART_BM" in problem["message"]
    assert [gpu["verdict"] for i, gpu in enumerate(health["gpus"]) if i != 3] == ["healthy"] * 7


def test_an_xid_without_a_gpu_stays_with_the_node_and_names_the_bus() -> None:
    health = judge_node(good_node(xid_events=[event(48, gpu_index=None, bus="0000:ca:00")]))

    [problem] = health["problems"]
    assert problem["gpu_index"] is None and problem["severity"] == "failed"
    assert "0000:ca:00" in problem["message"]
    assert health["verdict"] == "failed"


def test_an_xid_naming_a_gpu_the_node_does_not_list_stays_with_the_node() -> None:
    health = judge_node(good_node(2, xid_events=[event(79, gpu_index=7)]))

    [problem] = health["problems"]
    assert problem["gpu_index"] == 7


def test_repeated_xids_are_one_problem_with_their_count() -> None:
    facts = one_gpu()
    facts["xid_events"] = [event(94)] * 3  # type: ignore[list-item]
    gpu = gpu0(facts)

    [problem] = gpu["problems"]
    assert problem["severity"] == "degraded" and "3 events" in problem["message"]


def test_application_xids_are_not_a_problem_of_the_node() -> None:
    health = judge_node(good_node(xid_events=[event(13), event(31), event(43), event(63)]))

    assert health["verdict"] == "healthy"
    assert fully_checked(health)


def test_an_xid_code_not_in_the_catalogue_needs_review() -> None:
    health = judge_node(good_node(xid_events=[event(999)]))

    [problem] = health["gpus"][0]["problems"]
    assert problem["code"] == "xid_unknown" and problem["severity"] == "degraded"
    assert problem["value"] == 999 and "needs review" in problem["message"]


def test_an_unread_kernel_log_lands_in_could_not_check() -> None:
    health = judge_node(good_node(sources=["nvidia-smi -q -x", "nvidia-smi nvlink -s"]))

    assert health["verdict"] == "healthy"
    assert codes(health["could_not_check"]) == ["xid"]


def test_a_kernel_log_without_xids_is_checked_and_fine() -> None:
    health = judge_node(good_node(sources=["dmesg", "nvidia-smi nvlink -s"]))

    assert health["could_not_check"] == []


# --- DCGM -------------------------------------------------------------------------------------


def dcgm_test(result: str, gpu_index: int | None = 1, name: str = "memory") -> dict[str, Any]:
    return {
        "name": name,
        "category": "Hardware",
        "result": result,
        "gpu_index": gpu_index,
        "info": "x",
    }


def test_a_failed_dcgm_test_fails_the_gpu_it_names() -> None:
    health = judge_node(good_node(dcgm=[dcgm_test("Pass", 0), dcgm_test("Fail", 1)]))

    assert health["verdict"] == "failed"
    assert [(p["code"], p["value"]) for p in health["gpus"][1]["problems"]] == [
        ("dcgm_fail", "memory")
    ]
    assert health["gpus"][0]["problems"] == []


def test_a_dcgm_warning_degrades_and_a_node_wide_one_stays_with_the_node() -> None:
    health = judge_node(good_node(dcgm=[dcgm_test("Warn", None, "pcie")]))

    assert health["verdict"] == "degraded"
    assert [(p["code"], p["value"]) for p in health["problems"]] == [("dcgm_warn", "pcie")]


def test_passed_dcgm_tests_are_fine() -> None:
    health = judge_node(good_node(dcgm=[dcgm_test("Pass"), dcgm_test("Skip", name="pulse")]))

    assert health["verdict"] == "healthy" and fully_checked(health)


def test_no_dcgm_results_land_in_could_not_check() -> None:
    health = judge_node(good_node(dcgm=[]))

    assert codes(health["could_not_check"]) == ["dcgm"]


def test_dcgm_that_only_skipped_lands_in_could_not_check() -> None:
    health = judge_node(good_node(dcgm=[dcgm_test("Skip"), dcgm_test("Not Run", None)]))

    assert health["verdict"] == "healthy"
    assert codes(health["could_not_check"]) == ["dcgm"]


# --- combining --------------------------------------------------------------------------------


def test_the_node_verdict_is_the_worst_of_its_gpus_and_its_own_problems() -> None:
    gpus = [good_gpu(0), good_gpu(1, pcie_width_current=8), good_gpu(2)]
    degraded = judge_node(good_node(gpus=gpus))
    failed = judge_node(good_node(gpus=gpus, expected_gpu_count=4))

    assert [gpu["verdict"] for gpu in degraded["gpus"]] == ["healthy", "degraded", "healthy"]
    assert degraded["verdict"] == "degraded"
    assert failed["verdict"] == "failed"


def test_worst() -> None:
    assert worst([]) == "healthy"
    assert worst(["healthy", "degraded"]) == "degraded"
    assert worst(["degraded", "failed", "healthy"]) == "failed"


def test_every_rule_has_a_name_and_one_kind() -> None:
    names = [rule.name for rule in RULES]

    assert len(names) == len(set(names))
    assert all((rule.gpu is None) != (rule.node is None) for rule in RULES)


def test_a_rule_is_one_function() -> None:
    def too_hot(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
        if gpu["temperature_c"] is None:
            found.unknown("temperature", "not reported")
        elif gpu["temperature_c"] > 85:
            found.problem("too_hot", "degraded", gpu["temperature_c"], "hot")

    facts = new_node(gpus=[new_gpu(index=0, temperature_c=90.0), new_gpu(index=1)])
    health = assess_node(facts, rules=[gpu_rule(too_hot)]).health

    assert health["gpus"][0]["problems"][0]["value"] == 90.0
    assert codes(health["gpus"][1]["could_not_check"]) == ["temperature"]
    assert health["verdict"] == "degraded"


# --- the Xid catalogue ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "action", "severity"),
    [
        (13, "RESTART_APP", None),
        (31, "RESTART_APP", None),
        (32, "RESTART_APP", "degraded"),
        (43, "IGNORE", None),
        (45, "WORKFLOW_XID_45", "degraded"),
        (48, "WORKFLOW_XID_48", "failed"),
        (61, "CONTACT_SUPPORT", "degraded"),
        (62, "RESET_GPU", "failed"),
        (63, "IGNORE", None),
        (64, "RESET_GPU", "failed"),
        (68, "RESTART_APP", None),
        (69, "RESTART_APP", None),
        (74, "WORKFLOW_NVLINK_ERR", "failed"),
        (79, "RESTART_BM", "failed"),
        (92, "IGNORE", "degraded"),
        (94, "RESTART_APP", "degraded"),
        (95, "RESET_GPU", "failed"),
        (109, "RESET_GPU", "failed"),
        (119, "RESET_GPU", "failed"),
        (120, "RESET_GPU", "failed"),
        (121, "IGNORE", "degraded"),
        (136, "RESET_GPU", "failed"),
        (140, "RESET_GPU", "failed"),
        (143, "RESET_GPU", "failed"),
        (149, "WORKFLOW_NVLINK5_ERR", "degraded"),
        (154, "XID_154", "degraded"),
    ],
)
def test_the_catalogue_holds_the_codes_with_nvidias_action(
    code: int, action: str, severity: str | None
) -> None:
    info = xid.xid_info(code)

    assert info is not None and info.code == code
    assert info.action == action
    assert info.severity == severity
    assert xid.severity_for(code) == severity
    assert info.needs_action is (action not in ("IGNORE", "RESTART_APP"))
    assert str(info.description)


def test_unknown_xid_codes_need_review() -> None:
    assert xid.xid_info(4242) is None
    assert xid.severity_for(4242) == "degraded"
