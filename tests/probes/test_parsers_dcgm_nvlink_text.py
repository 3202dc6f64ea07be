"""Output shapes of `dcgmi diag -j`, `nvidia-smi nvlink -s/-e` and `nvidia-smi -q` met on real
nodes beyond the shared captures: the DCGM 3.x JSON that `dcgmi` writes itself (level-one
warning objects, CPU EUD results, runs repeated with --iterations), NVLink 5 error counters on
Blackwell (R570 and later), and nvidia-smi's notices about a troubled GPU in `-q` output.

Each input is written by hand in the format of the tool version a comment names, or made from
the real H200 capture the way the driver prints it.
"""

import json
from typing import Any

import pytest

from poc.probes.parsers import detect, parse_output, parse_outputs
from poc.probes.rules import health
from tests.probes.gpu_fixtures import H200_TEXT, fixture_text

B300 = "NVIDIA B300 SXM6 AC"
B300_UUID = "GPU-7d2c3b1a-5e4f-4a6b-9c8d-0e1f2a3b4c5d"


def _problem_codes(node: Any) -> list[str]:
    judged = health.judge_node(node)
    codes = [p["code"] for p in judged["problems"]]
    for gpu in judged["gpus"]:
        codes += [p["code"] for p in gpu["problems"]]
    return codes


# --- dcgmi diag -j ----------------------------------------------------------------------------


def dcgm3_document() -> dict[str, Any]:
    """`dcgmi diag -r 3 -j` on two of four GPUs (-i 2,3) as DCGM 3.3 writes it: version, driver,
    device ids and serials at the top level; level-one results whose warning objects hold their
    text under "warnings" beside an integer "gpu_id"; per-GPU results indexed by GPU id (so the
    array opens with nulls for GPUs 0 and 1) with a string "gpu_id"; the CPU EUD test's results
    naming a "cpu_id"."""
    persistence = (
        "Persistence mode for GPU 2 is currently disabled. The DCGM diagnostic requires "
        "peristence mode to be enabled."
    )
    return {
        "version": "3.3.9",
        "Driver Version Detected": "550.127.08",
        "GPU Device IDs": ["2330", "2330"],
        "GPU Device Serials": {"2": "1652922034310", "3": "1652922034311"},
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Deployment",
                    "tests": [
                        {"name": "Denylist", "results": [{"status": "Pass"}]},
                        {
                            "name": "Persistence Mode",
                            "results": [
                                {
                                    "status": "Fail",
                                    "gpu_id": 2,
                                    "warnings": [
                                        {
                                            "warnings": persistence,
                                            "error_id": 43,
                                            "error_category": 1,
                                            "error_severity": 2,
                                        }
                                    ],
                                }
                            ],
                        },
                    ],
                },
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "GPU Memory",
                            "results": [
                                None,
                                None,
                                {"gpu_id": "2", "status": "Pass", "info": "Allocated 95%"},
                                {
                                    "gpu_id": "3",
                                    "status": "Fail",
                                    "warnings": [
                                        {
                                            "warning": "A DBE occurred on GPU 3.",
                                            "error_id": 12,
                                            "error_category": 3,
                                            "error_severity": 2,
                                        }
                                    ],
                                },
                            ],
                        },
                        {
                            "name": "CPU EUD Test",
                            "results": [{"cpu_id": "0", "status": "Skip - All"}],
                        },
                    ],
                },
            ]
        },
    }


def test_dcgm_3_level_one_warning_objects_and_cpu_results() -> None:
    node = parse_output(json.dumps(dcgm3_document(), indent=3))
    assert node["driver_version"] == "550.127.08"
    tests = [(t["name"], t["result"], t["gpu_index"], t["info"]) for t in node["dcgm"]]
    assert tests == [
        ("Denylist", "Pass", None, ""),
        (
            "Persistence Mode",
            "Fail",
            2,
            "Persistence mode for GPU 2 is currently disabled. The DCGM diagnostic requires "
            "peristence mode to be enabled.",
        ),
        ("GPU Memory", "Pass", 2, "Allocated 95%"),
        ("GPU Memory", "Fail", 3, "A DBE occurred on GPU 3."),
        # dcgmi's table wording "Skip - All" is a skip, and the result names its CPU.
        ("CPU EUD Test", "Skip", None, "CPU 0: "),
    ]


def _run(status: str, warning: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"gpu_id": "0", "status": status}
    if warning is not None:
        result["warnings"] = [{"warning": warning, "error_id": 12}]
    return {
        "version": "3.3.9",
        "Driver Version Detected": "550.127.08",
        "DCGM Diagnostic": {
            "test_categories": [
                {"category": "Hardware", "tests": [{"name": "GPU Memory", "results": [result]}]}
            ]
        },
    }


def test_dcgm_runs_repeated_with_iterations() -> None:
    """`dcgmi diag -r 2 -j --iterations 3` (DCGM 3.x-4.x): one document per run under
    "iterations", the verdict under "Overall Result"; dcgmi stops at the first run that fails."""
    failed = {
        "iterations": [_run("Pass"), _run("Fail", "A DBE occurred on GPU 0.")],
        "Overall Result": "Fail",
        "Warning": "The diagnostic found errors",
    }
    text = json.dumps(failed, indent=3)
    assert detect(text) == "dcgm-json"
    node = parse_output(text)
    assert node["driver_version"] == "550.127.08"
    assert [(t["name"], t["result"], t["gpu_index"], t["info"]) for t in node["dcgm"]] == [
        ("GPU Memory", "Fail", 0, "A DBE occurred on GPU 0."),
        ("Overall Result", "Fail", None, "2 iterations; The diagnostic found errors"),
    ]
    passed = {"iterations": [_run("Pass"), _run("Pass"), _run("Pass")], "Overall Result": "Pass"}
    node = parse_output(json.dumps(passed))
    assert [(t["name"], t["result"], t["gpu_index"]) for t in node["dcgm"]] == [
        ("GPU Memory", "Pass", 0)
    ]


# --- nvidia-smi nvlink ------------------------------------------------------------------------


def blackwell_status() -> str:
    """`nvidia-smi nvlink -s` on a B300 (NVLink 5, 18 links at 53.125 GB/s)."""
    links = "".join(f"\t Link {n}: 53.125 GB/s\n" for n in range(18))
    return f"GPU 0: {B300} (UUID: {B300_UUID})\n{links}"


def blackwell_errors(**changed: int) -> str:
    """`nvidia-smi nvlink -e` on a B300 as R580-R595 drivers print it for each link: packet and
    byte counts, NVLink 5 error counters, the BERs, the pre-correction lane counters and the 16
    FEC histogram bins (bin 0 in the billions on a healthy link). `changed` sets a counter of
    link 3 by its label."""
    counters: list[tuple[str, str]] = [
        ("Tx packets", "812345678"),
        ("Tx bytes", "52010000000"),
        ("Rx packets", "812345001"),
        ("Rx bytes", "52009000000"),
        ("Malformed packet Errors", "0"),
        ("Buffer overrun Errors", "0"),
        ("Rx Errors", "0"),
        ("Rx remote Errors", "0"),
        ("Rx General Errors", "0"),
        ("Local link integrity Errors", "0"),
        ("Tx discards", "0"),
        ("Link recovery successful events", "0"),
        ("Link recovery failed events", "0"),
        ("Total link recovery events", "0"),
        ("Effective Errors", "0"),
        ("Effective BER", "15e-255"),
        ("Symbol Errors", "0"),
        ("Symbol BER", "15e-255"),
        ("Raw BER Lane 0", "2061"),
        ("Raw BER Lane 1", "1038"),
        ("Raw BER Total", "1037"),
        ("Raw Errors Lane 0", "82"),
        ("Raw Errors Lane 1", "4"),
        ("FEC Errors - 0", "36140749276"),
        ("FEC Errors - 1", "5120"),
        ("FEC Errors - 2", "17"),
        *((f"FEC Errors - {n}", "0") for n in range(3, 16)),
    ]
    lines = [f"GPU 0: {B300} (UUID: {B300_UUID})"]
    for link in range(18):
        for label, value in counters:
            if link == 3:
                value = str(changed.get(label.replace(" ", "_"), value))
            lines.append(f"\t Link {link}: {label}: {value}")
    return "\n".join(lines) + "\n"


def test_nvlink5_counters_that_count_no_error_are_named_for_what_they_are() -> None:
    text = blackwell_errors()
    assert detect(text) == "nvlink-errors"
    links = parse_output(text)["gpus"][0]["nvlink_links"]
    assert len(links) == 18
    errors = links[0]["errors"]
    # FEC histogram bins and pre-correction lane counts are kept, named apart from errors.
    assert {k: errors[k] for k in ("fec_bin_0", "fec_bin_1", "fec_bin_2", "fec_bin_15")} == {
        "fec_bin_0": 36140749276,
        "fec_bin_1": 5120,
        "fec_bin_2": 17,
        "fec_bin_15": 0,
    }
    assert (errors["pre_fec_lane_0"], errors["pre_fec_lane_1"]) == (82, 4)
    assert (errors["symbol_errors"], errors["link_recovery_failed_events"]) == (0, 0)
    # Rates are no counts; no FEC or raw label survives under a name that reads as an error.
    assert not [k for k in errors if "ber" in k.split("_") or k.startswith(("fec_err", "raw_"))]

    # A healthy Blackwell node is not degraded by its FEC histogram or raw lane counts...
    node = parse_outputs(
        [("nvidia-smi nvlink -s", blackwell_status()), ("nvidia-smi nvlink -e", text)]
    )
    merged = node["gpus"][0]["nvlink_links"]
    assert {(link["active"], link["speed_gbps"]) for link in merged} == {(True, 53.125)}
    assert len(merged) == 18 and merged[3]["errors"]["fec_bin_0"] == 36140749276
    assert "nvlink_errors" not in _problem_codes(node)
    # ...while an error FEC could not correct is still found.
    broken = blackwell_errors(Symbol_Errors=3)
    node = parse_outputs(
        [("nvidia-smi nvlink -s", blackwell_status()), ("nvidia-smi nvlink -e", broken)]
    )
    assert "nvlink_errors" in _problem_codes(node)


# --- nvidia-smi -q ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("notice", "before"),
    [
        # Printed in place of the block of a GPU the driver has lost (any driver).
        (
            "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error",
            "GPU 00000000:00:06.0\n",
        ),
        # Printed before the report when a GPU's infoROM fails its checksum.
        ("WARNING: infoROM is corrupted at gpu 0000:00:06.0", "\n==============NVSMI LOG"),
    ],
)
def test_query_text_keeps_nvidia_smi_notices(notice: str, before: str) -> None:
    """The H200 `-q` report of a node with two GPUs, one of them unreachable or with a corrupted
    infoROM: the notice is kept, so the GPU is judged by it."""
    text = fixture_text(H200_TEXT)
    attached = "Attached GPUs                                          : 1"
    assert attached in text and before in text
    text = text.replace(attached, attached[:-1] + "2").replace(before, f"{notice}\n{before}", 1)
    assert detect(text) == "smi-text"
    node = parse_output(text)
    assert f"nvidia-smi: {notice}" in node["warnings"]
    code = "gpu_unreachable" if "device handle" in notice else "inforom_corrupted"
    assert code in _problem_codes(node)
