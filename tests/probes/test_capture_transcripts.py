"""Captures pasted as terminal transcripts: each command after its shell prompt, as people copy
them from a terminal or as `script` records them (colour, window titles, bracketed paste,
carriage returns). Each input is built here from the real H200 outputs with a prompt line
written by hand before each command.
"""

import pytest

from poc.probes.parsers import detect, parse_output
from poc.probes.parsers.capture import split_sections
from poc.probes.parsers.detect import command_kind

from .gpu_fixtures import DMESG_XID_79, H200_CSV, H200_TEXT, H200_XML, fixture_text

H200_UUID = "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"
H200_LIST = f"GPU 0: NVIDIA H200 (UUID: {H200_UUID})\n"
CSV_COMMAND = (
    "nvidia-smi --query-gpu=index,uuid,name,serial,driver_version,vbios_version,pci.bus_id,"
    "memory.total,memory.used,memory.free,utilization.gpu,utilization.memory,temperature.gpu,"
    "power.draw,power.limit,clocks.sm,clocks.max.sm,clocks.mem,ecc.mode.current,"
    "ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total,mig.mode.current,"
    "compute_mode,persistence_mode,pstate,compute_cap --format=csv"
)
XID_13 = (
    "[Sun Nov 29 22:30:01 2026] NVRM: Xid (PCI:0000:00:06): 13, pid=4242, name=python, "
    "Graphics Exception: ESR 0x404600=0x80000002"
)
NVLINK_ERRORS = (
    "GPU 0: NVIDIA H200 (UUID: GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e)\n"
    "\t Link 0: Replay Errors: 3\n"
    "\t Link 0: Recovery Errors: 0\n"
    "\t Link 0: CRC Errors: 1\n"
)


@pytest.mark.parametrize(
    "prompt",
    [
        "root@gpu01:~# ",
        "ubuntu@ip-10-0-0-5:~$ ",
        "[user@node01 ~]$ ",
        "(base) user@host:~/work$ ",
        "gpu01:~ # ",
        "# ",
        "$ sudo ",
        "➜  ~ ",
        "user@host ~ % ",
        "bash-5.1$ ",
        "PS C:\\> ",
        "C:\\Users\\me>",
    ],
)
def test_a_listing_after_any_prompt_is_read(prompt: str) -> None:
    closing = prompt.removesuffix("sudo ").rstrip()
    text = f"{prompt}nvidia-smi -L\n{H200_LIST}{closing}\n"
    assert detect(text) == "capture"
    node = parse_output(text)
    assert [(gpu["index"], gpu["uuid"]) for gpu in node["gpus"]] == [(0, H200_UUID)]
    assert node["warnings"] == []


def test_one_xml_report_under_its_prompt() -> None:
    text = "ubuntu@ip-10-0-0-5:~$ nvidia-smi -q -x\n" + fixture_text(H200_XML)
    assert detect(text) == "capture"
    node = parse_output(text)
    assert node["driver_version"] == "580.159.04"
    assert node["gpus"][0]["uuid"] == H200_UUID
    assert node["sources"] == ["nvidia-smi -q -x"]


def test_a_session_reads_its_tools_and_ignores_the_rest() -> None:
    text = (
        "root@gpu01:~# cd /tmp\n"
        "root@gpu01:/tmp# ls\n"
        "notes.txt  run.sh\n"
        "root@gpu01:/tmp# uname -a\n"
        "Linux gpu01 6.8.0-49-generic #49-Ubuntu SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n"
        f"root@gpu01:/tmp# {CSV_COMMAND}\n"
        + fixture_text(H200_CSV)
        + "root@gpu01:/tmp# sudo nvidia-smi -q\n"
        + fixture_text(H200_TEXT)
        + "root@gpu01:/tmp# nvidia-smi nvlink -e\n"
        + NVLINK_ERRORS
        + "root@gpu01:/tmp# nvidia-smi topo -m\n"
        "\tGPU0\tCPU Affinity\n"
        "GPU0\t X \t0-15\n"
        "root@gpu01:/tmp# dmesg -T | grep -i xid\n" + XID_13 + "\n"
        "root@gpu01:/tmp# journalctl -k | grep NVRM\n"
        "-- No entries --\n"
        "root@gpu01:/tmp# exit\n"
    )
    assert detect(text) == "capture"
    sections = split_sections(text)
    assert [section.command for section in sections] == [
        "cd /tmp",
        "ls",
        "uname -a",
        CSV_COMMAND,
        "sudo nvidia-smi -q",
        "nvidia-smi nvlink -e",
        "nvidia-smi topo -m",
        "dmesg -T | grep -i xid",
        "journalctl -k | grep NVRM",
        "exit",
    ]
    assert sections[7].body == XID_13
    node = parse_output(text)
    assert node["warnings"] == []
    assert len(node["sources"]) == 5
    assert node["sources"][1:] == [
        "sudo nvidia-smi -q",
        "nvidia-smi nvlink -e",
        "dmesg -T | grep -i xid",
        "journalctl -k | grep NVRM",
    ]
    (gpu,) = node["gpus"]
    assert (gpu["uuid"], gpu["name"]) == (H200_UUID, "NVIDIA H200")
    assert node["driver_version"] == "580.159.04"
    assert [(event["code"], event["gpu_index"]) for event in node["xid_events"]] == [(13, 0)]
    assert [link["link"] for link in gpu["nvlink_links"]] == [0]


def test_a_script_typescript_with_terminal_escapes() -> None:
    title = "\x1b]0;root@gpu01: ~\x07"
    prompt = "\x1b[?2004h" + title + "\x1b[01;32mroot@gpu01\x1b[00m:\x1b[01;34m~\x1b[00m# "
    text = (
        'Script started on 2026-11-29 22:26:40+00:00 [TERM="xterm-256color" '
        'TTY="/dev/pts/0" COLUMNS="120" LINES="40"]\r\n'
        + prompt
        + "nvidia-smi -L\r\n\x1b[?2004l\r"
        + H200_LIST.replace("\n", "\r\n")
        + prompt
        + "\x1b[200~dmesg | grep -i xid\x1b[201~\r\n\x1b[?2004l\r"
        + XID_13
        + "\r\n"
        + prompt
        + "exit\r\n\x1b[?2004l\rexit\r\n\r\n"
        'Script done on 2026-11-29 22:31:02+00:00 [COMMAND_EXIT_CODE="0"]\r\n'
    )
    assert detect(text) == "capture"
    commands = [section.command for section in split_sections(text)]
    assert commands == ["nvidia-smi -L", "dmesg | grep -i xid", "exit", None]
    node = parse_output(text)
    assert node["warnings"] == []
    assert [gpu["uuid"] for gpu in node["gpus"]] == [H200_UUID]
    assert [event["code"] for event in node["xid_events"]] == [13]


def test_windows_powershell_session_with_crlf() -> None:
    text = (
        "PS C:\\Users\\me> cd C:\\Temp\r\n"
        "PS C:\\Temp> nvidia-smi.exe -q\r\n"
        + fixture_text(H200_TEXT).replace("\n", "\r\n")
        + "PS C:\\Temp> \r\n"
    )
    assert detect(text) == "capture"
    node = parse_output(text)
    assert node["sources"] == ["nvidia-smi.exe -q"]
    assert node["gpus"][0]["uuid"] == H200_UUID


def test_a_lone_command_line_over_its_output_stays_that_output() -> None:
    """The Xid fixture is one `# dmesg |grep -i xid` line over a kernel log line: a kernel log.
    The same with a second prompt is a transcript."""
    single = fixture_text(DMESG_XID_79)
    assert detect(single) == "kernel-log"
    assert detect(single + "root@gpu01:~# nvidia-smi -L\n" + H200_LIST) == "capture"


def test_hashes_and_dollars_inside_outputs_do_not_split() -> None:
    """A kernel line with `#`, a comment line and a `$` in an output stay in their section."""
    body = (
        "[Sun Nov 29 22:30:00 2026] Linux version 6.8.0-49-generic #49-Ubuntu SMP\n"
        "# not a prompt: a line of a file\n"
        "% 100 done, cost $ 3\n" + XID_13
    )
    text = "root@gpu01:~# dmesg -T\n" + body + "\nroot@gpu01:~# nvidia-smi -L\n" + H200_LIST
    sections = split_sections(text)
    assert [section.command for section in sections] == ["dmesg -T", "nvidia-smi -L"]
    assert sections[0].body == body


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("sudo nvidia-smi -q", ("smi-text", None)),
        ("sudo -u root nvidia-smi -q -x", ("smi-xml", None)),
        ("sudo dmesg -T", ("kernel-log", None)),
        ("sudo -E journalctl -k -b", ("kernel-log", None)),
        ("time nvidia-smi -L", ("smi-list", None)),
        ("CUDA_VISIBLE_DEVICES=0 nvidia-smi -L", ("smi-list", None)),
        ("nvidia-smi.exe -L", ("smi-list", None)),
        ("C:\\Windows\\System32\\nvidia-smi.exe -q", ("smi-text", None)),
        ("sudo dcgmi diag -r 1 -j | tee diag.json", ("dcgm-json", None)),
        ("nvidia-smi -L | wc -l", None),
        ("sudo nvidia-smi -q | awk '/Xid|ECC/'", None),
    ],
)
def test_command_kinds_past_wrappers_and_pipes(
    command: str, kind: tuple[str, list[str] | None] | None
) -> None:
    assert command_kind(command) == kind


def test_a_login_banner_before_the_first_prompt_is_dropped() -> None:
    text = (
        "Welcome to Ubuntu 22.04.5 LTS (GNU/Linux 6.8.0-49-generic x86_64)\n"
        "Last login: Sun Nov 29 22:20:11 2026 from 10.0.0.7\n"
        "root@gpu01:~# nvidia-smi -L\n" + H200_LIST + "root@gpu01:~# logout\n"
    )
    assert detect(text) == "capture"
    assert [section.command for section in split_sections(text)] == ["nvidia-smi -L", "logout"]
    assert parse_output(text)["gpus"][0]["uuid"] == H200_UUID


def test_a_command_after_a_long_output_still_opens_a_section() -> None:
    """The second prompt comes after more lines than detection reads at the head."""
    log = "".join(f"[{n:6d}.000000] usb 1-1: reset high-speed USB device\n" for n in range(600))
    text = "root@gpu01:~# sudo dmesg\n" + log + XID_13 + "\nroot@gpu01:~# nvidia-smi -L\n"
    text += H200_LIST
    assert detect(text) == "capture"
    node = parse_output(text)
    assert node["sources"] == ["sudo dmesg", "nvidia-smi -L"]
    assert [event["code"] for event in node["xid_events"]] == [13]
    assert [gpu["uuid"] for gpu in node["gpus"]] == [H200_UUID]
