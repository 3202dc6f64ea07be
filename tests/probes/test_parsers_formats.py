"""The parsers on the formats beyond the captures at hand: multi-GPU nodes, MIG, older and
newer drivers, the other tools (nvlink, kernel log, DCGM), the agent bundle and merging.

Inputs here are built in the test. Where one follows NVIDIA's documented output rather than a
capture, its docstring says so.
"""

import json
from typing import Any

import pytest

from poc.probes.facts import NodeFacts, new_gpu, new_node
from poc.probes.parsers import (
    KINDS,
    PARSER_VERSION,
    ParseError,
    detect,
    merge_nodes,
    parse_bundle,
    parse_output,
    parse_outputs,
)
from poc.probes.parsers import values as v
from poc.probes.parsers.detect import command_kind
from poc.probes.parsers.query_csv import parse_query_csv
from tests.probes.gpu_fixtures import (
    BUSES,
    H200_CSV,
    H200_XML,
    eight_gpu_xml,
    fixture_text,
    h200_gpu_element,
)

H100 = "NVIDIA H100 80GB HBM3"


def uuid(n: int) -> str:
    return f"GPU-{n:08x}-aaaa-bbbb-cccc-{n:012x}"


# --- multi-GPU nodes ---------------------------------------------------------------------


def test_eight_gpu_xml_gives_eight_distinct_gpus_in_order() -> None:
    node = parse_output(eight_gpu_xml())
    gpus = node["gpus"]
    assert [gpu["index"] for gpu in gpus] == list(range(8))
    assert [gpu["pci_bus_id"] for gpu in gpus] == [f"00000000:{bus}:00.0" for bus in BUSES]
    assert len({gpu["uuid"] for gpu in gpus}) == 8
    assert len({gpu["serial"] for gpu in gpus}) == 8
    assert all(gpu["memory_total_mib"] == 143771 for gpu in gpus)
    assert all(gpu["pci_device_id"] == "0x2335" for gpu in gpus)


def test_eight_gpu_xml_index_is_position_not_minor_number() -> None:
    """All eight copies keep <minor_number>0</minor_number>: the index must not follow it."""
    gpus = parse_output(eight_gpu_xml())["gpus"]
    assert [gpu["index"] for gpu in gpus] == list(range(8))


def eight_gpu_csv(fields: str = "index, uuid, pci.bus_id, name, memory.total [MiB]") -> str:
    rows = [fields]
    for index, bus in enumerate(BUSES):
        rows.append(f"{index}, {uuid(index)}, 00000000:{bus}:00.0, {H100}, 81559 MiB")
    return "\n".join(rows) + "\n"


def test_eight_gpu_csv_gives_eight_distinct_gpus() -> None:
    gpus = parse_output(eight_gpu_csv())["gpus"]
    assert [gpu["index"] for gpu in gpus] == list(range(8))
    assert [gpu["uuid"] for gpu in gpus] == [uuid(n) for n in range(8)]
    assert [gpu["pci_bus_id"] for gpu in gpus] == [f"00000000:{bus}:00.0" for bus in BUSES]
    assert {gpu["memory_total_mib"] for gpu in gpus} == {81559}


def test_eight_gpu_csv_with_indexes_out_of_order_keeps_the_printed_index() -> None:
    lines = eight_gpu_csv().splitlines()
    shuffled = "\n".join([lines[0], *reversed(lines[1:])])
    gpus = parse_output(shuffled)["gpus"]
    assert [gpu["index"] for gpu in gpus] == list(range(7, -1, -1))
    assert gpus[0]["uuid"] == uuid(7)


def test_eight_gpu_xml_and_csv_merge_by_bus_id() -> None:
    csv = "\n".join(["pci.bus_id, compute_cap"] + [f"00000000:{bus}:00.0, 9.0" for bus in BUSES])
    node = parse_outputs([("nvidia-smi -q -x", eight_gpu_xml()), ("query", csv)])
    assert len(node["gpus"]) == 8
    assert all(gpu["compute_capability"] == "9.0" for gpu in node["gpus"])
    assert all(gpu["memory_total_mib"] == 143771 for gpu in node["gpus"])


# --- MIG -----------------------------------------------------------------------------------


def mig_device(index: int, gi: int, ci: int, sm: int, memory: int) -> str:
    return f"""
            <mig_device>
                <index>{index}</index>
                <gpu_instance_id>{gi}</gpu_instance_id>
                <compute_instance_id>{ci}</compute_instance_id>
                <device_attributes>
                    <shared>
                        <multiprocessor_count>{sm}</multiprocessor_count>
                        <copy_engine_count>1</copy_engine_count>
                        <encoder_count>0</encoder_count>
                        <decoder_count>1</decoder_count>
                        <ofa_count>0</ofa_count>
                        <jpg_count>1</jpg_count>
                    </shared>
                </device_attributes>
                <ecc_error_count>
                    <volatile_count>
                        <sram_uncorrectable>0</sram_uncorrectable>
                    </volatile_count>
                </ecc_error_count>
                <fb_memory_usage>
                    <total>{memory} MiB</total>
                    <reserved>0 MiB</reserved>
                    <used>13 MiB</used>
                    <free>{memory - 13} MiB</free>
                </fb_memory_usage>
                <bar1_memory_usage>
                    <total>32767 MiB</total>
                    <used>0 MiB</used>
                    <free>32767 MiB</free>
                </bar1_memory_usage>
            </mig_device>"""


def mig_gpu(bus: str, gpu_uuid: str, devices: list[str]) -> str:
    return f"""
    <gpu id="00000000:{bus}:00.0">
        <product_name>{H100}</product_name>
        <persistence_mode>Enabled</persistence_mode>
        <mig_mode>
            <current_mig>Enabled</current_mig>
            <pending_mig>Enabled</pending_mig>
        </mig_mode>
        <mig_devices>{"".join(devices)}
        </mig_devices>
        <uuid>{gpu_uuid}</uuid>
        <pci>
            <pci_device_id>233010DE</pci_device_id>
            <pci_bus_id>00000000:{bus}:00.0</pci_bus_id>
        </pci>
        <fb_memory_usage>
            <total>81559 MiB</total>
            <used>N/A</used>
        </fb_memory_usage>
        <utilization>
            <gpu_util>N/A</gpu_util>
        </utilization>
    </gpu>"""


def mig_xml() -> str:
    """Two MIG-enabled H100s, after NVIDIA's documented `nvidia-smi -q -x` output (the
    nvsmi_device DTD and the MIG user guide), not a capture: GPU 0 split 3g.40gb + 2g.20gb +
    1g.10gb, GPU 1 split into seven 1g.10gb instances. The parent reports N/A for used memory
    and utilization, as it does in MIG mode."""
    mixed = [
        mig_device(0, 2, 0, 60, 40192),
        mig_device(1, 3, 0, 32, 20096),
        mig_device(2, 9, 0, 16, 9984),
    ]
    seven = [mig_device(n, 7 + n, 0, 16, 9984) for n in range(7)]
    return (
        '<?xml version="1.0" ?>\n'
        '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n'
        "<nvidia_smi_log>\n"
        "    <driver_version>550.90.07</driver_version>\n"
        "    <cuda_version>12.4</cuda_version>\n"
        "    <attached_gpus>2</attached_gpus>"
        + mig_gpu("18", uuid(0), mixed)
        + mig_gpu("2A", uuid(1), seven)
        + "\n</nvidia_smi_log>\n"
    )


def mig_list() -> str:
    """`nvidia-smi -L` for the same node, after the documented format (MIG user guide)."""
    lines = [f"GPU 0: {H100} (UUID: {uuid(0)})"]
    for n, profile in enumerate(("3g.40gb", "2g.20gb", "1g.10gb")):
        lines.append(f"  MIG {profile:<11} Device  {n}: (UUID: MIG-{n:08x}-1111-2222-3333-4444)")
    lines.append(f"GPU 1: {H100} (UUID: {uuid(1)})")
    for n in range(7):
        lines.append(f"  MIG 1g.10gb     Device  {n}: (UUID: MIG-{n:08x}-5555-6666-7777-8888)")
    return "\n".join(lines) + "\n"


def test_mig_xml_reads_every_mig_device() -> None:
    node = parse_output(mig_xml())
    first, second = node["gpus"]
    assert first["mig_mode_current"] is True
    assert first["mig_mode_pending"] is True
    assert [(d["gpu_instance_id"], d["compute_instance_id"]) for d in first["mig_devices"]] == [
        (2, 0),
        (3, 0),
        (9, 0),
    ]
    assert [d["memory_total_mib"] for d in first["mig_devices"]] == [40192, 20096, 9984]
    # The XML names no profile: unknown until -L is read.
    assert {d["profile"] for d in first["mig_devices"]} == {None}
    assert len(second["mig_devices"]) == 7
    assert [d["gpu_instance_id"] for d in second["mig_devices"]] == list(range(7, 14))
    # Used memory and utilization of a MIG parent are N/A: unknown, not 0.
    assert first["memory_used_mib"] is None
    assert first["utilization_gpu_pct"] is None
    assert first["memory_total_mib"] == 81559


def test_mig_list_names_the_profiles() -> None:
    node = parse_output(mig_list())
    assert detect(mig_list()) == "smi-list"
    first, second = node["gpus"]
    assert [d["profile"] for d in first["mig_devices"]] == ["3g.40gb", "2g.20gb", "1g.10gb"]
    assert first["mig_devices"][0]["uuid"] == "MIG-00000000-1111-2222-3333-4444"
    assert [d["profile"] for d in second["mig_devices"]] == ["1g.10gb"] * 7
    # A GPU listed with MIG devices has MIG mode on.
    assert first["mig_mode_current"] is True and second["mig_mode_current"] is True


def test_a_gpu_listed_without_mig_devices_says_nothing_of_its_mig_mode() -> None:
    text = "GPU 0: NVIDIA H200 (UUID: GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e)\n"
    assert parse_output(text)["gpus"][0]["mig_mode_current"] is None


def test_mig_xml_and_list_merge_profiles_onto_the_instances() -> None:
    node = parse_outputs([("nvidia-smi -q -x", mig_xml()), ("nvidia-smi -L", mig_list())])
    first = node["gpus"][0]["mig_devices"]
    assert [(d["profile"], d["gpu_instance_id"], d["memory_total_mib"]) for d in first] == [
        ("3g.40gb", 2, 40192),
        ("2g.20gb", 3, 20096),
        ("1g.10gb", 9, 9984),
    ]
    assert first[2]["uuid"] == "MIG-00000002-1111-2222-3333-4444"
    assert all(d["profile_id"] is None for d in first)  # no input names it


def test_mig_list_compute_instance_profiles_and_legacy_uuids() -> None:
    """R450 drivers wrote GPU and compute instance ids into the MIG UUID; a compute instance
    profile ("1c.3g.40gb") is reduced to its GPU instance profile."""
    text = (
        "GPU 0: A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n"
        "  MIG 1c.3g.20gb Device 0: (UUID: MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/1/0)\n"
        "  MIG 2c.3g.20gb Device 1: (UUID: MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/1/1)\n"
    )
    devices = parse_output(text)["gpus"][0]["mig_devices"]
    assert [(d["profile"], d["gpu_instance_id"], d["compute_instance_id"]) for d in devices] == [
        ("3g.20gb", 1, 0),
        ("3g.20gb", 1, 1),
    ]


MIG_TEXT = """
==============NVSMI LOG==============

Driver Version                            : 550.90.07
CUDA Version                              : 12.4

Attached GPUs                             : 1
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    GPU UUID                              : GPU-00000000-aaaa-bbbb-cccc-000000000000
    MIG Mode
        Current                           : Enabled
        Pending                           : Enabled
    MIG Device
        Index                             : 0
        GPU Instance ID                   : 2
        Compute Instance ID               : 0
        Device Attributes
            Shared
                Multiprocessor count      : 60
        FB Memory Usage
            Total                         : 40192 MiB
            Used                          : 13 MiB
    MIG Device
        Index                             : 1
        GPU Instance ID                   : 3
        Compute Instance ID               : 0
        Shared FB Memory Usage
            Total                         : 20096 MiB
            Used                          : 13 MiB
    FB Memory Usage
        Total                             : 81559 MiB
        Used                              : N/A
"""


def test_mig_devices_of_the_text_output() -> None:
    """`nvidia-smi -q` MIG Device blocks as the driver documents them; newer drivers call the
    memory block "Shared FB Memory Usage". The MIG blocks' memory must not shadow the GPU's."""
    gpu = parse_output(MIG_TEXT)["gpus"][0]
    assert gpu["mig_mode_current"] is True
    assert [(d["gpu_instance_id"], d["memory_total_mib"]) for d in gpu["mig_devices"]] == [
        (2, 40192),
        (3, 20096),
    ]
    assert gpu["memory_total_mib"] == 81559
    assert gpu["memory_used_mib"] is None


# --- older and newer drivers -----------------------------------------------------------------

OLD_XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
    <driver_version>470.82.01</driver_version>
    <cuda_version>11.4</cuda_version>
    <gpu id="00000000:07:00.0">
        <product_name>NVIDIA A100-SXM4-40GB</product_name>
        <uuid>GPU-0a0a0a0a-1111-2222-3333-444444444444</uuid>
        <pci>
            <pci_device_id>20B010DE</pci_device_id>
            <pci_bus_id>00000000:07:00.0</pci_bus_id>
            <pci_gpu_link_info>
                <pcie_gen>
                    <max_link_gen>4</max_link_gen>
                    <current_link_gen>3</current_link_gen>
                </pcie_gen>
                <link_widths>
                    <max_link_width>16x</max_link_width>
                    <current_link_width>8x</current_link_width>
                </link_widths>
            </pci_gpu_link_info>
        </pci>
        <clocks_throttle_reasons>
            <clocks_throttle_reason_gpu_idle>Not Active</clocks_throttle_reason_gpu_idle>
            <clocks_throttle_reason_hw_slowdown>Active</clocks_throttle_reason_hw_slowdown>
            <clocks_throttle_reason_hw_thermal_slowdown>Active</clocks_throttle_reason_hw_thermal_slowdown>
            <clocks_throttle_reason_display_clocks_setting>Not Active
            </clocks_throttle_reason_display_clocks_setting>
            <clocks_throttle_reason_unknown>Not Active</clocks_throttle_reason_unknown>
        </clocks_throttle_reasons>
        <ecc_errors>
            <volatile>
                <single_bit>
                    <device_memory>3</device_memory>
                    <register_file>0</register_file>
                    <total>3</total>
                </single_bit>
                <double_bit>
                    <device_memory>1</device_memory>
                    <total>1</total>
                </double_bit>
            </volatile>
            <aggregate>
                <single_bit><total>17</total></single_bit>
                <double_bit><total>2</total></double_bit>
            </aggregate>
        </ecc_errors>
        <retired_pages>
            <multiple_single_bit_retirement>
                <retired_count>0</retired_count>
            </multiple_single_bit_retirement>
            <double_bit_retirement>
                <retired_count>2</retired_count>
            </double_bit_retirement>
            <pending_blacklist>Yes</pending_blacklist>
        </retired_pages>
        <remapped_rows>
            <remapped_row_corr>1</remapped_row_corr>
            <remapped_row_unc>4</remapped_row_unc>
            <remapped_row_pending>Yes</remapped_row_pending>
            <remapped_row_failure>No</remapped_row_failure>
        </remapped_rows>
        <power_readings>
            <power_state>P0</power_state>
            <power_draw>312.46 W</power_draw>
            <power_limit>400.00 W</power_limit>
            <enforced_power_limit>350.00 W</enforced_power_limit>
        </power_readings>
        <temperature><gpu_temp>71 C</gpu_temp></temperature>
    </gpu>
</nvidia_smi_log>
"""


def test_older_xml_tag_names() -> None:
    """Tags of R470-era drivers (clocks_throttle_reasons, power_readings/power_draw,
    enforced_power_limit, single_bit/double_bit ECC totals, pending_blacklist)."""
    node = parse_output(OLD_XML)
    gpu = node["gpus"][0]
    assert node["driver_version"] == "470.82.01"
    assert gpu["pci_device_id"] == "0x20b0"
    assert gpu["clock_event_reasons"] == {
        "gpu_idle": False,
        "hw_slowdown": True,
        "hw_thermal_slowdown": True,
        "display_clock_setting": False,
    }
    assert (gpu["ecc_volatile_corrected"], gpu["ecc_volatile_uncorrected"]) == (3, 1)
    assert (gpu["ecc_aggregate_corrected"], gpu["ecc_aggregate_uncorrected"]) == (17, 2)
    assert gpu["retired_pages_single_bit"] == 0
    assert gpu["retired_pages_double_bit"] == 2
    assert gpu["retired_pages_pending"] is True
    assert gpu["remapped_rows_correctable"] == 1
    assert gpu["remapped_rows_uncorrectable"] == 4
    assert gpu["remapped_rows_pending"] is True
    assert gpu["power_draw_w"] == pytest.approx(312.46)
    assert gpu["power_limit_w"] == pytest.approx(350.0)  # the enforced limit
    assert (gpu["pcie_gen_current"], gpu["pcie_gen_max"]) == (3, 4)
    assert (gpu["pcie_width_current"], gpu["pcie_width_max"]) == (8, 16)
    assert gpu["temperature_c"] == pytest.approx(71.0)


def test_xml_pcie_gen_max_is_the_gpus_own_maximum() -> None:
    head, gpu, tail = h200_gpu_element()
    gpu = gpu.replace("<max_link_gen>5</max_link_gen>", "<max_link_gen>4</max_link_gen>")
    assert parse_output(head + gpu + tail)["gpus"][0]["pcie_gen_max"] == 5


def test_xml_ecc_counts_sum_sram_and_dram() -> None:
    head, gpu, tail = h200_gpu_element()
    gpu = (
        gpu.replace(
            "<sram_correctable>0</sram_correctable>", "<sram_correctable>2</sram_correctable>", 1
        )
        .replace(
            "<dram_correctable>0</dram_correctable>", "<dram_correctable>5</dram_correctable>", 1
        )
        .replace(
            "<dram_uncorrectable>0</dram_uncorrectable>",
            "<dram_uncorrectable>1</dram_uncorrectable>",
            1,
        )
        .replace(
            "<sram_uncorrectable_secded>0</sram_uncorrectable_secded>",
            "<sram_uncorrectable_secded>3</sram_uncorrectable_secded>",
            1,
        )
    )
    parsed = parse_output(head + gpu + tail)["gpus"][0]
    assert parsed["ecc_volatile_corrected"] == 7
    assert parsed["ecc_volatile_uncorrected"] == 4
    assert parsed["ecc_aggregate_corrected"] == 0  # only the volatile block changed


def test_ecc_totals_count_an_sram_total_once() -> None:
    counters = {
        "sram_uncorrectable": "2",
        "sram_uncorrectable_parity": "1",
        "sram_uncorrectable_secded": "1",
        "dram_uncorrectable": "3",
        "sram_threshold_exceeded": "No",
    }
    assert v.ecc_totals(counters) == (None, 5)
    assert v.ecc_totals({"sram_correctable": "N/A", "dram_correctable": "N/A"}) == (None, None)


OLD_TEXT = """
==============NVSMI LOG==============

Timestamp                                 : Mon Jan 10 10:00:00 2022
Driver Version                            : 470.82.01
CUDA Version                              : 11.4

Attached GPUs                             : 1
GPU 00000000:07:00.0
    Product Name                          : NVIDIA A100-SXM4-40GB
    Persistence Mode                      : Disabled
    GPU UUID                              : GPU-0a0a0a0a-1111-2222-3333-444444444444
    Clocks Throttle Reasons
        Idle                              : Not Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 5
                Total                     : 5
            Double Bit
                Device Memory             : 0
                Total                     : 0
    Retired Pages
        Single Bit ECC                    : 1
        Double Bit ECC                    : 0
        Pending Page Blacklist            : No
    Power Readings
        Power Management                  : Supported
        Power Draw                        : 55.12 W
        Power Limit                       : 400.00 W
        Enforced Power Limit              : 400.00 W
    Temperature
        GPU Current Temp                  : 33 C
"""


def test_older_text_labels() -> None:
    """Labels of R470-era `nvidia-smi -q` ("Clocks Throttle Reasons", "Power Readings" >
    "Power Draw", "Enforced Power Limit", Single/Double Bit ECC totals)."""
    gpu = parse_output(OLD_TEXT)["gpus"][0]
    assert gpu["persistence_mode"] is False
    assert gpu["clock_event_reasons"]["sw_power_cap"] is True
    assert gpu["clock_event_reasons"]["gpu_idle"] is False
    assert gpu["clock_event_reasons"]["hw_thermal_slowdown"] is False
    assert (gpu["ecc_volatile_corrected"], gpu["ecc_volatile_uncorrected"]) == (5, 0)
    assert gpu["retired_pages_single_bit"] == 1
    assert gpu["retired_pages_pending"] is False
    assert gpu["power_draw_w"] == pytest.approx(55.12)
    assert gpu["power_limit_w"] == pytest.approx(400.0)
    assert gpu["temperature_c"] == pytest.approx(33.0)


def test_text_with_tabs_crlf_ansi_and_narrow_label_column() -> None:
    text = (
        "\x1b[1m==============NVSMI LOG==============\x1b[0m\r\n"
        "Driver Version : 580.1\r\n"
        "GPU 00000000:3B:00.0\r\n"
        "\tProduct Name : NVIDIA H200\r\n"
        "\tFB Memory Usage\r\n"
        "\t\tTotal : 143771 MiB\r\n"
        "\tMIG Mode\r\n"
        "\t\tCurrent : [N/A]\r\n"
    )
    node = parse_output(text)
    gpu = node["gpus"][0]
    assert node["driver_version"] == "580.1"
    assert gpu["pci_bus_id"] == "00000000:3B:00.0"
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["memory_total_mib"] == 143771
    assert gpu["mig_mode_current"] is None


def test_text_with_several_gpus() -> None:
    block = fixture_text("h200/nvidia-smi-q-idle.txt")
    head, _, gpu = block.partition("GPU 00000000:00:06.0\n")
    copies = "".join(
        f"GPU 00000000:{bus}:00.0\n" + gpu.replace("00000000:00:06.0", f"00000000:{bus}:00.0")
        for bus in BUSES
    )
    gpus = parse_output(head + copies)["gpus"]
    assert [g["index"] for g in gpus] == list(range(8))
    assert [g["pci_bus_id"] for g in gpus] == [f"00000000:{bus}:00.0" for bus in BUSES]


# --- query-gpu CSV -------------------------------------------------------------------------


def test_csv_nounits() -> None:
    text = "index, memory.total, power.draw, clocks.sm, temperature.gpu, utilization.gpu\n"
    text += "0, 143771, 133.27, 1980, 41, 7\n"
    gpu = parse_output(text)["gpus"][0]
    assert gpu["memory_total_mib"] == 143771
    assert gpu["power_draw_w"] == pytest.approx(133.27)
    assert gpu["sm_clock_mhz"] == 1980
    assert gpu["temperature_c"] == pytest.approx(41.0)
    assert gpu["utilization_gpu_pct"] == pytest.approx(7.0)


def test_csv_noheader_needs_the_field_list() -> None:
    rows = (
        "0, GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e, 143771\n"
        "1, GPU-6c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e, 143771\n"
    )
    with pytest.raises(ParseError, match="field list"):
        parse_output(rows)
    node = parse_query_csv(rows, fields=["index", "uuid", "memory.total"])
    assert [gpu["index"] for gpu in node["gpus"]] == [0, 1]
    assert node["gpus"][1]["uuid"].startswith("GPU-6c8f")
    assert node["gpus"][0]["memory_total_mib"] == 143771


def test_csv_noheader_field_list_comes_from_the_command() -> None:
    command = "nvidia-smi --query-gpu=index,uuid,memory.total --format=csv,noheader,nounits"
    assert command_kind(command) == ("query-csv", ["index", "uuid", "memory.total"])
    node = parse_outputs([(command, "3, GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e, 143771\n")])
    assert node["gpus"][0]["index"] == 3


def test_csv_field_list_with_a_header_skips_the_header() -> None:
    text = fixture_text(H200_CSV)
    fields = text.splitlines()[0].replace("clocks.current.sm", "clocks.sm").split(",")
    fields = [field.split("[")[0].strip() for field in fields]
    node = parse_query_csv(text, fields=fields)
    assert len(node["gpus"]) == 1
    assert node["gpus"][0]["sm_clock_mhz"] == 1980


def test_csv_old_and_new_field_names() -> None:
    old = (
        "gpu_name, gpu_uuid, gpu_bus_id, clocks_throttle_reasons.hw_slowdown,"
        " clocks_throttle_reasons.hw_thermal_slowdown, power.draw.instant [W], power.limit [W],"
        " pcie.link.gen.max, remapped_rows.sbe, retired_pages.dbe\n"
        f"{H100}, {uuid(0)}, 00000000:18:00.0, Active, Not Active, 250.5 W, 700.00 W, 5, 2, 1\n"
    )
    gpu = parse_output(old)["gpus"][0]
    assert gpu["name"] == H100
    assert gpu["uuid"] == uuid(0)
    assert gpu["pci_bus_id"] == "00000000:18:00.0"
    assert gpu["clock_event_reasons"] == {"hw_slowdown": True, "hw_thermal_slowdown": False}
    assert gpu["power_draw_w"] == pytest.approx(250.5)
    assert gpu["power_limit_w"] == pytest.approx(700.0)
    assert gpu["pcie_gen_max"] == 5
    assert gpu["remapped_rows_correctable"] == 2
    assert gpu["retired_pages_double_bit"] == 1


def test_csv_prefers_the_gpus_own_pcie_maximum_and_the_enforced_limit() -> None:
    text = (
        "pcie.link.gen.max, pcie.link.gen.gpumax, pcie.link.gen.current, power.limit [W],"
        " enforced.power.limit [W]\n4, 5, 4, 700.00 W, 650.00 W\n"
    )
    gpu = parse_output(text)["gpus"][0]
    assert gpu["pcie_gen_max"] == 5
    assert gpu["pcie_gen_current"] == 4
    assert gpu["power_limit_w"] == pytest.approx(650.0)


def test_csv_clock_event_reason_bit_masks() -> None:
    text = (
        "clocks_event_reasons.supported, clocks_event_reasons.active,"
        " clocks_event_reasons.sw_power_cap\n0x00000000000001FF, 0x0000000000000048, Active\n"
    )
    reasons = parse_output(text)["gpus"][0]["clock_event_reasons"]
    assert reasons["hw_slowdown"] is True  # 0x8
    assert reasons["hw_thermal_slowdown"] is True  # 0x40
    assert reasons["gpu_idle"] is False
    assert reasons["sw_power_cap"] is True  # the named field wins over the mask
    assert len(reasons) == 9


@pytest.mark.parametrize(
    "marker",
    [
        "[N/A]",
        "N/A",
        "[Not Supported]",
        "Not Supported",
        "[Requested functionality has been deprecated]",
        "[Unknown Error]",
        "[Insufficient Permissions]",
        "[GPU requires reset]",
        "Unknown",
        "",
        "[Some Future Error]",
    ],
)
def test_csv_unknown_markers_are_none_never_zero(marker: str) -> None:
    fields = [
        "index",
        "memory.total [MiB]",
        "power.draw [W]",
        "temperature.gpu",
        "ecc.errors.uncorrected.volatile.total",
        "mig.mode.current",
        "persistence_mode",
        "pci.device_id",
        "fabric.state",
        "remapped_rows.pending",
        "clocks_event_reasons.hw_slowdown",
    ]
    text = ", ".join(fields) + "\n0" + f", {marker}" * (len(fields) - 1) + "\n"
    gpu = parse_output(text)["gpus"][0]
    for field in (
        "memory_total_mib",
        "power_draw_w",
        "temperature_c",
        "ecc_volatile_uncorrected",
        "mig_mode_current",
        "persistence_mode",
        "pci_device_id",
        "fabric_state",
        "remapped_rows_pending",
    ):
        assert gpu[field] is None, field  # type: ignore[literal-required]
    assert gpu["clock_event_reasons"] == {}


def test_csv_row_with_the_wrong_number_of_values_names_the_line() -> None:
    text = "index, uuid, memory.total [MiB]\n0, GPU-a, 1 MiB\n\n1, GPU-b\n"
    with pytest.raises(ParseError, match=r"^line 4: 2 values for 3 columns$"):
        parse_output(text)


def test_csv_header_without_rows_is_refused() -> None:
    with pytest.raises(ParseError, match="no GPU rows"):
        parse_output("index, uuid, memory.total [MiB]\n")


def test_csv_unknown_fields_are_ignored() -> None:
    text = "index, some.future_field [W], uuid\n0, 12 W, GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e\n"
    gpu = parse_output(text)["gpus"][0]
    assert gpu["uuid"] == "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"


# --- nvlink --------------------------------------------------------------------------------

NVLINK_STATUS = f"""GPU 0: {H100} (UUID: {uuid(0)})
\t Link 0: 26.562 GB/s
\t Link 1: <inactive>
\t Link 2: 26.562 GB/s
GPU 1: {H100} (UUID: {uuid(1)})
\t Link 0: <inactive>
"""

NVLINK_ERRORS = f"""GPU 0: {H100} (UUID: {uuid(0)})
\t Link 0: Replay Errors: 0
\t Link 0: Recovery Errors: 0
\t Link 0: CRC Errors: 12
\t Link 1: Replay Errors: 4
GPU 1: {H100} (UUID: {uuid(1)})
\t Link 0:
\t\t Replay Errors: 0
\t\t Malformed packet Errors: 2
\t\t Effective BER: 1.5e-15
"""


def test_nvlink_status_marks_inactive_links() -> None:
    assert detect(NVLINK_STATUS) == "nvlink-status"
    first, second = parse_output(NVLINK_STATUS)["gpus"]
    assert [
        (link["link"], link["active"], link["speed_gbps"]) for link in first["nvlink_links"]
    ] == [
        (0, True, 26.562),
        (1, False, None),
        (2, True, 26.562),
    ]
    assert second["nvlink_links"][0]["active"] is False
    assert second["index"] == 1
    assert second["uuid"] == uuid(1)


def test_nvlink_status_unknown_status_word_is_not_active() -> None:
    text = f"GPU 0: {H100} (UUID: {uuid(0)})\n\t Link 0: Up\n"
    assert parse_output(text, kind="nvlink-status")["gpus"][0]["nvlink_links"][0]["active"] is False


def test_nvlink_errors_in_both_layouts() -> None:
    assert detect(NVLINK_ERRORS) == "nvlink-errors"
    first, second = parse_output(NVLINK_ERRORS)["gpus"]
    assert first["nvlink_links"][0]["errors"] == {
        "replay_errors": 0,
        "recovery_errors": 0,
        "crc_errors": 12,
    }
    assert first["nvlink_links"][1]["errors"] == {"replay_errors": 4}
    # Block layout; the BER is not a count and is left out.
    assert second["nvlink_links"][0]["errors"] == {"replay_errors": 0, "malformed_packet_errors": 2}


def test_nvlink_status_and_errors_merge_per_link_either_order() -> None:
    for pairs in (
        [("nvidia-smi nvlink -s", NVLINK_STATUS), ("nvidia-smi nvlink -e", NVLINK_ERRORS)],
        [("nvidia-smi nvlink -e", NVLINK_ERRORS), ("nvidia-smi nvlink -s", NVLINK_STATUS)],
    ):
        links = parse_outputs(pairs)["gpus"][0]["nvlink_links"]
        assert [(link["link"], link["active"]) for link in links] == [
            (0, True),
            (1, False),
            (2, True),
        ]
        assert links[0]["errors"]["crc_errors"] == 12
        assert links[0]["speed_gbps"] == 26.562
        assert links[1]["errors"] == {"replay_errors": 4}


# --- kernel log ----------------------------------------------------------------------------


def test_kernel_log_formats_and_time_stamps() -> None:
    text = "\n".join(
        [
            "[    5.123456] nvidia: loading out-of-tree module taints kernel.",
            "[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
            "Dec  1 10:00:00 node7 kernel: [  200.1] NVRM: Xid (PCI:0000:5d:00): 48, pid=9, "
            "name=python, An uncorrectable double bit error (DBE) has been detected.",
            "2026-12-01T10:00:05.123456+00:00 node7 kernel: NVRM: Xid (0000:9a:00): 13, "
            "Graphics Exception: ESR 0x504648=0x80000000",
            "[Tue Dec  1 10:00:07 2026] NVRM: Xid (PCI:0000:db:00): 94, pid=77, Contained ECC",
            "I1201 10:00:09.000001       1 health.go:159] XidCriticalError: Xid=64 on "
            "Device=GPU-e3dbf294-2783-f38b-4274-5bc836df5be1; marking device as unhealthy.",
            "some unrelated line mentioning xid",
        ]
    )
    assert detect(text) == "kernel-log"
    events = parse_output(text)["xid_events"]
    assert [(e["code"], e["pci_bus_id"], e["timestamp"]) for e in events] == [
        (79, "PCI:0000:3b:00", "123.456789"),
        (48, "PCI:0000:5d:00", "Dec  1 10:00:00"),
        (13, "0000:9a:00", "2026-12-01T10:00:05.123456+00:00"),
        (94, "PCI:0000:db:00", "Tue Dec  1 10:00:07 2026"),
        (64, None, "1201 10:00:09.000001"),
    ]
    assert events[0]["message"] == "pid=1234, GPU has fallen off the bus."


def test_kernel_log_without_xid_is_a_node_without_events() -> None:
    text = (
        "[    5.1] nvidia: module loaded\n[    6.2] NVRM: loading NVIDIA UNIX Open Kernel Module\n"
    )
    assert detect(text) == "kernel-log"
    node = parse_output(text)
    assert node["xid_events"] == []


def test_kernel_log_message_is_trimmed() -> None:
    line = "NVRM: Xid (PCI:0000:3b:00): 31, " + "x" * 2000
    assert len(parse_output(line)["xid_events"][0]["message"]) == 500


# --- DCGM ------------------------------------------------------------------------------------


def dcgm3() -> str:
    """DCGM 3.x `dcgmi diag -r 2 -j`, after the structure DCGM documents in its JSON writer
    (NVVS JsonOutput): no capture is at hand. dcgmi prints a line before the JSON."""
    document = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Deployment",
                    "tests": [
                        {"name": "Denylist", "results": [{"gpu_ids": "0,1", "status": "PASS"}]},
                        {
                            "name": "Persistence Mode",
                            "results": [
                                {
                                    "gpu_ids": "0,1",
                                    "status": "WARN",
                                    "warnings": ["Persistence mode for GPU 0 is disabled."],
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
                                {"gpu_ids": "0", "status": "Pass", "info": ["Allocated 95%"]},
                                {
                                    "gpu_id": "1",
                                    "status": "Fail",
                                    "warnings": ["DBE detected on GPU 1"],
                                    "info": "Allocated 95%",
                                },
                            ],
                        }
                    ],
                },
                {
                    "category": "Integration",
                    "tests": [{"name": "PCIe", "results": [{"gpu_ids": "0", "status": "SKIPPED"}]}],
                },
            ],
            "version": "3.3.9",
            "driver_version_detected": "550.90.07",
        }
    }
    return "Successfully ran diagnostic for group.\n" + json.dumps(document, indent=2)


def dcgm4(driver: str = "580.82.09") -> str:
    """DCGM 4.x, after the shape DCGM 4 prints (key "DCGM Diagnostic", entity ids, warnings as
    objects, a per-test summary, metadata): built from documentation, not a capture."""
    document = {
        "DCGM Diagnostic": {
            "test_categories": [
                {
                    "category": "Deployment",
                    "tests": [
                        {
                            "name": "software",
                            "results": [],
                            "test_summary": {"status": "Pass", "info": ["all checks ran"]},
                        }
                    ],
                },
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "memory",
                            "results": [
                                {
                                    "entity_group": "GPU",
                                    "entity_group_id": 1,
                                    "entity_id": 0,
                                    "status": "Pass",
                                },
                                {
                                    "entity_group": "GPU",
                                    "entity_group_id": 1,
                                    "entity_id": 1,
                                    "status": "Fail",
                                    "warnings": [
                                        {
                                            "error_id": 29,
                                            "warning": "Uncorrectable ECC error on GPU 1",
                                        }
                                    ],
                                },
                            ],
                            "test_summary": {"status": "Fail"},
                        },
                        {
                            "name": "pulse_test",
                            "results": [
                                {"entity_group": "GPU", "entity_id": 0, "status": "Not Run"}
                            ],
                        },
                        {
                            "name": "nvswitch",
                            "results": [
                                {"entity_group": "Switch", "entity_id": 3, "status": "Inconclusive"}
                            ],
                        },
                    ],
                },
            ]
        },
        "metadata": {"Driver Version Detected": driver, "version": "4.2.3"},
    }
    return json.dumps(document)


def test_dcgm_3_shape() -> None:
    assert detect(dcgm3()) == "dcgm-json"
    node = parse_output(dcgm3())
    assert node["driver_version"] == "550.90.07"
    tests = [(t["category"], t["name"], t["result"], t["gpu_index"]) for t in node["dcgm"]]
    assert tests == [
        ("Deployment", "Denylist", "Pass", None),  # "0,1": the whole node
        ("Deployment", "Persistence Mode", "Warn", None),
        ("Hardware", "GPU Memory", "Pass", 0),
        ("Hardware", "GPU Memory", "Fail", 1),
        ("Integration", "PCIe", "Skip", 0),
    ]
    assert node["dcgm"][3]["info"] == "DBE detected on GPU 1; Allocated 95%"


def test_dcgm_4_shape() -> None:
    node = parse_output(dcgm4())
    assert node["driver_version"] == "580.82.09"
    tests = [(t["name"], t["result"], t["gpu_index"]) for t in node["dcgm"]]
    assert tests == [
        ("software", "Pass", None),  # from the test summary: no per-GPU results
        ("memory", "Pass", 0),
        ("memory", "Fail", 1),
        ("pulse_test", "Not Run", 0),
        ("nvswitch", "Inconclusive", None),  # unknown status kept as written, never a pass
    ]
    assert node["dcgm"][2]["info"] == "Uncorrectable ECC error on GPU 1"
    assert node["dcgm"][4]["info"].startswith("Switch 3")


def test_dcgm_hoisted_tests_without_categories() -> None:
    text = json.dumps(
        {
            "version": "4.1",
            "tests": [{"name": "pcie", "results": [{"entity_id": 2, "status": "pass"}]}],
        }
    )
    node = parse_output(text, kind="dcgm-json")
    assert node["dcgm"] == [
        {"name": "pcie", "category": None, "result": "Pass", "gpu_index": 2, "info": ""}
    ]


def test_dcgm_error_text_is_refused() -> None:
    with pytest.raises(ParseError, match="Unable to connect"):
        parse_output("Error: Unable to connect to host engine.\n", kind="dcgm-json")
    with pytest.raises(ParseError, match="no test results"):
        parse_output('{"DCGM GPU Diagnostic": {"test_categories": []}}')


# --- bundle ----------------------------------------------------------------------------------


def bundle(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format": "workbench-probe-bundle/1",
        "agent": {"version": "1.0.0", "python": "3.8.18"},
        "host": "gpu-node-07",
        "collected_at": "2026-12-01T10:00:00Z",
        "collection_id": "9b2f0c4e6a1d4f3b8e7c5a2d1f0e9c8b",
        "expected_gpus": 8,
        "candidate": "volcano",
        "outputs": [
            {
                "name": "nvidia-smi -q -x",
                "exit_code": 0,
                "stdout": fixture_text(H200_XML),
                "stderr": "",
                "duration_s": 0.41,
            },
            {
                "name": "nvidia-smi --query-gpu=... --format=csv",
                "exit_code": 0,
                "stdout": fixture_text(H200_CSV),
                "stderr": "",
            },
            {
                "name": "nvidia-smi nvlink -s",
                "exit_code": 3,
                "stdout": "",
                "stderr": "NVLink is not supported",
            },
            {
                "name": "kernel log",
                "exit_code": 0,
                "stdout": "[ 9.1] NVRM: Xid (PCI:0000:00:06): 79, pid=1, GPU has fallen off",
                "stderr": "",
            },
            {
                "name": "dcgmi diag -r 1 -j",
                "exit_code": 226,
                "stdout": dcgm4("580.159.04"),
                "stderr": "",
            },
        ],
        "nvml": {"anything": ["goes", 1]},
        "future_key": {"ignored": True},
        "benchmarks": [
            {
                "gpu_index": 0,
                "device_name": "NVIDIA H200",
                "framework": "torch 2.11.0+cu130",
                "matmul_tflops": {"bf16": 778.62, "fp16": 747.23, "tf32": 403.83},
                "matmul_size": 8192,
                "device_copy_tbps": 4.19,
                "host_to_device_gbps": 55.36,
                "device_to_host_gbps": 55.37,
                "unknown_figure": "ignored",
            }
        ],
    }
    document.update(changes)
    return document


def test_bundle_gives_one_node_with_everything() -> None:
    node = parse_bundle(bundle())
    assert node["host"] == "gpu-node-07"
    assert node["expected_gpu_count"] == 8
    assert node["driver_version"] == "580.159.04"
    assert len(node["gpus"]) == 1
    assert node["gpus"][0]["compute_capability"] == "9.0"  # from the CSV
    assert node["gpus"][0]["pci_device_id"] == "0x2335"  # from the XML
    assert node["xid_events"][0]["code"] == 79
    assert node["xid_events"][0]["gpu_index"] == 0  # PCI:0000:00:06 is the H200
    # dcgmi exits non-zero when a test fails; its results are still read.
    assert ("memory", "Fail", 1) in [(t["name"], t["result"], t["gpu_index"]) for t in node["dcgm"]]
    assert node["warnings"] == [
        "nvidia-smi nvlink -s: exit 3: NVLink is not supported",
        "dcgmi diag -r 1 -j: exit 226",
    ]
    assert node["benchmarks"] == [
        {
            "gpu_index": 0,
            "device_name": "NVIDIA H200",
            "framework": "torch 2.11.0+cu130",
            "matmul_tflops": {"bf16": 778.62, "fp16": 747.23, "tf32": 403.83},
            "matmul_size": 8192,
            "device_copy_tbps": 4.19,
            "host_to_device_gbps": 55.36,
            "device_to_host_gbps": 55.37,
        }
    ]
    assert "nvidia-smi -q -x" in node["sources"]
    assert "kernel log" in node["sources"]


def test_bundle_as_json_text_through_parse_output() -> None:
    text = json.dumps(bundle())
    assert detect(text) == "bundle"
    node = parse_output(text, host="override")
    assert node["host"] == "override"
    assert node["expected_gpu_count"] == 8


def test_bundle_where_nothing_could_be_read_is_refused_with_the_reason() -> None:
    broken = {
        "name": "nvidia-smi -q -x",
        "exit_code": 9,
        "stdout": "",
        "stderr": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    }
    with pytest.raises(ParseError) as caught:
        parse_bundle(bundle(outputs=[broken]))
    assert str(caught.value) == (
        "nothing could be read: nvidia-smi -q -x: exit 9: NVIDIA-SMI has failed because it"
        " couldn't communicate with the NVIDIA driver."
    )
    bomb = {"name": "nvidia-smi -q -x", "stdout": "<!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>"}
    with pytest.raises(ParseError, match="refused XML"):
        parse_bundle(bundle(outputs=[bomb]))
    with pytest.raises(ParseError, match="the bundle holds no outputs"):
        parse_bundle(bundle(outputs=[]))


def test_bundle_output_that_does_not_parse_is_a_warning() -> None:
    node = parse_bundle(
        bundle(outputs=[*bundle()["outputs"][:1], {"name": "nvidia-smi -L", "stdout": "garbage"}])
    )
    assert len(node["gpus"]) == 1
    assert node["warnings"] == ["nvidia-smi -L: not nvidia-smi -L output: garbage"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "workbench-probe-bundle/2"}, "is not supported"),
        ({"format": None}, "format must be a string"),
        ({"host": 7}, "host must be a string"),
        ({"collection_id": 7}, "collection_id must be a string"),
        ({"expected_gpus": "8"}, "expected_gpus must be a whole number"),
        ({"expected_gpus": True}, "expected_gpus must be a whole number"),
        ({"expected_gpus": -1}, "expected_gpus must be a whole number"),
        ({"outputs": {}}, "outputs must be a list"),
        ({"outputs": ["x"]}, r"outputs\[0\] must be an object"),
        ({"outputs": [{"stdout": ""}]}, r"outputs\[0\].name must be a non-empty string"),
        ({"nvml": []}, "nvml must be an object"),
        ({"benchmarks": {}}, "benchmarks must be a list"),
        ({"benchmarks": [{"gpu_index": 1.5}]}, r"benchmarks\[0\].gpu_index"),
        ({"benchmarks": [{"device_copy_tbps": -1}]}, r"benchmarks\[0\].device_copy_tbps"),
        ({"benchmarks": [{"host_to_device_gbps": float("nan")}]}, "host_to_device_gbps"),
        ({"benchmarks": [{"device_to_host_gbps": float("inf")}]}, "device_to_host_gbps"),
        ({"benchmarks": [{"device_to_host_gbps": "55"}]}, "must be a number"),
        ({"benchmarks": [{"matmul_tflops": {"bf16": True}}]}, r"matmul_tflops.bf16"),
        ({"benchmarks": [{"matmul_tflops": [1.0]}]}, "matmul_tflops must be an object"),
        ({"benchmarks": [{"framework": 2}]}, r"benchmarks\[0\].framework must be a string"),
    ],
)
def test_bundle_with_a_wrong_field_is_refused_naming_it(
    change: dict[str, Any], message: str
) -> None:
    with pytest.raises(ParseError, match=message):
        parse_bundle(bundle(**change))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("stdout", 5, r"outputs\[2\].stdout must be a string"),
        ("stderr", ["x"], r"outputs\[2\].stderr must be a string"),
        ("exit_code", "3", r"outputs\[2\].exit_code must be an integer"),
        ("duration_s", -0.5, r"outputs\[2\].duration_s must be a finite number"),
    ],
)
def test_bundle_output_with_a_wrong_field_is_refused_naming_it(
    key: str, value: Any, message: str
) -> None:
    document = bundle()
    document["outputs"][2][key] = value
    with pytest.raises(ParseError, match=message):
        parse_bundle(document)


def test_bundle_that_is_not_an_object() -> None:
    for value in (None, [], "bundle", 3):
        with pytest.raises(ParseError, match="bundle must be a JSON object"):
            parse_bundle(value)


# --- merging ---------------------------------------------------------------------------------


def doc(*gpus: dict[str, Any], **node: Any) -> NodeFacts:
    return new_node(gpus=[new_gpu(**gpu) for gpu in gpus], **node)


def test_merge_matches_by_uuid_before_bus_id_and_index() -> None:
    a = doc({"index": 0, "uuid": uuid(1), "pci_bus_id": "00000000:18:00.0", "name": "first"})
    b = doc({"index": 5, "uuid": uuid(1), "pci_bus_id": "00000000:2A:00.0", "serial": "S"})
    node = merge_nodes([a, b])
    assert len(node["gpus"]) == 1
    merged = node["gpus"][0]
    assert (merged["index"], merged["pci_bus_id"], merged["name"], merged["serial"]) == (
        5,
        "00000000:2A:00.0",
        "first",
        "S",
    )


def test_merge_different_uuids_are_different_gpus_even_with_the_same_index() -> None:
    node = merge_nodes([doc({"index": 0, "uuid": uuid(1)}), doc({"index": 0, "uuid": uuid(2)})])
    assert len(node["gpus"]) == 2


def test_merge_falls_back_to_bus_id_then_index() -> None:
    by_bus = merge_nodes(
        [
            doc({"index": 0, "pci_bus_id": "00000000:3B:00.0"}),
            doc({"pci_bus_id": "0000:3b:00.0", "name": "x"}),
        ]
    )
    assert len(by_bus["gpus"]) == 1
    assert by_bus["gpus"][0]["name"] == "x"
    by_index = merge_nodes([doc({"index": 2, "name": "a"}), doc({"index": 2, "serial": "s"})])
    assert [(g["name"], g["serial"]) for g in by_index["gpus"]] == [("a", "s")]


def test_merge_masked_uuids_do_not_identify_gpus() -> None:
    masked = "GPU-00000000-0000-0000-0000-000000000000"
    node = merge_nodes(
        [
            doc(
                {"index": 0, "uuid": masked, "pci_bus_id": "00000000:18:00.0"},
                {"index": 1, "uuid": masked, "pci_bus_id": "00000000:2A:00.0"},
            ),
            doc({"uuid": masked, "pci_bus_id": "00000000:2A:00.0", "temperature_c": 50.0}),
        ]
    )
    assert [(g["index"], g["temperature_c"]) for g in node["gpus"]] == [(0, None), (1, 50.0)]


def test_merge_known_wins_over_none_and_later_wins_over_earlier() -> None:
    first = doc({"index": 0, "temperature_c": 40.0, "power_draw_w": 100.0}, driver_version="1")
    second = doc({"index": 0, "temperature_c": 60.0, "power_draw_w": None}, driver_version=None)
    node = merge_nodes([first, second])
    gpu = node["gpus"][0]
    assert gpu["temperature_c"] == 60.0
    assert gpu["power_draw_w"] == 100.0
    assert node["driver_version"] == "1"


def test_merge_concatenates_lists_without_duplicates() -> None:
    event = {"code": 79, "pci_bus_id": None, "gpu_index": None, "message": "m", "timestamp": None}
    a = doc(sources=["a"], warnings=["w"], xid_events=[event])
    b = doc(sources=["a", "b"], warnings=["w", "x"], xid_events=[dict(event)])
    node = merge_nodes([a, b])
    assert node["sources"] == ["a", "b"]
    assert node["warnings"] == ["w", "x"]
    assert len(node["xid_events"]) == 1


def test_merge_does_not_change_its_inputs() -> None:
    a = doc({"index": 0, "clock_event_reasons": {"gpu_idle": True}})
    b = doc({"index": 0, "clock_event_reasons": {"gpu_idle": False}})
    merge_nodes([a, b])
    assert a["gpus"][0]["clock_event_reasons"] == {"gpu_idle": True}


def test_merge_of_nothing_is_an_empty_node() -> None:
    assert merge_nodes([]) == new_node()


# --- parse_outputs, detect, kinds -----------------------------------------------------------


def test_parse_outputs_uses_command_names_and_warns_about_failures() -> None:
    node = parse_outputs(
        [
            ("nvidia-smi -q -x", fixture_text(H200_XML)),
            ("nvidia-smi -L", "No devices were found"),
            ("notes", ""),
            ("dump", b"\xff\xfe\x00binary"),  # type: ignore[list-item]
            ("whatever", fixture_text(H200_CSV)),  # not a command: detected from the text
        ],
        host="node-1",
    )
    assert node["host"] == "node-1"
    assert len(node["gpus"]) == 1
    assert node["sources"] == ["nvidia-smi -q -x", "whatever"]
    assert node["warnings"] == [
        "dump: binary data: the input is not UTF-8 text",
        "nvidia-smi -L: not nvidia-smi -L output: No devices were found",
        "notes: empty output",
    ]


def test_parse_outputs_refuses_when_nothing_could_be_read() -> None:
    with pytest.raises(ParseError, match="nothing could be read: a: empty output"):
        parse_outputs([("a", ""), ("b", "hello")])


def kind_samples() -> dict[str, str]:
    """A short output of each kind."""
    return {
        "smi-xml": fixture_text(H200_XML),
        "smi-text": OLD_TEXT,
        "query-csv": fixture_text(H200_CSV),
        "smi-list": mig_list(),
        "nvlink-status": NVLINK_STATUS,
        "nvlink-errors": NVLINK_ERRORS,
        "capture": "$ nvidia-smi -L\n" + mig_list(),
        "bundle": json.dumps(bundle()),
        "dcgm-json": dcgm4(),
        "kernel-log": "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
        "smi-version": "NVIDIA-SMI version  : 580.95.05\nNVML version        : 580.95\n",
    }


def test_every_kind_can_be_forced() -> None:
    samples = kind_samples()
    assert set(samples) == set(KINDS)
    for kind, text in samples.items():
        assert detect(text) == kind
        assert parse_output(text, kind=kind)["format"] == "workbench-gpu-facts/1"


def test_a_forced_kind_that_does_not_fit_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_output(fixture_text(H200_CSV), kind="smi-xml")
    with pytest.raises(ParseError, match="unknown input kind"):
        parse_output("x", kind="pdf")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello world\nthis is not GPU output\n", "not nvidia-smi output: hello world"),
        ('{"a": 1}', "neither a probe bundle nor dcgmi"),
        ("<html><body/></html>", "XML without an <nvidia_smi_log>"),
        ("   \n\t\n", "empty input"),
    ],
)
def test_detect_refuses_what_it_does_not_know(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        detect(text)


def test_command_kinds() -> None:
    assert command_kind("nvidia-smi -q -x") == ("smi-xml", None)
    assert command_kind("/usr/bin/nvidia-smi --query --xml-format") == ("smi-xml", None)
    assert command_kind("nvidia-smi -q -i 0") == ("smi-text", None)
    assert command_kind("nvidia-smi --query-gpu=index,uuid --format=csv") == ("query-csv", None)
    assert command_kind("nvidia-smi -L") == ("smi-list", None)
    assert command_kind("nvidia-smi nvlink --status") == ("nvlink-status", None)
    assert command_kind("nvidia-smi nvlink -e") == ("nvlink-errors", None)
    assert command_kind("dcgmi diag -r 3 -j") == ("dcgm-json", None)
    assert command_kind("dmesg | grep -i xid") == ("kernel-log", None)
    assert command_kind("journalctl -k --since today") == ("kernel-log", None)
    assert command_kind("kernel log") == ("kernel-log", None)
    assert command_kind("nvidia-smi topo -m") is None
    assert command_kind("nvidia-smi --query-retired-pages=gpu_uuid --format=csv") is None
    assert command_kind("nvidia-smi") is None
    assert command_kind("uname -a") is None
    assert command_kind("echo 'unbalanced") is None


def test_parser_version_is_a_string() -> None:
    assert PARSER_VERSION == "4"


# --- values ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("function", "raw", "expected"),
    [
        (v.to_mib, "143771 MiB", 143771),
        (v.to_mib, "143771", 143771),
        (v.to_mib, "80 GiB", 81920),
        (v.to_mib, "12 parsecs", None),
        (v.to_watts, "133.27 W", 133.27),
        (v.to_watts, "133270 mW", 133.27),
        (v.to_mhz, "1980 MHz", 1980),
        (v.to_mhz, "1.98 GHz", 1980),
        (v.to_celsius, "41 C", 41.0),
        (v.to_percent, "0 %", 0.0),
        (v.to_link_width, "16x", 16),
        (v.to_link_width, "x8", 8),
        (v.to_pcie_gen, "Gen5", 5),
        (v.to_int, "0x1F", 31),
        (v.to_int, "2.5", None),
        (v.to_int, "9" * 5000, None),
        (v.to_float, "1e999", None),
        (v.to_bool, "Not Active", False),
        (v.to_bool, "Active", True),
        (v.to_bool, "Enabled", True),
        (v.to_bool, "No", False),
        (v.to_bool, "Maybe", None),
        (v.pci_device_id, "233510DE", "0x2335"),
        (v.pci_device_id, "0x233010DE", "0x2330"),
        (v.pci_device_id, "0x26B9", "0x26b9"),
        (v.pci_device_id, "nonsense", None),
        (v.bus_key, "PCI:0000:3b:00", (0, 0x3B, 0)),
        (v.bus_key, "00000000:3B:00.0", (0, 0x3B, 0)),
        (v.bus_key, "3b:00.0", (0, 0x3B, 0)),
        (v.usable_uuid, "GPU-00000000-0000-0000-0000-000000000000", None),
    ],
)
def test_value_conversions(function: Any, raw: str, expected: Any) -> None:
    result = function(raw)
    if isinstance(expected, float):
        assert result == pytest.approx(expected)
    else:
        assert result == expected
