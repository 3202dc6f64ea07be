"""The check catalogue: every check passed, failed and unable to run, and validate_params
rejecting each kind of mistake."""

import json
from typing import Any

import pytest

from poc.probes.facts import NodeFacts, new_gpu, new_node
from poc.probes.rules.checks import (
    CHECKS,
    CHECKS_BY_KEY,
    CheckParamsError,
    describe,
    run_check,
    validate_params,
)
from tests.probes.test_health import dcgm_test, event, good_gpu, good_node, links

# bench.json of shared/fixtures/gpu/h200: PyTorch on one H200 SXM (figures as measured).
H200_BENCH: dict[str, Any] = {
    "gpu_index": 0,
    "device_name": "NVIDIA H200",
    "framework": "torch 2.11.0+cu130",
    "matmul_tflops": {
        "bf16": 778.6203869978742,
        "fp16": 747.2269573554835,
        "tf32": 403.8284013871721,
        "fp32": 50.92949811224879,
    },
    "matmul_size": 8192,
    "device_copy_tbps": 4.188283159129265,
    "host_to_device_gbps": 55.35509353151288,
    "device_to_host_gbps": 55.371721717048956,
}

REQUIRED_KEYS = {
    "gpu_count_at_least",
    "gpus_per_node_at_least",
    "all_gpus_healthy",
    "gpu_model_in",
    "driver_at_least",
    "cuda_at_least",
    "mig_enabled",
    "mig_profile_count_at_least",
    "ecc_enabled",
    "persistence_mode_enabled",
    "no_actionable_xid",
    "nvlink_all_active",
    "dcgm_diag_passed",
    "matmul_percent_of_peak",
    "copy_bandwidth_percent_of_peak",
    "host_to_device_gbps_at_least",
}


def h200_node(benchmarks: list[dict[str, Any]] | None = None, **values: Any) -> NodeFacts:
    return good_node(
        gpus=[good_gpu(0)], benchmarks=[H200_BENCH] if benchmarks is None else benchmarks, **values
    )


def run(key: str, nodes: list[NodeFacts], **params: Any) -> dict[str, Any]:
    return dict(run_check(key, params, nodes))


# --- the catalogue ----------------------------------------------------------------------------


def test_the_catalogue_holds_every_check_once_in_a_fixed_order() -> None:
    keys = [check.key for check in CHECKS]

    assert set(keys) >= REQUIRED_KEYS
    assert len(keys) == len(set(keys)) == len(CHECKS_BY_KEY)
    assert keys[0] == "gpu_count_at_least"


def test_the_catalogue_describes_itself_as_json() -> None:
    schema = [check.as_json() for check in CHECKS]

    assert json.loads(json.dumps(schema)) == schema
    by_key = {item["key"]: item for item in schema}
    assert by_key["matmul_percent_of_peak"]["params"] == [
        {
            "name": "dtype",
            "kind": "choice",
            "label": "Data type",
            "required": True,
            "choices": ["bf16", "fp16", "tf32"],
        },
        {
            "name": "percent",
            "kind": "float",
            "label": "Minimum percentage of the peak",
            "required": True,
            "minimum": 1,
            "exclusive_minimum": False,
            "maximum": 100,
        },
    ]
    assert by_key["all_gpus_healthy"]["params"][0]["default"] is False
    assert all(item["label"] and item["description"] for item in schema)


def test_every_check_runs_on_an_empty_run_and_says_why_it_cannot() -> None:
    # No node, or a node that reported nothing: never "passed", always a reason.
    empty = [new_node(gpus=[new_gpu(index=0)])]
    for check in CHECKS:
        params = {
            "gpu_count_at_least": {"count": 1},
            "gpus_per_node_at_least": {"count": 1},
            "gpu_model_in": {"models": ["H200"]},
            "driver_at_least": {"version": "535"},
            "cuda_at_least": {"version": "12.2"},
            "mig_profile_count_at_least": {"profile": "1g.18gb", "count": 1},
            "matmul_percent_of_peak": {"dtype": "bf16", "percent": 50},
            "copy_bandwidth_percent_of_peak": {"percent": 50},
            "host_to_device_gbps_at_least": {"gbps": 10},
        }.get(check.key, {})
        for nodes in ([], empty):
            outcome = run_check(check.key, params, nodes)
            if outcome["status"] == "unable":
                assert outcome["detail"], check.key
            assert outcome["check"], check.key
    # a GPU with nothing reported still counts as a GPU
    assert run_check("gpu_count_at_least", {"count": 1}, empty)["status"] == "passed"


# --- validate_params --------------------------------------------------------------------------


def test_valid_params_are_cleaned_and_defaults_filled_in() -> None:
    assert validate_params("all_gpus_healthy", {}) == {"allow_degraded": False}
    assert validate_params("all_gpus_healthy", None) == {"allow_degraded": False}
    assert validate_params("nvlink_all_active", {}) == {"min_links": 1}
    assert validate_params("dcgm_diag_passed", {}) == {"allow_warn": True}
    assert validate_params("matmul_percent_of_peak", {"dtype": "BF16", "percent": 70}) == {
        "dtype": "bf16",
        "percent": 70.0,
    }
    assert validate_params("driver_at_least", {"version": " 535.104.05 "}) == {
        "version": "535.104.05"
    }
    assert validate_params(
        "mig_profile_count_at_least", {"profile": "MIG 1g.10gb", "count": 7}
    ) == {
        "profile": "1g.10gb",
        "count": 7,
    }
    assert validate_params("gpu_model_in", {"models": [" H200 ", "0X2335"]}) == {
        "models": ["H200", "0x2335"]
    }
    assert validate_params("no_actionable_xid", {}) == {}


@pytest.mark.parametrize(
    ("key", "params", "param"),
    [
        # unknown extra parameter
        ("gpu_count_at_least", {"count": 8, "nodes": 2}, "nodes"),
        ("ecc_enabled", {"strict": True}, "strict"),
        # missing
        ("gpu_count_at_least", {}, "count"),
        ("mig_profile_count_at_least", {"profile": "1g.10gb"}, "count"),
        ("matmul_percent_of_peak", {"percent": 70}, "dtype"),
        # wrong type
        ("gpu_count_at_least", {"count": "8"}, "count"),
        ("gpu_count_at_least", {"count": True}, "count"),
        ("gpu_count_at_least", {"count": 8.5}, "count"),
        ("all_gpus_healthy", {"allow_degraded": "no"}, "allow_degraded"),
        ("gpu_model_in", {"models": "H200"}, "models"),
        ("gpu_model_in", {"models": ["H200", 2335]}, "models"),
        ("gpu_model_in", {"models": [" "]}, "models"),
        ("driver_at_least", {"version": 535}, "version"),
        ("driver_at_least", {"version": "r535"}, "version"),
        ("cuda_at_least", {"version": "12.x"}, "version"),
        ("matmul_percent_of_peak", {"dtype": "fp8", "percent": 70}, "dtype"),
        ("matmul_percent_of_peak", {"dtype": "bf16", "percent": float("nan")}, "percent"),
        ("mig_profile_count_at_least", {"profile": "half", "count": 1}, "profile"),
        ("host_to_device_gbps_at_least", {"gbps": "fast"}, "gbps"),
        # out of range
        ("gpu_count_at_least", {"count": 0}, "count"),
        ("gpus_per_node_at_least", {"count": -1}, "count"),
        ("gpus_per_node_at_least", {"count": 5000}, "count"),
        ("matmul_percent_of_peak", {"dtype": "bf16", "percent": 101}, "percent"),
        ("copy_bandwidth_percent_of_peak", {"percent": 0.5}, "percent"),
        ("host_to_device_gbps_at_least", {"gbps": 0}, "gbps"),
        ("nvlink_all_active", {"min_links": 0}, "min_links"),
        ("gpu_model_in", {"models": []}, "models"),
        ("gpu_model_in", {"models": ["x"] * 21}, "models"),
    ],
)
def test_validate_params_names_the_parameter_at_fault(
    key: str, params: dict[str, Any], param: str
) -> None:
    with pytest.raises(CheckParamsError) as caught:
        validate_params(key, params)

    assert caught.value.param == param
    assert param in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_validate_params_rejects_an_unknown_check_and_params_that_are_not_a_mapping() -> None:
    with pytest.raises(CheckParamsError, match="no_such_check") as caught:
        validate_params("no_such_check", {})
    assert caught.value.param is None

    with pytest.raises(CheckParamsError) as caught:
        validate_params("gpu_count_at_least", [8])  # type: ignore[arg-type]
    assert caught.value.param is None


def test_describe_states_the_check_with_its_params() -> None:
    assert describe("gpu_count_at_least", {"count": 8}) == "GPU count ≥ 8"
    assert describe("all_gpus_healthy", {}) == "All GPUs healthy"
    assert describe("all_gpus_healthy", {"allow_degraded": True}) == "All GPUs healthy or degraded"
    assert (
        describe("matmul_percent_of_peak", {"dtype": "bf16", "percent": 70})
        == "bf16 matrix product ≥ 70 % of published peak"
    )
    assert describe("driver_at_least", {"version": "535.104.05"}) == "Driver version ≥ 535.104.05"


def test_describe_names_a_stale_binding_instead_of_raising() -> None:
    assert describe("gpu_count_at_least", {}) == "GPU count (not valid: Missing parameter count.)"
    assert describe("retired_check", {}).startswith("retired_check (not valid: ")


def test_a_stale_binding_is_unable_rather_than_an_error() -> None:
    outcome = run_check("gpu_count_at_least", {"count": "eight"}, [good_node()])
    gone = run_check("retired_check", {}, [good_node()])

    assert outcome["status"] == "unable" and "count" in outcome["detail"]
    assert outcome["check"].startswith("GPU count (not valid: ")
    assert gone["status"] == "unable" and gone["check"].startswith("retired_check")


# --- GPU counts -------------------------------------------------------------------------------


def test_gpu_count_at_least_counts_every_gpu_of_the_run() -> None:
    nodes = [good_node(8, host="a"), good_node(4, host="b")]

    passed = run("gpu_count_at_least", nodes, count=12)
    failed = run("gpu_count_at_least", nodes, count=16)
    unable = run("gpu_count_at_least", [], count=1)

    assert passed == {
        "status": "passed",
        "measured": "12 GPUs",
        "detail": "",
        "check": "GPU count ≥ 12",
    }
    assert failed["status"] == "failed" and failed["measured"] == "12 GPUs"
    assert "16" in failed["detail"]
    assert unable["status"] == "unable" and unable["detail"]


def test_gpus_per_node_at_least_names_the_short_nodes() -> None:
    nodes = [good_node(8, host="a"), good_node(4, host="b")]

    passed = run("gpus_per_node_at_least", nodes, count=4)
    failed = run("gpus_per_node_at_least", nodes, count=8)
    unable = run("gpus_per_node_at_least", [], count=8)

    assert passed["status"] == "passed" and "fewest 4 GPUs per node" in passed["measured"]
    assert failed["status"] == "failed" and failed["detail"] == "Nodes with fewer GPUs: b: 4."
    assert unable["status"] == "unable"


# --- health -----------------------------------------------------------------------------------


def test_all_gpus_healthy_passes_on_healthy_nodes() -> None:
    outcome = run("all_gpus_healthy", [good_node(), good_node(host="b")])

    assert outcome["status"] == "passed"
    assert "16 GPUs: 16 healthy, 0 degraded, 0 failed" in outcome["measured"]
    assert "not checked" not in outcome["measured"]


def test_all_gpus_healthy_fails_on_a_degraded_gpu_unless_allowed() -> None:
    nodes = [good_node(gpus=[good_gpu(0), good_gpu(1, pcie_width_current=8)], host="b")]

    strict = run("all_gpus_healthy", nodes)
    lenient = run("all_gpus_healthy", nodes, allow_degraded=True)

    assert strict["status"] == "failed"
    assert strict["detail"] == "GPU 1: The PCIe link runs at x8 of x16."
    assert lenient["status"] == "passed" and "1 degraded" in lenient["measured"]


def test_all_gpus_healthy_fails_on_a_failed_node_even_when_degraded_is_allowed() -> None:
    nodes = [good_node(6, expected_gpu_count=8, host="gpu-07")]

    outcome = run("all_gpus_healthy", nodes, allow_degraded=True)

    assert outcome["status"] == "failed"
    assert outcome["detail"] == "gpu-07: 6 GPUs found, 8 expected"


def test_all_gpus_healthy_lists_what_could_not_be_checked() -> None:
    outcome = run("all_gpus_healthy", [good_node(dcgm=[], sources=["nvidia-smi nvlink -s"])])

    assert outcome["status"] == "passed"
    assert outcome["measured"].endswith("not checked: dcgm, xid")


def test_all_gpus_healthy_is_unable_when_nothing_could_be_checked() -> None:
    outcome = run("all_gpus_healthy", [new_node(gpus=[new_gpu(index=0), new_gpu(index=1)])])

    assert outcome["status"] == "unable"
    assert "nothing was checked" in outcome["detail"]


# --- models and versions ----------------------------------------------------------------------


def test_gpu_model_in_matches_names_and_device_ids() -> None:
    nodes = [good_node(2)]

    by_name = run("gpu_model_in", nodes, models=["h200"])
    by_id = run("gpu_model_in", nodes, models=["0x2335"])
    failed = run("gpu_model_in", nodes, models=["H100", "0x2330"])
    mixed = run(
        "gpu_model_in",
        [good_node(gpus=[good_gpu(0), good_gpu(1, name="NVIDIA L4", pci_device_id="0x27b8")])],
        models=["H200"],
    )

    assert by_name["status"] == by_id["status"] == "passed"
    assert by_name["measured"] == "2 × NVIDIA H200 (0x2335)"
    assert failed["status"] == "failed"
    assert (
        mixed["status"] == "failed"
        and mixed["detail"] == "Other models: GPU 1: NVIDIA L4 (0x27b8)."
    )


def test_gpu_model_in_is_unable_when_the_model_was_not_reported() -> None:
    node = good_node(gpus=[good_gpu(0, name=None, pci_device_id=None)])

    outcome = run("gpu_model_in", [node], models=["H200"])
    no_gpu = run("gpu_model_in", [good_node(0)], models=["H200"])

    assert outcome["status"] == "unable" and "GPU 0" in outcome["detail"]
    assert no_gpu["status"] == "unable"


def test_a_device_id_model_needs_the_device_id() -> None:
    node = good_node(gpus=[good_gpu(0, pci_device_id=None)])

    assert run("gpu_model_in", [node], models=["0x2335"])["status"] == "unable"
    assert run("gpu_model_in", [node], models=["H200"])["status"] == "passed"


def test_driver_at_least_compares_numbers_not_text() -> None:
    nodes = [
        good_node(host="a", driver_version="535.104.05"),
        good_node(host="b", driver_version="580.159.04"),
    ]

    passed = run("driver_at_least", nodes, version="535.104.5")
    failed = run("driver_at_least", nodes, version="535.129.03")
    unable = run("driver_at_least", [good_node(driver_version=None)], version="535")

    assert passed["status"] == "passed"
    assert passed["measured"] == "535.104.05, 580.159.04"
    assert failed["status"] == "failed" and failed["detail"] == "Older on a: 535.104.05."
    assert unable["status"] == "unable" and "node-a" in unable["detail"]


def test_a_definite_failure_wins_over_an_unknown_elsewhere() -> None:
    nodes = [good_node(host="a", driver_version=None), good_node(host="b", driver_version="470.1")]

    assert run("driver_at_least", nodes, version="535")["status"] == "failed"


def test_cuda_at_least() -> None:
    nodes = [good_node(cuda_version="12.2")]

    assert run("cuda_at_least", nodes, version="12.2")["status"] == "passed"
    assert run("cuda_at_least", nodes, version="12.10")["status"] == "failed"  # 12.10 > 12.2
    assert run("cuda_at_least", [good_node(cuda_version=None)], version="12")["status"] == "unable"


# --- GPU modes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "field"),
    [
        ("mig_enabled", "mig_mode_current"),
        ("ecc_enabled", "ecc_mode_current"),
        ("persistence_mode_enabled", "persistence_mode"),
    ],
)
def test_every_gpu_modes(key: str, field: str) -> None:
    on = good_node(gpus=[good_gpu(0, **{field: True}), good_gpu(1, **{field: True})])
    one_off = good_node(gpus=[good_gpu(0, **{field: True}), good_gpu(1, **{field: False})])
    one_unknown = good_node(gpus=[good_gpu(0, **{field: True}), good_gpu(1, **{field: None})])

    passed = run(key, [on])
    failed = run(key, [one_off])
    unable = run(key, [one_unknown])

    assert passed["status"] == "passed" and passed["measured"] == "on for 2 of 2 GPUs"
    assert failed["status"] == "failed" and failed["detail"] == "Off on GPU 1."
    assert unable["status"] == "unable" and unable["detail"] == "Not reported for GPU 1."


def mig_gpu(index: int, *profiles: str) -> Any:
    devices = [
        {
            "gpu_instance_id": n,
            "compute_instance_id": 0,
            "profile": profile,
            "profile_id": None,
            "memory_total_mib": None,
            "uuid": None,
        }
        for n, profile in enumerate(profiles)
    ]
    return good_gpu(index, mig_mode_current=True, mig_devices=devices)


def test_mig_profile_count_at_least_counts_over_all_gpus() -> None:
    node = good_node(gpus=[mig_gpu(0, "1g.18gb", "1g.18gb", "3g.71gb"), mig_gpu(1, "MIG 1g.18gb")])

    passed = run("mig_profile_count_at_least", [node], profile="1g.18gb", count=3)
    failed = run("mig_profile_count_at_least", [node], profile="1g.18gb", count=4)
    other = run("mig_profile_count_at_least", [node], profile="7g.141gb", count=1)

    assert (
        passed["status"] == "passed"
        and passed["measured"] == "3 MIG GPU instances of profile 1g.18gb"
    )
    assert failed["status"] == "failed"
    assert "MIG is enabled on 2 of 2 GPUs" in failed["detail"]
    assert other["status"] == "failed"


def test_mig_profile_count_is_unable_without_any_mig_fact() -> None:
    node = good_node(gpus=[good_gpu(0, mig_mode_current=None)])

    outcome = run("mig_profile_count_at_least", [node], profile="1g.10gb", count=1)

    assert outcome["status"] == "unable" and outcome["detail"]


# --- Xid, NVLink, DCGM ------------------------------------------------------------------------


def test_no_actionable_xid() -> None:
    clean = good_node(xid_events=[event(13), event(43)])
    broken = good_node(xid_events=[event(79, gpu_index=2), event(79, gpu_index=2), event(13)])
    unread = good_node(sources=["nvidia-smi -q -x"])

    passed = run("no_actionable_xid", [clean])
    failed = run("no_actionable_xid", [broken])
    unable = run("no_actionable_xid", [unread])

    assert passed["status"] == "passed" and passed["measured"] == "2 Xid events, 0 actionable"
    assert failed["status"] == "failed" and failed["measured"] == "3 Xid events, 2 actionable"
    assert failed["detail"] == "Xid 79 (GPU has fallen off the bus) ×2, GPU 2"
    assert unable["status"] == "unable" and "node-a" in unable["detail"]


def test_an_unknown_xid_code_is_actionable() -> None:
    outcome = run("no_actionable_xid", [good_node(xid_events=[event(4242)])])

    assert outcome["status"] == "failed" and "needs review" in outcome["detail"]


def test_nvlink_all_active() -> None:
    full = good_node(2)
    one_down = good_node(gpus=[good_gpu(0), good_gpu(1, nvlink_links=links(active=17))])
    no_links = good_node(gpus=[good_gpu(0, nvlink_links=[])])
    counters_only = good_node(
        gpus=[good_gpu(0, nvlink_links=[{**link, "active": False} for link in links(active=18)])],
        sources=["nvidia-smi nvlink -e"],
    )

    passed = run("nvlink_all_active", [full], min_links=18)
    too_few = run("nvlink_all_active", [full], min_links=24)
    failed = run("nvlink_all_active", [one_down])
    unable = run("nvlink_all_active", [no_links])

    assert passed["status"] == "passed" and passed["measured"].endswith(": 18")
    assert too_few["status"] == "failed"
    assert failed["status"] == "failed" and failed["detail"] == "GPU 1: 17 of 18 active"
    assert unable["status"] == "unable" and "GPU 0" in unable["detail"]
    assert run("nvlink_all_active", [counters_only])["status"] == "unable"


def test_dcgm_diag_passed() -> None:
    passed = run("dcgm_diag_passed", [good_node(dcgm=[dcgm_test("Pass"), dcgm_test("Skip")])])
    warned = good_node(dcgm=[dcgm_test("Pass"), dcgm_test("Warn", name="pcie")])
    failed = run("dcgm_diag_passed", [good_node(dcgm=[dcgm_test("Fail", 3)])])
    not_run = run("dcgm_diag_passed", [good_node(), good_node(host="b", dcgm=[])])
    skipped = run("dcgm_diag_passed", [good_node(dcgm=[dcgm_test("Skip")])])

    assert passed["status"] == "passed"
    assert passed["measured"] == "1 passed, 0 failed, 0 warned, 1 skipped or not run"
    assert run("dcgm_diag_passed", [warned])["status"] == "passed"
    assert run("dcgm_diag_passed", [warned], allow_warn=False)["status"] == "failed"
    assert failed["status"] == "failed" and failed["detail"] == "memory Fail (GPU 3): x"
    assert not_run["status"] == "unable" and not_run["detail"].endswith("on b.")
    assert skipped["status"] == "unable"


# --- benchmarks against published peaks -------------------------------------------------------


def test_matmul_percent_of_peak_on_the_h200_benchmark() -> None:
    passed = run("matmul_percent_of_peak", [h200_node()], dtype="bf16", percent=75)
    failed = run("matmul_percent_of_peak", [h200_node()], dtype="bf16", percent=80)
    tf32 = run("matmul_percent_of_peak", [h200_node()], dtype="tf32", percent=80)

    # 778.6 / 989.5 (1,979 sparse / 2)
    assert passed == {
        "status": "passed",
        "measured": "778.6 TFLOP/s = 78.7 % of 989.5 TFLOP/s (bf16)",
        "detail": "",
        "check": "bf16 matrix product ≥ 75 % of published peak",
    }
    assert failed["status"] == "failed"
    assert failed["detail"] == "GPU 0: 778.6 TFLOP/s = 78.7 % of 989.5 TFLOP/s (bf16)"
    assert tf32["status"] == "passed" and "81.7 % of 494.5" in tf32["measured"]


def test_matmul_percent_of_peak_reports_the_lowest_gpu() -> None:
    slow = {**H200_BENCH, "gpu_index": 1, "matmul_tflops": {"bf16": 500.0}}
    node = good_node(gpus=[good_gpu(0), good_gpu(1)], benchmarks=[H200_BENCH, slow])

    outcome = run("matmul_percent_of_peak", [node], dtype="bf16", percent=60)

    assert outcome["status"] == "failed"
    assert outcome["measured"] == "500 TFLOP/s = 50.5 % of 989.5 TFLOP/s (bf16) (lowest of 2 GPUs)"
    assert outcome["detail"].startswith("GPU 1: ")


def test_matmul_percent_of_peak_is_unable_without_a_benchmark() -> None:
    outcome = run("matmul_percent_of_peak", [h200_node(benchmarks=[])], dtype="bf16", percent=50)

    assert outcome["status"] == "unable" and "No benchmark" in outcome["detail"]


def test_matmul_percent_of_peak_is_unable_for_a_gpu_without_a_published_peak() -> None:
    node = good_node(
        gpus=[good_gpu(0, name="NVIDIA A10G", pci_device_id="0x2237")], benchmarks=[H200_BENCH]
    )
    t4 = good_node(
        gpus=[good_gpu(0, name="Tesla T4", pci_device_id="0x1eb8")], benchmarks=[H200_BENCH]
    )

    unknown = run("matmul_percent_of_peak", [node], dtype="bf16", percent=50)
    no_bf16 = run("matmul_percent_of_peak", [t4], dtype="bf16", percent=50)

    assert (
        unknown["status"] == "unable" and "NVIDIA A10G has no published peak" in unknown["detail"]
    )
    assert no_bf16["status"] == "unable" and "Tesla T4 has no published bf16" in no_bf16["detail"]


def test_matmul_percent_of_peak_is_unable_for_a_failed_or_partial_benchmark() -> None:
    failed_bench = {"gpu_index": 0, "device_name": "NVIDIA H200", "error": "CUDA out of memory"}
    no_fp16 = {**H200_BENCH, "matmul_tflops": {"bf16": 778.6}}

    crashed = run("matmul_percent_of_peak", [h200_node([failed_bench])], dtype="bf16", percent=50)
    missing = run("matmul_percent_of_peak", [h200_node([no_fp16])], dtype="fp16", percent=50)

    assert crashed["status"] == "unable" and "CUDA out of memory" in crashed["detail"]
    assert missing["status"] == "unable" and "fp16" in missing["detail"]


def test_the_benchmark_device_name_finds_the_peak_when_the_gpu_is_not_listed() -> None:
    node = new_node(benchmarks=[H200_BENCH])  # only the benchmark was read

    outcome = run("matmul_percent_of_peak", [node], dtype="bf16", percent=75)

    assert outcome["status"] == "passed" and "989.5" in outcome["measured"]


def test_copy_bandwidth_percent_of_peak() -> None:
    passed = run("copy_bandwidth_percent_of_peak", [h200_node()], percent=85)
    failed = run("copy_bandwidth_percent_of_peak", [h200_node()], percent=90)
    no_copy = {key: value for key, value in H200_BENCH.items() if key != "device_copy_tbps"}
    unable = run("copy_bandwidth_percent_of_peak", [h200_node([no_copy])], percent=50)

    # 4.19 TB/s read + written against 4.8 TB/s HBM3e
    assert passed["status"] == "passed" and passed["measured"] == "4.19 TB/s = 87.3 % of 4.8 TB/s"
    assert failed["status"] == "failed"
    assert unable["status"] == "unable" and "not measured" in unable["detail"]


def test_host_to_device_gbps_at_least() -> None:
    passed = run("host_to_device_gbps_at_least", [h200_node()], gbps=50)
    failed = run("host_to_device_gbps_at_least", [h200_node()], gbps=60)
    unable = run("host_to_device_gbps_at_least", [h200_node(benchmarks=[])], gbps=50)

    assert passed["status"] == "passed" and passed["measured"] == "55.4 GB/s"
    assert passed["check"] == "Host-to-device bandwidth ≥ 50 GB/s"
    assert failed["status"] == "failed" and failed["detail"] == "GPU 0: 55.4 GB/s"
    assert unable["status"] == "unable"


@pytest.mark.parametrize(
    ("scenario", "status"),
    [
        ({"state": "refused", "clean": True, "reason": "Requested node configuration"}, "passed"),
        ({"state": "accepted", "clean": False, "reason": None}, "failed"),
        ({"state": "pending", "clean": False, "reason": "no reason in time"}, "failed"),
        # The scheduler never weighed the count (a permission missing, the site refused the
        # form of the request): nothing was learnt, so it is not a failure of the platform.
        ({"state": "error", "clean": False, "reason": "refused for the way..."}, "unable"),
    ],
)
def test_controlled_failure_outcomes(scenario: dict[str, Any], status: str) -> None:
    cluster = {
        "format": "workbench-slurm-facts/1",
        "controlled_failures": {"scenarios": [{"name": "more_gpus_than_any_node", **scenario}]},
    }
    outcome = run_check(
        "controlled_failure_clean", {"scenario": "more_gpus_than_any_node"}, [], cluster=cluster
    )
    assert outcome["status"] == status, outcome
