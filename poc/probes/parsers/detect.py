"""Which output a text is, from its content (`detect`) or from the command that made it.

Detection looks at the structure that identifies each output, never at values, in this order:

* smi-xml: XML whose root element is <nvidia_smi_log> (other XML is refused).
* capture: command sections, either blocks of `#####` lines naming `# $ command` or
  `# phase :: title`, or a text that opens with a `$ command` line.
* bundle: a JSON object naming the format "workbench-probe-bundle/...".
* dcgm-json: JSON holding "DCGM GPU Diagnostic", "DCGM Diagnostic" or "test_categories",
  possibly after a line of text.
* smi-text: the "NVSMI LOG" banner, or a "GPU 00000000:3B:00.0" block header line.
* nvlink-errors / nvlink-status: "GPU N: name (UUID: ...)" lines (some drivers leave the
  UUID out), maybe after title lines without a colon, followed by "Link N: ..."
  lines holding counters ("Replay Errors: 0") or speeds ("26.562 GB/s", "<inactive>"), or the
  driver's "does not have or support Nvlink".
* smi-list: nothing but "GPU N: name (UUID: ...)" lines and their "MIG ..." lines.
* query-csv: a first line that is a --query-gpu header (field names, at least one known).
* kernel-log: an Xid line, or a text that is mostly kernel log lines (dmesg, journalctl and
  syslog prefixes, journalctl's own marker lines), or journalctl's or dmesg's JSON.
"""

import re
import shlex

from . import values as v
from .kernel_log import SXID_LINE, find_xid
from .nvlink import LINK_LINE
from .query_csv import header_fields
from .smi_list import gpu_line, smi_notice
from .values import ParseError

KINDS = (
    "smi-xml",
    "smi-text",
    "query-csv",
    "smi-list",
    "nvlink-status",
    "nvlink-errors",
    "capture",
    "bundle",
    "dcgm-json",
    "kernel-log",
)

_HASH_RULE = re.compile(r"#{5,}\s*$")
_CAPTURE_HEADER = re.compile(r"#\s*(\$ .*|[^:]{1,80} :: .*)$")
_SMI_GPU_BLOCK = re.compile(r"GPU\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]\s*$")
_MIG_LINE = re.compile(r"\s+MIG\s+\S+\s+Device\s+\d+:")
_COUNTER = re.compile(r"\s*Link\s+\d+\s*:\s*[A-Za-z][^:]*:\s*\S")
# A kernel log line, after any of the prefixes that mark its origin: a raw priority ("<4>",
# `dmesg -r`, syslog) and, for `dmesg -x`, the facility and level ("kern  :warn  : ").
_KERNEL_LINE = re.compile(
    r"(?:<\d{1,3}>\d?\s*|[a-z]+\s*:[a-z]+\s*: )?"
    # dmesg: seconds since boot, -T, -H ("[Dec 1 10:00]", then offsets "[  +0.000123]")
    r"(?:\[\s*\+?\d+\.\d+\]|\[[A-Z][a-z]{2} [A-Z][a-z]{2}|\[[A-Z][a-z]{2}[ \d]\d \d{2}:\d{2}\]"
    # syslog and journalctl (short, short-precise, short-full, short-iso, short-iso-precise)
    r"|(?:[A-Z][a-z]{2} )?[A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2}(?:\.\d+)? \S+ kernel:"
    r"|(?:[A-Z][a-z]{2} )?\d{4}-\d{2}-\d{2}[T ]\S+(?: [A-Z]{2,5})? \S+ kernel:"
    # journalctl -o short-unix
    r"|\d{9,11}\.\d{1,9} \S+ kernel:"
    # dmesg --time-format=iso
    r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[.,]\d+[+-]\d{2}:?\d{2} "
    # /dev/kmsg records: priority, sequence number, microseconds, flags
    r"|\d{1,3},\d+,\d+,[^;]{0,8};"
    r"|NVRM: )"
)
# journalctl's own lines: the range it read, a reboot between boots, or that nothing matched.
_JOURNAL_MARK = re.compile(r"-- (?:Logs begin at|Journal begins at|Boot [0-9a-f]{32}|No entries)")
# journalctl -o json / json-pretty records, and `dmesg --json`.
_KERNEL_JSON = re.compile(r'"(?:__REALTIME_TIMESTAMP|_TRANSPORT|dmesg)"\s*:')
# XML opens with a declaration, a document type, a comment or an element; "<4>" is a kernel log
# line's priority.
_XML_START = re.compile(r"<[?!A-Za-z_]")
# Detection reads the head of the text; the parsers read all of it.
_HEAD_LINES = 400


def _lines(text: str) -> list[str]:
    head: list[str] = []
    for line in text.split("\n", _HEAD_LINES)[:_HEAD_LINES]:
        if line.strip():
            head.append(line)
    return head


def _is_capture(lines: list[str]) -> bool:
    if lines[0].startswith("$ "):
        return True
    rules = 0
    for line in lines:
        if _HASH_RULE.match(line):
            rules += 1
        elif rules and _CAPTURE_HEADER.match(line):
            return True
    return False


def _gpu_blocks_kind(lines: list[str]) -> str | None:
    """nvlink-status, nvlink-errors or smi-list for text opening with a "GPU N: ..." line.

    A few title lines without a colon may come first (a loop over GPUs that echoes
    "=== GPU 0 NVLink Errors ===" before each command's output).
    """
    first = next(
        (n for n, line in enumerate(lines[:4]) if gpu_line(line, uuid_required=False)), None
    )
    if first is None or any(":" in line for line in lines[:first]):
        return None
    links = counters = mentions = others = 0
    for line in lines[first + 1 :]:
        if gpu_line(line, uuid_required=False) is not None or _MIG_LINE.match(line):
            continue
        if LINK_LINE.match(line):
            links += 1
            if _COUNTER.match(line):
                counters += 1
        elif "nvlink" in line.lower():
            mentions += 1
        elif ":" in line:
            # The block form of -e: a bare "Link 0:" line, then "Replay Errors: 0" lines.
            counters += 1
        else:
            others += 1
    if links and counters:
        return "nvlink-errors"
    if links or mentions:
        return "nvlink-status"
    if others == 0 and counters == 0:
        return "smi-list"
    return None


def detect(data: str) -> str:
    """The kind of output `data` is (one of KINDS); ParseError when it is none of them."""
    text = v.clean_text(data)
    stripped = text.lstrip()
    if not stripped:
        raise ParseError("empty input")
    if _XML_START.match(stripped):
        if "<nvidia_smi_log" in text:
            return "smi-xml"
        raise ParseError("not nvidia-smi output: XML without an <nvidia_smi_log> element")
    lines = _lines(text)
    if _is_capture(lines):
        return "capture"
    # nvidia-smi's notices about a troubled GPU ("WARNING: infoROM is corrupted at gpu ...",
    # "Unable to determine the device handle for GPU ...") stand before or among the lines
    # of any of its outputs: the output is what the other lines are.
    lines = [line for line in lines if smi_notice(line) is None] or lines
    if _XML_START.match(lines[0].lstrip()) and "<nvidia_smi_log" in text:
        return "smi-xml"
    # Bundles and dcgmi documents are JSON objects; a leading "[" is a dmesg time stamp.
    if stripped[0] == "{" or ("{" in text and '"DCGM' in text):
        if "workbench-probe-bundle/" in text:
            return "bundle"
        if '"DCGM GPU Diagnostic"' in text or '"DCGM Diagnostic"' in text:
            return "dcgm-json"
        if '"test_categories"' in text:
            return "dcgm-json"
        if stripped[0] == "{" and (
            _KERNEL_JSON.search(text[:4000]) or any(find_xid(line) for line in lines)
        ):
            return "kernel-log"
        if stripped[0] == "{":
            raise ParseError("JSON that is neither a probe bundle nor dcgmi diag -j output")
    if any("NVSMI LOG" in line for line in lines[:5]) or any(
        _SMI_GPU_BLOCK.match(line) for line in lines
    ):
        return "smi-text"
    kind = _gpu_blocks_kind(lines)
    if kind is not None:
        return kind
    if header_fields(lines[0]) is not None:
        return "query-csv"
    if any(find_xid(line) is not None for line in lines) or any(
        find_xid(line) is not None for line in text.split("\n")[_HEAD_LINES:]
    ):
        return "kernel-log"
    if any("SXid" in line and SXID_LINE.search(line) for line in lines):
        return "kernel-log"  # NVSwitch errors, whatever prefix the log gives them
    kernel = sum(1 for line in lines if _KERNEL_LINE.match(line) or _JOURNAL_MARK.match(line))
    if kernel * 2 >= len(lines):
        return "kernel-log"
    if "," in lines[0] and len(lines[0].split(",")) >= 2:
        raise ParseError(
            "comma-separated values without a --query-gpu header"
            " (for noheader output, give the field list)"
        )
    raise ParseError(f"not nvidia-smi output: {lines[0].strip()[:120]}")


def _words(command: str) -> list[str]:
    if not any(quote in command for quote in "'\"\\"):
        return command.split()  # shlex reads character by character: slow on long field lists
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def command_kind(command: str) -> tuple[str, list[str] | None] | None:
    """The kind of output a command line produces and, for --query-gpu, its field list.

    None for commands whose output the parsers do not read (topo -m, pmon, the table view, ...).
    The field list matters when the command asked for `noheader`: only then is it returned.
    """
    words = _words(command)
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    flags = set(words[1:])
    lowered = command.lower()
    if program == "nvidia-smi":
        for position, word in enumerate(words):
            if word.startswith("--query-gpu"):
                listed = word.partition("=")[2]
                if not listed and position + 1 < len(words):
                    listed = words[position + 1]
                fields = [name for name in listed.split(",") if name.strip()]
                formats = next((w.partition("=")[2] for w in words if w.startswith("--format")), "")
                return "query-csv", (fields if "noheader" in formats else None)
            if word.startswith("--query-") or word.startswith("--help"):
                return None
        if "nvlink" in flags:
            if flags & {"-e", "--errorcounters"}:
                return "nvlink-errors", None
            if flags & {"-s", "--status"}:
                return "nvlink-status", None
            return None
        if flags & {"-L", "--list-gpus"}:
            return "smi-list", None
        if flags & {"-q", "--query"}:
            if flags & {"-x", "--xml-format"}:
                return "smi-xml", None
            return "smi-text", None
        if "--version" in flags:
            return "smi-version", None
        return None
    if program == "dcgmi" and "diag" in flags and flags & {"-j", "--json"}:
        return "dcgm-json", None
    if (
        program in ("dmesg", "journalctl")
        or "xid" in lowered
        or "kern.log" in lowered
        or lowered.startswith("kernel log")
    ):
        return "kernel-log", None
    return None
