"""Output shapes met in the field that the shared captures do not hold: the R610 renames
(KMD and CUDA UMD versions, nested power limits), drivers before R340, nvlink output without
UUIDs or after echoed titles, NVML's "all links are inActive", looped --query-gpu output and
-q output narrowed to some GPUs with -i.

Each input is made in the test from the real H200 capture, changed the way the newer or older
driver prints it (the docstrings say how), or written from the documented line format.
"""

import pytest

from poc.probes.parsers import ParseError, detect, parse_output
from poc.probes.parsers import values as v
from poc.probes.rules import health
from tests.probes.gpu_fixtures import H200_TEXT, H200_XML, fixture_text

R610_DRIVER = "610.43.02 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]"
R610_CUDA = "13.3 [Deprecated; will be removed in CUDA 14.0. Use CUDA UMD Version instead]"


def r610_text() -> str:
    """The H200 -q text as R610 prints it: deprecated version lines with a note, the new KMD
    and CUDA UMD lines after them, and the power limits one level down."""
    text = fixture_text(H200_TEXT)
    text = text.replace(
        "Driver Version                                         : 580.159.04\n"
        "CUDA Version                                           : 13.0\n",
        f"Driver Version                                         : {R610_DRIVER}\n"
        f"CUDA Version                                           : {R610_CUDA}\n"
        "KMD Version                                            : 610.43.02\n"
        "CUDA UMD Version                                       : 13.3\n",
    )
    return text.replace(
        "        Current Power Limit                            : 700.00 W\n"
        "        Requested Power Limit                          : 700.00 W\n",
        "        GPU Ceiling Power Limit\n"
        "            Current Power Limit                        : 690.00 W\n"
        "            Requested Power Limit                      : 700.00 W\n",
        1,
    )


def test_version_notes_are_dropped_and_kmd_and_umd_versions_win() -> None:
    assert v.to_version(R610_DRIVER) == "610.43.02"
    assert v.to_version(R610_CUDA) == "13.3"
    assert v.to_version('Deprecated, see "KMD version" instead') is None
    assert v.to_version("[N/A]") is None
    node = parse_output(r610_text())
    assert (node["driver_version"], node["cuda_version"]) == ("610.43.02", "13.3")


def test_r610_nested_power_limit_is_read_in_text() -> None:
    (gpu,) = parse_output(r610_text())["gpus"]
    assert gpu["power_limit_w"] == 690.0
    assert gpu["power_draw_w"] is not None


def test_r610_tags_and_nested_power_limit_in_xml() -> None:
    """The XML counterpart, with the tags named as -q's labels are (kmd_version,
    cuda_umd_version, the limits under a block of their own); the old tags say deprecated."""
    xml = fixture_text(H200_XML)
    assert "<driver_version>580.159.04</driver_version>" in xml
    xml = xml.replace(
        "<driver_version>580.159.04</driver_version>",
        "<driver_version>Deprecated</driver_version><kmd_version>610.43.02</kmd_version>",
    ).replace(
        "<cuda_version>13.0</cuda_version>",
        "<cuda_version>Deprecated</cuda_version><cuda_umd_version>13.3</cuda_umd_version>",
    )
    limits = (
        "<current_power_limit>700.00 W</current_power_limit>\n"
        "\t\t\t<requested_power_limit>700.00 W</requested_power_limit>\n"
        "\t\t\t<default_power_limit>700.00 W</default_power_limit>"
    )
    assert limits in xml
    xml = xml.replace(
        limits,
        "<gpu_ceiling_power_limit><current_power_limit>690.00 W</current_power_limit>"
        "<requested_power_limit>700.00 W</requested_power_limit>"
        "<default_power_limit>700.00 W</default_power_limit></gpu_ceiling_power_limit>",
    )
    node = parse_output(xml)
    assert (node["driver_version"], node["cuda_version"]) == ("610.43.02", "13.3")
    assert node["gpus"][0]["power_limit_w"] == 690.0


def test_r610_version_section_of_a_capture() -> None:
    rule = "#" * 80 + "\n"
    capture = (
        rule
        + "# capabilities :: version\n# $ nvidia-smi --version\n"
        + rule
        + "NVIDIA-SMI version  : 610.43.02\n"
        "NVML version        : 610.43\n"
        'DRIVER version      : Deprecated, see "KMD version" instead\n'
        'CUDA version        : Deprecated, see "CUDA UMD version" instead\n'
        "KMD version         : 610.43.02\n"
        "CUDA UMD version    : 13.3\n"
    )
    node = parse_output(capture)
    assert (node["driver_version"], node["cuda_version"]) == ("610.43.02", "13.3")


def test_drivers_before_r340_print_the_temperature_as_gpu() -> None:
    text = fixture_text(H200_TEXT).replace(
        "        GPU Current Temp                               : 40 C\n",
        "        Gpu                                            : 29 C\n",
    )
    assert parse_output(text)["gpus"][0]["temperature_c"] == 29.0


def test_nvlink_status_without_uuids() -> None:
    """Some drivers write "GPU 0: Quadro RTX 8000" with no "(UUID: ...)" before the links."""
    text = (
        "GPU 0: Quadro RTX 8000\n\t Link 0: 25.781 GB/s\n\t Link 1: 25.781 GB/s\n"
        "GPU 1: Quadro RTX 8000\n\t Link 0: 25.781 GB/s\n\t Link 1: <inactive>\n"
    )
    assert detect(text) == "nvlink-status"
    gpus = parse_output(text)["gpus"]
    assert [(g["index"], g["name"], g["uuid"]) for g in gpus] == [
        (0, "Quadro RTX 8000", None),
        (1, "Quadro RTX 8000", None),
    ]
    assert [link["active"] for link in gpus[1]["nvlink_links"]] == [True, False]


def test_nvlink_errors_after_echoed_titles_and_without_uuids() -> None:
    """A loop over GPUs that echoes a title before each `nvlink -e -i N`."""
    text = "".join(
        f"=== GPU {n} NVLink Errors ===\nGPU {n}: NVIDIA GB300\n"
        f"\t Link 0: Replay Errors: {n}\n\t Link 0: Recovery Errors: 0\n\t Link 0: CRC Errors: 0\n"
        for n in range(2)
    )
    assert detect(text) == "nvlink-errors"
    gpus = parse_output(text)["gpus"]
    assert [g["nvlink_links"][0]["errors"]["replay_errors"] for g in gpus] == [0, 1]


def test_a_line_with_a_colon_before_the_gpu_lines_is_not_nvlink_output() -> None:
    text = "Note: copied from a wiki\nGPU 0: NVIDIA GB300\n\t Link 0: Replay Errors: 0\n"
    with pytest.raises(ParseError, match="Note: copied"):
        detect(text)


def test_all_links_inactive_is_a_warning_not_silence() -> None:
    uuid = "GPU-3fb142e7-7102-c7ac-bd5a-fc829e11ed84"
    text = (
        f"GPU 0: NVIDIA A100-PCIE-40GB (UUID: {uuid})\n"
        "NVML: Unable to retrieve NVLink information as all links are inActive\n"
    )
    assert detect(text) == "nvlink-status"
    node = parse_output(text)
    assert node["gpus"][0]["nvlink_links"] == []
    (warning,) = node["warnings"]
    assert warning.startswith("GPU 0:") and "inactive" in warning


def test_a_looped_query_keeps_one_gpu_with_its_last_sample() -> None:
    """`--query-gpu=... --format=csv -l 1` repeats every GPU's row each second."""
    header = "timestamp, index, name, utilization.gpu [%], memory.used [MiB], temperature.gpu"
    rows = [
        f"2026/03/06 16:45:2{n}, {gpu}, NVIDIA GH200 120GB, {n} %, {n * 10} MiB, {30 + n}"
        for n in range(4)
        for gpu in (0, 1)
    ]
    node = parse_output("\n".join([header, *rows]))
    assert [(g["index"], g["temperature_c"]) for g in node["gpus"]] == [(0, 33.0), (1, 33.0)]
    assert "6 repeated rows" in node["warnings"][0]


def test_distinct_gpus_without_any_identity_stay_distinct() -> None:
    text = "name, memory.total [MiB]\nNVIDIA L4, 23034 MiB\nNVIDIA L4, 23034 MiB\n"
    node = parse_output(text)
    assert [g["index"] for g in node["gpus"]] == [0, 1] and node["warnings"] == []


def test_output_narrowed_with_i_leaves_indexes_unknown() -> None:
    """`nvidia-smi -q -i 52:00.0` on an eight-GPU node: one block, "Attached GPUs : 8"."""
    text = fixture_text(H200_TEXT).replace(
        "Attached GPUs                                          : 1",
        "Attached GPUs                                          : 8",
    )
    node = parse_output(text)
    assert node["gpus"][0]["index"] is None
    assert "1 of 8 attached GPUs" in node["warnings"][0]
    xml = fixture_text(H200_XML).replace(
        "<attached_gpus>1</attached_gpus>", "<attached_gpus>8</attached_gpus>"
    )
    node = parse_output(xml)
    assert node["gpus"][0]["index"] is None and "1 of 8" in node["warnings"][0]
    # The GPU is still judged, by its bus id.
    assert health.judge_node(node)["gpus"][0]["verdict"] == "healthy"


def test_a_gpu_holding_a_process_but_computing_nothing_may_lower_its_link() -> None:
    """Not idle by the driver's word (a process holds memory), 0 % utilization, Gen 1 of 5."""
    xml = fixture_text(H200_XML)
    node = parse_output(xml)
    gpu = node["gpus"][0]
    gpu.update(
        pcie_gen_current=1,
        pcie_gen_max=5,
        utilization_gpu_pct=0.0,
        clock_event_reasons={**gpu["clock_event_reasons"], "gpu_idle": False},
    )
    judged = health.judge_node(node)["gpus"][0]
    assert "pcie_gen_reduced" not in [p["code"] for p in judged["problems"]]
    gpu["utilization_gpu_pct"] = 85.0
    judged = health.judge_node(node)["gpus"][0]
    assert "pcie_gen_reduced" in [p["code"] for p in judged["problems"]]


def test_dcgm_4_summary_notes_stay_with_the_per_gpu_results() -> None:
    """DCGM 4 writes node-wide notes (a skipped SRAM threshold check) in the test summary even
    when the test has per-GPU results."""
    import json

    skipped = (
        "Error getting the SRAM Threshold Count for GPU 0. SRAM Threshold checking was skipped."
    )
    document = {
        "DCGM Diagnostic": {
            "test_categories": [
                {
                    "category": "Deployment",
                    "tests": [
                        {
                            "name": "software",
                            "results": [
                                {
                                    "entity_group": "GPU",
                                    "entity_group_id": 1,
                                    "entity_id": 0,
                                    "status": "Fail",
                                    "warnings": [{"error_id": 29, "warning": "Persistence off"}],
                                }
                            ],
                            "test_summary": {"info": [skipped], "status": "Fail"},
                        }
                    ],
                }
            ]
        }
    }
    (result,) = parse_output(json.dumps(document))["dcgm"]
    assert (result["result"], result["gpu_index"]) == ("Fail", 0)
    assert result["info"] == f"Persistence off; test summary: {skipped}"
