"""Text outputs as public captures show them, beyond the shapes the shared captures hold:
nvidia-smi's notices about a troubled GPU standing before or among the lines of its output
(a corrupted infoROM, a GPU it cannot reach), `nvlink -s` on a GPU in MIG mode, and a
`dcgmi diag -j` document of a diagnostic that could not run.

Each input is made in the test from the real H200 captures, changed the way the named driver
or tool version prints it, or written from the line format the public outputs show.
"""

import json

import pytest

from poc.probes.parsers import ParseError, detect, parse_output
from tests.probes.gpu_fixtures import H200_CSV, fixture_text

INFOROM = "WARNING: infoROM is corrupted at gpu 0000:00:06.0"
LOST = "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"
UUIDS = (
    "GPU-67a571b1-79ee-1016-8ea3-c1fff3f1c1d2",
    "GPU-3e34e62f-d88e-f448-415e-be2cbf2c6178",
    "GPU-2d540dd6-583b-cf11-80dd-cc28edc1dd62",
)


def _gpu_lines(*indexes: int) -> list[str]:
    return [f"GPU {i}: NVIDIA A100-SXM4-40GB (UUID: {UUIDS[i]})" for i in indexes]


def test_query_csv_after_an_inforom_warning() -> None:
    """Drivers from R384 to R450 print "WARNING: infoROM is corrupted at gpu ..." before any
    output of a GPU whose infoROM is bad, --query-gpu CSV included (exit status 14)."""
    clean = fixture_text(H200_CSV)
    text = f"{INFOROM}\n{clean}"
    assert detect(text) == "query-csv"
    node = parse_output(text)
    expected = parse_output(clean)
    assert node["gpus"] == expected["gpus"]
    assert node["gpus"][0]["memory_total_mib"] == 143771
    assert node["driver_version"] == "580.159.04"
    assert node["warnings"] == [f"nvidia-smi: {INFOROM}"]


def test_query_csv_row_of_an_unreachable_gpu_keeps_the_other_rows() -> None:
    """A GPU fallen off the bus: nvidia-smi (R4xx-R5xx) prints "Unable to determine the device
    handle for GPU ...: Unknown Error" where its row would be, and the other GPUs' rows."""
    text = "\n".join(
        [
            "index, pci.bus_id, memory.total [MiB]",
            "0, 00000000:1A:00.0, 40960 MiB",
            LOST,
            "2, 00000000:5D:00.0, 40960 MiB",
        ]
    )
    assert detect(text) == "query-csv"
    node = parse_output(text)
    assert [(g["index"], g["pci_bus_id"]) for g in node["gpus"]] == [
        (0, "00000000:1A:00.0"),
        (2, "00000000:5D:00.0"),
    ]
    assert node["warnings"] == [f"nvidia-smi: {LOST}"]


def test_without_an_index_column_a_missing_row_leaves_indexes_unknown() -> None:
    """The same lost GPU in a query that names no index: positions are no longer indexes."""
    text = "\n".join(
        [
            "pci.bus_id, memory.total [MiB]",
            "00000000:1A:00.0, 40960 MiB",
            LOST,
            "00000000:5D:00.0, 40960 MiB",
        ]
    )
    node = parse_output(text)
    assert [g["index"] for g in node["gpus"]] == [None, None]
    assert [g["memory_total_mib"] for g in node["gpus"]] == [40960, 40960]
    assert any("indexes are unknown" in warning for warning in node["warnings"])


def test_only_notices_is_refused_with_the_notice() -> None:
    """Every GPU unreachable: nothing but the notice, which the refusal quotes."""
    with pytest.raises(ParseError, match="Unable to determine the device handle"):
        parse_output("index, name\n" + LOST + "\n", kind="query-csv")
    with pytest.raises(ParseError, match="line 2: 1 values for 2 columns"):
        parse_output("index, name\n1\n", kind="query-csv")


def test_list_with_an_inforom_warning_and_an_unreachable_gpu() -> None:
    """`nvidia-smi -L` on a node with a corrupted infoROM and a GPU it cannot reach (the
    R470-R535 wording): the warning first, the unreachable GPU's line in its place."""
    lines = _gpu_lines(0, 2)
    text = "\n".join([INFOROM, lines[0], LOST, lines[1]]) + "\n"
    assert detect(text) == "smi-list"
    node = parse_output(text)
    assert [(g["index"], g["uuid"]) for g in node["gpus"]] == [(0, UUIDS[0]), (2, UUIDS[2])]
    assert node["warnings"] == [f"nvidia-smi: {INFOROM}", f"nvidia-smi: {LOST}"]


def test_nvlink_outputs_after_an_inforom_warning_are_detected() -> None:
    """`nvlink -s` and `nvlink -e` (A100, R535) on a node whose driver warns of a corrupted
    infoROM first."""
    status = "\n".join([INFOROM, *_gpu_lines(0), "\t Link 0: 25 GB/s", "\t Link 1: <inactive>"])
    assert detect(status) == "nvlink-status"
    node = parse_output(status)
    assert node["warnings"] == [f"nvidia-smi: {INFOROM}"]
    links = node["gpus"][0]["nvlink_links"]
    assert [(link["link"], link["active"], link["speed_gbps"]) for link in links] == [
        (0, True, 25.0),
        (1, False, None),
    ]
    errors = "\n".join(
        [INFOROM, *_gpu_lines(0), "\t Link 0: Replay Errors: 0", "\t Link 0: CRC Errors: 4"]
    )
    assert detect(errors) == "nvlink-errors"
    node = parse_output(errors)
    assert node["warnings"] == [f"nvidia-smi: {INFOROM}"]
    links = node["gpus"][0]["nvlink_links"]
    assert links[0]["errors"] == {"replay_errors": 0, "crc_errors": 4}


def test_nvlink_status_in_mig_mode_says_the_links_are_unknown() -> None:
    """R590 on an H100 SXM in MIG mode answers `nvlink -s` with "Nvlink queries are not
    supported for Devices in MIG mode": the GPU has NVLink, the driver just does not say."""
    text = _gpu_lines(0)[0] + "\nNvlink queries are not supported for Devices in MIG mode\n"
    assert detect(text) == "nvlink-status"
    node = parse_output(text)
    assert node["gpus"][0]["nvlink_links"] == []
    assert node["warnings"] == [
        "GPU 0: the driver does not report NVLink links in MIG mode: its links are unknown,"
        " not absent"
    ]


@pytest.mark.parametrize(
    "document",
    [
        # DCGM 2.x and 3.x: the reason inside the diagnostic object.
        {
            "DCGM GPU Diagnostic": {
                "runtime_error": "Couldn't  find the nvvs binary",
                "version": "3.1.7",
            }
        },
        # DCGM 4.x: at the top level, beside the metadata.
        {
            "DCGM Diagnostic": {},
            "runtime_error": "Couldn't  find the nvvs binary",
            "metadata": {"version": "4.2.3"},
        },
    ],
)
def test_dcgm_diagnostic_that_did_not_run_says_why(document: dict[str, object]) -> None:
    """dcgmi diag -j writes "runtime_error" and no test when the diagnostic could not run."""
    text = json.dumps(document)
    assert detect(text) == "dcgm-json"
    with pytest.raises(ParseError, match="^dcgmi diag did not run: Couldn't find the nvvs binary$"):
        parse_output(text)
