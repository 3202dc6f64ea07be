"""The parsers on real captures: every value asserted here was read from the file by eye.

Fixtures (shared/fixtures/gpu, see the READMEs there): an H200 on driver 580.159.04 (-q -x,
-q, --query-gpu CSV, a `$ command` capture), public captures of an H100 80GB HBM3 on 590.48.01
and an L40S on 595.80 (idle and under load), and two kernel/device-plugin log excerpts.
"""

import pytest

from poc.probes.facts import FACTS_FORMAT, GpuFacts
from poc.probes.parsers import detect, merge_nodes, parse_output
from poc.probes.parsers.capture import split_sections
from tests.probes.gpu_fixtures import (
    ALL,
    DMESG_XID_79,
    H100_CAPTURE,
    H200_CSV,
    H200_MISC,
    H200_TEXT,
    H200_XML,
    L40S_CAPTURE,
    PLUGIN_XID_48,
    fixture_text,
)

H200_UUID = "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"
MASKED_UUID = "GPU-00000000-0000-0000-0000-000000000000"
ALL_REASONS = {
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
    "sync_boost",
    "display_clock_setting",
}


def only_gpu(relative: str) -> GpuFacts:
    node = parse_output(fixture_text(relative))
    assert len(node["gpus"]) == 1
    return node["gpus"][0]


@pytest.mark.parametrize(
    ("relative", "kind"),
    [
        (H200_XML, "smi-xml"),
        (H200_TEXT, "smi-text"),
        (H200_CSV, "query-csv"),
        (H200_MISC, "capture"),
        (H100_CAPTURE, "capture"),
        (L40S_CAPTURE, "capture"),
        (DMESG_XID_79, "kernel-log"),
        (PLUGIN_XID_48, "kernel-log"),
    ],
)
def test_every_fixture_is_detected_as_what_it_is(relative: str, kind: str) -> None:
    assert detect(fixture_text(relative)) == kind


@pytest.mark.parametrize("relative", ALL)
def test_every_fixture_parses_to_the_fact_format(relative: str) -> None:
    node = parse_output(fixture_text(relative))
    assert node["format"] == FACTS_FORMAT
    assert node["sources"]
    assert node["warnings"] == []


# --- H200, driver 580 ----------------------------------------------------------------------


def test_h200_xml() -> None:
    node = parse_output(fixture_text(H200_XML))
    assert node["driver_version"] == "580.159.04"
    assert node["cuda_version"] == "13.0"
    assert node["sources"] == ["nvidia-smi -q -x"]
    gpu = node["gpus"][0]
    assert gpu["index"] == 0  # position: the XML carries no <index>
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["uuid"] == H200_UUID
    assert gpu["serial"] == "1653724066869"
    assert gpu["pci_bus_id"] == "00000000:00:06.0"
    assert gpu["pci_device_id"] == "0x2335"  # <pci_device_id>233510DE</pci_device_id>
    assert gpu["memory_total_mib"] == 143771
    assert gpu["memory_used_mib"] == 0
    assert gpu["persistence_mode"] is True
    assert gpu["mig_mode_current"] is False
    assert gpu["mig_mode_pending"] is False
    assert gpu["mig_devices"] == []  # <mig_devices>None</mig_devices>
    assert gpu["ecc_mode_current"] is True
    assert gpu["ecc_mode_pending"] is True
    assert gpu["ecc_volatile_corrected"] == 0
    assert gpu["ecc_volatile_uncorrected"] == 0
    assert gpu["ecc_aggregate_corrected"] == 0
    assert gpu["ecc_aggregate_uncorrected"] == 0
    assert gpu["remapped_rows_correctable"] == 0
    assert gpu["remapped_rows_uncorrectable"] == 0
    assert gpu["remapped_rows_pending"] is False
    assert gpu["remapped_rows_failure"] is False
    assert gpu["pcie_gen_current"] == 5
    assert gpu["pcie_gen_max"] == 5
    assert gpu["pcie_width_current"] == 16
    assert gpu["pcie_width_max"] == 16
    assert gpu["power_draw_w"] == pytest.approx(133.29)  # average_power_draw
    assert gpu["power_limit_w"] == pytest.approx(700.0)
    assert gpu["temperature_c"] == pytest.approx(41.0)
    assert gpu["sm_clock_mhz"] == 1980
    assert gpu["sm_clock_max_mhz"] == 1980
    assert gpu["utilization_gpu_pct"] == pytest.approx(0.0)
    assert set(gpu["clock_event_reasons"]) == ALL_REASONS
    assert gpu["clock_event_reasons"]["gpu_idle"] is True
    assert not any(
        state for name, state in gpu["clock_event_reasons"].items() if name != "gpu_idle"
    )
    assert gpu["nvlink_links"] == []


def test_h200_xml_reports_na_as_unknown_never_zero() -> None:
    gpu = only_gpu(H200_XML)
    # <retired_count>N/A</retired_count>, <pending_retirement>N/A</pending_retirement>:
    # Hopper uses row remapping, retired pages are not reported.
    assert gpu["retired_pages_single_bit"] is None
    assert gpu["retired_pages_double_bit"] is None
    assert gpu["retired_pages_pending"] is None
    # <fabric><state>N/A</state><status>N/A</status>: no NVSwitch fabric on this VM.
    assert gpu["fabric_state"] is None
    assert gpu["fabric_status"] is None
    # -q -x does not print the compute capability at all.
    assert gpu["compute_capability"] is None


def test_h200_text() -> None:
    node = parse_output(fixture_text(H200_TEXT))
    assert node["driver_version"] == "580.159.04"
    assert node["cuda_version"] == "13.0"
    gpu = node["gpus"][0]
    assert gpu["index"] == 0
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["uuid"] == H200_UUID
    assert gpu["pci_bus_id"] == "00000000:00:06.0"
    assert gpu["pci_device_id"] == "0x2335"  # Device Id : 0x233510DE
    assert gpu["memory_total_mib"] == 143771
    assert gpu["pcie_gen_current"] == 5
    assert gpu["pcie_gen_max"] == 5
    assert gpu["pcie_width_max"] == 16
    # The -q run came moments after -q -x: its changing readings differ.
    assert gpu["temperature_c"] == pytest.approx(40.0)
    assert gpu["power_draw_w"] == pytest.approx(131.37)  # Average Power Draw
    assert gpu["sm_clock_mhz"] == 525
    assert gpu["power_limit_w"] == pytest.approx(700.0)
    assert gpu["clock_event_reasons"]["gpu_idle"] is True
    # "HW Thermal Slowdown" is indented under "HW Slowdown" and still read.
    assert gpu["clock_event_reasons"]["hw_thermal_slowdown"] is False
    assert gpu["clock_event_reasons"]["hw_power_brake_slowdown"] is False
    assert set(gpu["clock_event_reasons"]) == ALL_REASONS
    assert gpu["retired_pages_single_bit"] is None  # Single Bit ECC : N/A
    assert gpu["retired_pages_pending"] is None  # Pending Page Blacklist : N/A
    assert gpu["fabric_state"] is None
    assert gpu["remapped_rows_pending"] is False


def test_h200_query_csv() -> None:
    node = parse_output(fixture_text(H200_CSV))
    assert node["driver_version"] == "580.159.04"
    assert node["cuda_version"] is None  # --query-gpu has no CUDA version field
    gpu = node["gpus"][0]
    assert gpu["index"] == 0
    assert gpu["uuid"] == H200_UUID
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["serial"] == "1653724066869"
    assert gpu["pci_bus_id"] == "00000000:00:06.0"
    assert gpu["memory_total_mib"] == 143771  # "143771 MiB"
    assert gpu["memory_used_mib"] == 0
    assert gpu["utilization_gpu_pct"] == pytest.approx(0.0)
    assert gpu["temperature_c"] == pytest.approx(41.0)
    assert gpu["power_draw_w"] == pytest.approx(133.27)  # "133.27 W"
    assert gpu["power_limit_w"] == pytest.approx(700.0)
    assert gpu["sm_clock_mhz"] == 1980  # asked as clocks.sm, printed as clocks.current.sm
    assert gpu["sm_clock_max_mhz"] == 1980
    assert gpu["ecc_mode_current"] is True
    assert gpu["ecc_volatile_uncorrected"] == 0
    assert gpu["ecc_volatile_corrected"] == 0
    assert gpu["mig_mode_current"] is False
    assert gpu["persistence_mode"] is True
    assert gpu["compute_capability"] == "9.0"
    # Not asked for: unknown, not zero.
    assert gpu["pcie_gen_current"] is None
    assert gpu["pci_device_id"] is None
    assert gpu["remapped_rows_pending"] is None
    assert gpu["clock_event_reasons"] == {}


def test_h200_xml_text_and_csv_agree_on_the_fields_all_three_carry() -> None:
    xml, text, csv = (only_gpu(name) for name in (H200_XML, H200_TEXT, H200_CSV))
    shared = (
        "index",
        "name",
        "uuid",
        "serial",
        "pci_bus_id",
        "memory_total_mib",
        "memory_used_mib",
        "persistence_mode",
        "mig_mode_current",
        "ecc_mode_current",
        "ecc_volatile_corrected",
        "ecc_volatile_uncorrected",
        "power_limit_w",
        "sm_clock_max_mhz",
    )
    for field in shared:
        assert xml[field] == text[field] == csv[field], field
        assert xml[field] is not None, field
    # The XML and the text carry much more; all of it static must agree too.
    xml_and_text = (
        "pci_device_id",
        "mig_mode_pending",
        "ecc_mode_pending",
        "ecc_aggregate_corrected",
        "ecc_aggregate_uncorrected",
        "remapped_rows_correctable",
        "remapped_rows_uncorrectable",
        "remapped_rows_pending",
        "remapped_rows_failure",
        "retired_pages_single_bit",
        "retired_pages_double_bit",
        "retired_pages_pending",
        "pcie_gen_current",
        "pcie_gen_max",
        "pcie_width_current",
        "pcie_width_max",
        "fabric_state",
        "fabric_status",
        "clock_event_reasons",
        "mig_devices",
    )
    for field in xml_and_text:
        assert xml[field] == text[field], field


def test_h200_outputs_merge_into_one_gpu() -> None:
    documents = [parse_output(fixture_text(name)) for name in (H200_XML, H200_CSV, H200_MISC)]
    node = merge_nodes(documents)
    assert len(node["gpus"]) == 1
    gpu = node["gpus"][0]
    assert gpu["compute_capability"] == "9.0"  # only the CSV has it
    assert gpu["pci_device_id"] == "0x2335"  # only the XML has it
    assert gpu["power_draw_w"] == pytest.approx(133.27)  # the CSV came later
    assert node["cuda_version"] == "13.0"
    assert node["sources"] == [
        "nvidia-smi -q -x",
        "nvidia-smi --query-gpu",
        "nvidia-smi -L",
        "nvidia-smi --version",
    ]


def test_h200_misc_capture_reads_the_sections_it_knows() -> None:
    node = parse_output(fixture_text(H200_MISC))
    assert node["driver_version"] == "580.159.04"  # nvidia-smi --version
    assert node["cuda_version"] == "13.0"
    assert [(gpu["index"], gpu["name"], gpu["uuid"]) for gpu in node["gpus"]] == [
        (0, "NVIDIA H200", H200_UUID)
    ]
    # The table view, topo -m, uname, lscpu and the rest are not read.
    assert node["sources"] == ["nvidia-smi -L", "nvidia-smi --version"]


def test_h200_misc_capture_sections() -> None:
    commands = [section.command for section in split_sections(fixture_text(H200_MISC))]
    assert commands[:4] == [
        "nvidia-smi",
        "nvidia-smi -L",
        "nvidia-smi topo -m",
        "nvidia-smi --version",
    ]
    assert "cat /proc/driver/nvidia/version" in commands
    assert commands[-1] == "ls /dev/nvidia*"
    assert len(commands) == 12


# --- H100 80GB HBM3, driver 590 --------------------------------------------------------------


def test_h100_capture() -> None:
    node = parse_output(fixture_text(H100_CAPTURE))
    assert node["driver_version"] == "590.48.01"
    assert node["cuda_version"] == "13.1"
    assert node["host"] is None  # masked: hostname [N/A]
    gpu = node["gpus"][0]
    assert gpu["index"] == 0
    assert gpu["name"] == "NVIDIA H100 80GB HBM3"
    assert gpu["uuid"] == MASKED_UUID
    assert gpu["serial"] == "0000000000000"
    assert gpu["pci_bus_id"] == "00000000:00:09.0"
    assert gpu["pci_device_id"] == "0x2330"  # 0x233010DE
    assert gpu["memory_total_mib"] == 81559
    assert gpu["compute_capability"] == "9.0"
    assert gpu["persistence_mode"] is True
    assert gpu["mig_mode_current"] is False
    assert gpu["ecc_mode_current"] is True
    assert gpu["ecc_volatile_uncorrected"] == 0
    assert gpu["ecc_aggregate_uncorrected"] == 0
    assert gpu["remapped_rows_correctable"] == 0
    assert gpu["remapped_rows_uncorrectable"] == 0
    assert gpu["remapped_rows_pending"] is False
    assert gpu["remapped_rows_failure"] is False
    assert gpu["retired_pages_pending"] is None  # [N/A]
    assert gpu["pcie_gen_current"] == 5
    assert gpu["pcie_gen_max"] == 5
    assert gpu["pcie_width_current"] == 16
    assert gpu["pcie_width_max"] == 16
    assert gpu["power_limit_w"] == pytest.approx(700.0)
    assert gpu["sm_clock_max_mhz"] == 1980
    assert gpu["fabric_state"] == "Completed"
    assert gpu["fabric_status"] == "Success"


def test_h100_capture_keeps_the_load_phase_readings() -> None:
    gpu = only_gpu(H100_CAPTURE)
    # load :: query-gpu, the last section holding them.
    assert gpu["temperature_c"] == pytest.approx(59.0)
    assert gpu["power_draw_w"] == pytest.approx(631.95)
    assert gpu["utilization_gpu_pct"] == pytest.approx(100.0)
    assert gpu["sm_clock_mhz"] == 1980
    assert gpu["memory_used_mib"] == 19818
    # Idle, the GPU was idle-clocked (gpu_idle Active); under load it is not.
    assert gpu["clock_event_reasons"]["gpu_idle"] is False
    assert set(gpu["clock_event_reasons"]) == ALL_REASONS


def test_h100_capture_reads_18_nvlinks() -> None:
    links = only_gpu(H100_CAPTURE)["nvlink_links"]
    assert [link["link"] for link in links] == list(range(18))
    assert all(link["active"] for link in links)
    assert {link["speed_gbps"] for link in links} == {26.562}


def test_h100_idle_sections_on_their_own() -> None:
    sections = {s.label: s for s in split_sections(fixture_text(H100_CAPTURE))}
    idle_text = parse_output(sections["idle: nvidia-smi -q"].body)
    gpu = idle_text["gpus"][0]
    assert gpu["clock_event_reasons"]["gpu_idle"] is True
    assert gpu["temperature_c"] == pytest.approx(41.0)
    assert gpu["power_draw_w"] == pytest.approx(69.85)
    # 590's -q prints no "Inactive Correctable Error" lines; the counts are still read.
    assert gpu["remapped_rows_correctable"] == 0
    idle_csv = [label for label in sections if label.startswith("idle: nvidia-smi --query-gpu")]
    csv_gpu = parse_output(sections[idle_csv[0]].body)["gpus"][0]
    assert csv_gpu["power_draw_w"] == pytest.approx(69.85)
    assert csv_gpu["clock_event_reasons"]["gpu_idle"] is True
    assert csv_gpu["pci_device_id"] == "0x2330"
    assert csv_gpu["fabric_state"] == "Completed"


def test_h100_capture_ignores_sections_it_does_not_read() -> None:
    node = parse_output(fixture_text(H100_CAPTURE))
    assert not any("pmon" in source or "topo" in source for source in node["sources"])
    assert not any("retired-pages" in source for source in node["sources"])
    assert "capabilities: nvidia-smi nvlink -s" in node["sources"]
    assert "load: nvidia-smi -q" in node["sources"]


# --- L40S, driver 595 ----------------------------------------------------------------------


def test_l40s_capture() -> None:
    node = parse_output(fixture_text(L40S_CAPTURE))
    assert node["driver_version"] == "595.80"
    assert node["cuda_version"] == "13.2"
    gpu = node["gpus"][0]
    assert gpu["name"] == "NVIDIA L40S"
    assert gpu["pci_bus_id"] == "00000000:01:00.0"
    assert gpu["pci_device_id"] == "0x26b9"  # 0x26B910DE
    assert gpu["memory_total_mib"] == 46068
    assert gpu["compute_capability"] == "8.9"
    assert gpu["persistence_mode"] is False
    assert gpu["pcie_gen_current"] == 4
    assert gpu["pcie_gen_max"] == 4
    assert gpu["pcie_width_current"] == 16
    assert gpu["power_limit_w"] == pytest.approx(350.0)
    assert gpu["sm_clock_max_mhz"] == 2520
    assert gpu["ecc_mode_current"] is True
    assert gpu["remapped_rows_correctable"] == 0
    # Under load (ffmpeg NVENC): the load query-gpu row.
    assert gpu["temperature_c"] == pytest.approx(54.0)
    assert gpu["power_draw_w"] == pytest.approx(110.23)
    assert gpu["utilization_gpu_pct"] == pytest.approx(9.0)
    assert gpu["memory_used_mib"] == 1235


def test_l40s_capture_reports_what_it_lacks_as_unknown() -> None:
    gpu = only_gpu(L40S_CAPTURE)
    assert gpu["mig_mode_current"] is None  # MIG Mode Current : N/A, [N/A] in CSV
    assert gpu["mig_mode_pending"] is None
    assert gpu["fabric_state"] is None
    assert gpu["fabric_status"] is None
    assert gpu["retired_pages_single_bit"] is None
    # "Device does not have or support Nvlink": no links.
    assert gpu["nvlink_links"] == []


# --- logs ----------------------------------------------------------------------------------


def test_dmesg_xid_79() -> None:
    node = parse_output(fixture_text(DMESG_XID_79))
    assert node["gpus"] == []
    assert node["xid_events"] == [
        {
            "code": 79,
            "pci_bus_id": "PCI:0000:ca:00",
            "gpu_index": None,
            "message": "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
            "timestamp": None,
        }
    ]


def test_device_plugin_xid_48() -> None:
    node = parse_output(fixture_text(PLUGIN_XID_48))
    assert len(node["xid_events"]) == 1  # the "marked unhealthy" line is not an Xid
    event = node["xid_events"][0]
    assert event["code"] == 48
    assert event["pci_bus_id"] is None
    assert "GPU-e3dbf294-2783-f38b-4274-5bc836df5be1" in event["message"]


def test_xid_events_resolve_to_the_gpu_by_bus_id_and_by_uuid() -> None:
    gpus = parse_output(
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-2222-3333-4444-555555555555)\n"
        "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-e3dbf294-2783-f38b-4274-5bc836df5be1)\n"
    )
    buses = parse_output(
        "index, pci.bus_id, uuid\n"
        "0, 00000000:CA:00.0, GPU-11111111-2222-3333-4444-555555555555\n"
        "1, 00000000:CB:00.0, GPU-e3dbf294-2783-f38b-4274-5bc836df5be1\n"
    )
    node = merge_nodes(
        [
            gpus,
            buses,
            parse_output(fixture_text(DMESG_XID_79)),
            parse_output(fixture_text(PLUGIN_XID_48)),
        ]
    )
    assert [(event["code"], event["gpu_index"]) for event in node["xid_events"]] == [
        (79, 0),  # PCI:0000:ca:00 is 00000000:CA:00.0
        (48, 1),  # named by UUID
    ]
