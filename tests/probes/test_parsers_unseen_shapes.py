"""The parsers on real output shapes no capture here holds: kernel logs as dmesg's and
journalctl's other output modes print them, NVSwitch SXid lines, and --query-gpu output from a
loop that repeats its header.

Each input is written by hand in the shape of the tool and version its comment names.
"""

import pytest

from poc.probes.parsers import detect, parse_output, parse_outputs
from poc.probes.rules.health import judge_node
from tests.probes.gpu_fixtures import H200_XML, fixture_text

BUS_79 = "PCI:0000:3b:00"
XID_79 = f"NVRM: Xid ({BUS_79}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


# --- kernel log ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        # util-linux `dmesg -r` (--raw): the record's priority before the seconds since boot.
        f"<4>[  100.000000] {XID_79}",
        # A kernel record forwarded as RFC 5424 syslog: priority and version, then the header.
        f"<4>1 2026-12-01T10:00:00.000000+00:00 node01 kernel - - - {XID_79}",
    ],
)
def test_kernel_log_with_a_raw_priority_prefix_is_no_xml(line: str) -> None:
    text = f"<6>[    5.123456] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\n{line}\n"
    assert detect(text) == "kernel-log"
    events = parse_output(text)["xid_events"]
    assert [(e["code"], e["pci_bus_id"]) for e in events] == [(79, BUS_79)]


@pytest.mark.parametrize(
    "text",
    [
        # journalctl -k -o short-precise (systemd 249)
        "Dec 01 10:00:00.123456 node01 kernel: nvidia: loading out-of-tree module taints kernel.\n"
        "Dec 01 10:00:00.201337 node01 kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n",
        # journalctl -k -o short-full (systemd 249)
        "Mon 2026-11-30 10:00:00 UTC node01 kernel: nvidia-nvlink: Nvlink Core is initialized\n"
        "Mon 2026-11-30 10:00:01 UTC node01 kernel: nvidia-modeset: Loading NVIDIA Kernel Mode\n",
        # util-linux 2.37 `dmesg --time-format=iso`
        "2026-12-01T10:00:00,123456+00:00 nvidia: loading out-of-tree module taints kernel.\n"
        "2026-12-01T10:00:00,201337+00:00 NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n",
        # journalctl -k -o short-unix (systemd 249)
        "1764583200.123456 node01 kernel: nvidia: loading out-of-tree module taints kernel.\n"
        "1764583200.201337 node01 kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n",
        # util-linux `dmesg -x` (--decode): facility and level before the time stamp
        "kern  :warn  : [    5.123456] nvidia: loading out-of-tree module taints kernel.\n"
        "kern  :info  : [    5.201337] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n",
        # util-linux `dmesg -H` (human): the minute, then offsets from the line before
        "[Dec 1 10:00] nvidia: loading out-of-tree module taints kernel.\n"
        "[  +0.077881] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n",
        # `journalctl -k --grep Xid` on a node that logged none
        "-- No entries --\n",
        # journalctl -k over two boots (systemd 249): its own marker lines among the records
        "-- Journal begins at Mon 2026-11-30 09:00:00 UTC, ends at Tue 2026-12-01 10:00:00 UTC."
        " --\n"
        "Mon 2026-11-30 10:00:00 UTC node01 kernel: nvidia: module verification failed\n"
        "-- Boot 0e4c2d5b8a6f4c1e9d3b7a2f6e8c1d4b --\n"
        "Tue 2026-12-01 10:00:00 UTC node01 kernel: nvidia: module verification failed\n",
    ],
)
def test_kernel_log_without_xid_in_other_output_modes_is_read(text: str) -> None:
    """A clean kernel log is a node without Xid events, not output the parsers refuse."""
    assert detect(text) == "kernel-log"
    node = parse_output(text)
    assert node["xid_events"] == []
    assert node["sources"] == ["kernel log"]


def test_kernel_log_time_stamps_of_other_output_modes() -> None:
    text = "\n".join(
        [
            # journalctl -k -o short-precise: the microseconds stay with the time.
            "Dec 01 10:00:00.123456 node01 kernel: NVRM: Xid (PCI:0000:18:00): 119, pid=2317, "
            "name=python3, Timeout after 6s of waiting for RPC response from GPU1 GSP! "
            "Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
            # util-linux `dmesg -H`: the minute line has a time, the offset line after it none.
            f"[Dec12 10:05] {XID_79}",
            "[  +0.000010] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from "
            "0x0 (None) to 0x2 (Node Reboot Required)",
            # journalctl -k -o short-unix
            "1764583200.123456 node01 kernel: NVRM: Xid (PCI:0000:5d:00): 48, pid=9, name=python,"
            " An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer",
        ]
    )
    events = parse_output(text)["xid_events"]
    assert [(e["code"], e["timestamp"]) for e in events] == [
        (119, "Dec 01 10:00:00.123456"),
        (79, "Dec12 10:05"),
        (154, None),
        (48, "1764583200.123456"),
    ]
    assert events[0]["message"].startswith("pid=2317, name=python3, Timeout after 6s")


def test_nvswitch_sxid_lines_are_warnings_not_xid_events() -> None:
    """NVSwitch errors as the nvswitch driver of R535-R570 logs them on an HGX node: the first
    line of an error names its severity, the lines after it (same code) its engine and data.
    They are no GPU's Xid, and are kept as one warning per code and switch."""
    text = "\n".join(
        [
            "[ 5212.345678] nvidia-nvswitch2: SXid (PCI:0000:08:00.0): 12028, Non-fatal, Link 43 "
            "egress non-posted PRIV error (First)",
            "[ 5212.345680] nvidia-nvswitch2: SXid (PCI:0000:08:00.0): 12028, Severity 0 Engine "
            "instance 43 Sub-engine instance 00",
            "[ 5300.000001] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 30 "
            "LTSSM Fault Up",
            "[ 5300.000002] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Severity 1 Engine "
            "instance 30 Sub-engine instance 00",
            "[ 5300.000003] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Data {0x00000000, "
            "0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000}",
            f"[ 5301.000000] {XID_79}",
        ]
    )
    node = parse_output(text)
    assert [e["code"] for e in node["xid_events"]] == [79]
    sxid = [w for w in node["warnings"] if "SXid" in w]
    assert sxid == [
        "kernel log: NVSwitch SXid 12028 (Non-fatal) on PCI:0000:08:00.0, first at 5212.345678, "
        "2 lines: Link 43 egress non-posted PRIV error (First)",
        "kernel log: NVSwitch SXid 20034 (Fatal) on PCI:0000:06:00.0, first at 5300.000001, "
        "3 lines: Link 30 LTSSM Fault Up",
    ]
    # journalctl -k -o cat: the lines without any prefix are still a kernel log.
    bare = "nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 30 LTSSM Fault Up\n"
    assert detect(bare) == "kernel-log"
    assert parse_output(bare)["warnings"] == [
        "kernel log: NVSwitch SXid 20034 (Fatal) on PCI:0000:06:00.0: Link 30 LTSSM Fault Up"
    ]


def test_a_gpu_the_driver_could_not_initialise_is_a_warning() -> None:
    """The driver's lines for a GPU it cannot bring up, which nvidia-smi then leaves out: R535+
    name its bus id, drivers before about R470 do not."""
    text = "\n".join(
        [
            "Dec  1 09:14:37 node01 kernel: NVRM: GPU 0000:39:00.0: RmInitAdapter failed! "
            "(0x62:0x65:2511)",
            "Dec  1 09:14:37 node01 kernel: NVRM: GPU 0000:39:00.0: rm_init_adapter failed, "
            "device minor number 2",
            "Dec  1 09:14:39 node01 kernel: NVRM: GPU 0000:39:00.0: RmInitAdapter failed! "
            "(0x62:0x65:2511)",
            "Dec  1 09:20:02 node02 kernel: [  231.103166] NVRM: failed to copy vbios to system "
            "memory.",
            "Dec  1 09:20:02 node02 kernel: [  231.105710] NVRM: RmInitAdapter failed! "
            "(0x30:0xffffffff:812)",
        ]
    )
    node = parse_output(text)
    assert node["xid_events"] == []
    assert node["warnings"] == [
        "kernel log: the driver could not initialise the GPU at 0000:39:00.0: "
        "RmInitAdapter failed! (0x62:0x65:2511)",
        "kernel log: the driver could not initialise a GPU: RmInitAdapter failed! "
        "(0x30:0xffffffff:812)",
    ]


# --- --query-gpu ---------------------------------------------------------------------------


def test_query_csv_header_repeated_by_a_loop_is_no_gpu() -> None:
    """`while true; do nvidia-smi --query-gpu=... --format=csv; sleep 5; done` (any driver):
    every run prints the header again; the GPU is one GPU with its last sample."""
    header = "index, name, uuid, memory.total [MiB], temperature.gpu, power.draw [W]"
    row = "0, NVIDIA A100-SXM4-40GB, GPU-1a2b3c4d-0001-4e5f-8a9b-0c1d2e3f4a01, 40960 MiB, {t}, {p}"
    text = "\n".join(
        [header, row.format(t=30, p="61.20 W"), header, row.format(t=31, p="[N/A]"), ""]
    )
    node = parse_output(text)
    assert [
        (g["index"], g["name"], g["temperature_c"], g["power_draw_w"]) for g in node["gpus"]
    ] == [(0, "NVIDIA A100-SXM4-40GB", 31.0, None)]


def test_journalctl_json_records_are_read_with_their_time() -> None:
    """`journalctl -k -o json` (systemd 249): one object a line, the line in MESSAGE (its
    bytes when it is not UTF-8), the time in microseconds since the epoch."""
    first = (
        '{"__CURSOR":"s=5f1e;i=1a2b","__REALTIME_TIMESTAMP":"1764583200123456",'
        '"__MONOTONIC_TIMESTAMP":"100000000","_BOOT_ID":"0e4c2d5b8a6f4c1e9d3b7a2f6e8c1d4b",'
        '"_TRANSPORT":"kernel","PRIORITY":"4","SYSLOG_FACILITY":"0","SYSLOG_IDENTIFIER":"kernel",'
        f'"MESSAGE":"{XID_79}","_HOSTNAME":"node01"}}'
    )
    message = list(b"NVRM: Xid (PCI:0000:5d:00): 48, pid=9, name=caf\xe9, An uncorrectable")
    second = (
        f'{{"__REALTIME_TIMESTAMP":"1764583201000000","_TRANSPORT":"kernel","MESSAGE":{message}}}'
    )
    text = f"{first}\n{second}\n"
    assert detect(text) == "kernel-log"
    events = parse_output(text)["xid_events"]
    assert [(e["code"], e["pci_bus_id"], e["timestamp"]) for e in events] == [
        (79, BUS_79, "2025-12-01T10:00:00.123456+00:00"),
        (48, "PCI:0000:5d:00", "2025-12-01T10:00:01.000000+00:00"),
    ]
    assert events[0]["message"] == "pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def test_dmesg_json_records_are_read_with_their_time() -> None:
    """util-linux 2.38 `dmesg --json`: one document, the records under "dmesg"."""
    text = (
        '{\n   "dmesg": [\n      {\n         "pri": 6,\n         "time":     5.123456,\n'
        '         "msg": "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15"\n'
        "      },{\n"
        '         "pri": 4,\n         "time":   100.000000,\n'
        f'         "msg": "{XID_79}"\n'
        "      }\n   ]\n}\n"
    )
    assert detect(text) == "kernel-log"
    events = parse_output(text)["xid_events"]
    assert [(e["code"], e["timestamp"], e["message"][-12:]) for e in events] == [
        (79, "100.000000", "off the bus.")
    ]


def test_device_plugin_xid_on_a_mig_device_resolves_to_the_gpu_holding_it() -> None:
    """k8s-device-plugin (v0.14, MIG strategy mixed) names the MIG device by its UUID; `nvidia-smi
    -L` (R535) lists that UUID under the GPU."""
    listing = (
        "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-1a2b3c4d-0001-4e5f-8a9b-0c1d2e3f4a01)\n"
        "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-1a2b3c4d-0002-4e5f-8a9b-0c1d2e3f4a02)\n"
        "  MIG 3g.20gb     Device  0: (UUID: MIG-1c8d8a4e-6a0b-5b8f-9a3e-2d7f4c9e1b05)\n"
        "  MIG 3g.20gb     Device  1: (UUID: MIG-7f0e2b91-3c4d-5e6f-8a9b-0c1d2e3f4a5b)\n"
    )
    log = (
        "I1201 10:00:09.000001       1 health.go:159] XidCriticalError: Xid=48 on "
        "Device=MIG-7f0e2b91-3c4d-5e6f-8a9b-0c1d2e3f4a5b; marking device as unhealthy.\n"
    )
    node = parse_outputs([("nvidia-smi -L", listing), ("device plugin log", log)])
    assert [(e["code"], e["gpu_index"]) for e in node["xid_events"]] == [(48, 1)]


def test_device_plugin_log_in_dockers_json_file_format_is_read() -> None:
    """The device plugin's container log as Docker's json-file driver stores it
    (/var/lib/docker/containers/<id>/<id>-json.log): one object a line, the klog line in
    "log", the time in "time"."""
    text = (
        '{"log":"I1201 10:00:08.999001       1 main.go:256] Starting GRPC server for '
        '\'nvidia.com/gpu\'\\n","stream":"stderr","time":"2026-12-01T10:00:08.999123456Z"}\n'
        '{"log":"I1201 10:00:09.000001       1 health.go:159] XidCriticalError: Xid=48 on '
        'Device=GPU-e3dbf294-2783-f38b-4274-5bc836df5be1; marking device as unhealthy.\\n",'
        '"stream":"stderr","time":"2026-12-01T10:00:09.000123456Z"}\n'
    )
    assert detect(text) == "kernel-log"
    events = parse_output(text)["xid_events"]
    assert [(e["code"], e["timestamp"], e["message"]) for e in events] == [
        (
            48,
            "2026-12-01T10:00:09.000123456Z",
            "on Device=GPU-e3dbf294-2783-f38b-4274-5bc836df5be1; marking device as unhealthy.",
        )
    ]


# --- nvidia-smi -q -x ------------------------------------------------------------------------


def test_xml_after_the_inforom_notice_is_read_and_keeps_the_notice() -> None:
    """`nvidia-smi -q -x` on a GPU whose infoROM is corrupted: nvidia-smi writes its notice on
    a line of its own before the document, as in its other modes (derived from the H200
    capture, driver 580.159.04, its bus id in the notice's 4-digit-domain spelling)."""
    notice = "WARNING: infoROM is corrupted at gpu 0000:00:06.0"
    text = f"{notice}\n{fixture_text(H200_XML)}"
    assert detect(text) == "smi-xml"
    node = parse_output(text)
    assert [(g["index"], g["name"]) for g in node["gpus"]] == [(0, "NVIDIA H200")]
    assert node["warnings"] == [f"nvidia-smi: {notice}"]
    gpu = judge_node(node)["gpus"][0]
    assert "inforom_corrupted" in [p["code"] for p in gpu["problems"]]
    # Given by its command, the same output reads the same.
    assert parse_outputs([("nvidia-smi -q -x", text)])["warnings"] == [f"nvidia-smi: {notice}"]
