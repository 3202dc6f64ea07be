"""The outputs the parsers read, one entry each: start here to find anything about a format.

Each `Format` in FORMATS knows its key (what `detect` answers and `parse_output(kind=...)`
takes), its name as messages show it and a sentence describing it (both translated where shown:
the upload form's help lists every entry), how to recognise it from its content (`recognise`,
tried in the order of DETECTION), which command lines make it (`made_by`, read by
`command_kind` for a bundle's outputs, capture sections and `parse_outputs` pairs) and how to
read it (`parse`, dispatched by `parse_kind`). The code that reads each format is in its own
module:

    smi-xml        nvidia-smi -q -x                   smi_xml.py
    smi-text       nvidia-smi -q (or sections of it)  smi_text.py, smi_shape.py
    query-csv      nvidia-smi --query-gpu=...         query_csv.py
    smi-list       nvidia-smi -L                      smi_list.py
    smi-version    nvidia-smi --version               smi_version.py
    nvlink-status  nvidia-smi nvlink -s               nvlink.py
    nvlink-errors  nvidia-smi nvlink -e               nvlink.py
    capture        several commands in one file       capture.py, transcripts.py
    bundle         the push agent's JSON bundle       bundle.py, parsers.parse_bundle
    dcgm-json      dcgmi diag -r LEVEL -j             dcgm.py
    kernel-log     dmesg, journalctl -k, syslog       kernel_log.py

The commands run on a GPU node (agent, SSH probe, upload help, docs) are node_commands.py.
A capture and a bundle hold other formats' outputs: a capture's sections are read through this
registry; a bundle is read by parsers.parse_bundle (its entry has no `parse`).
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _

from poc.probes.facts import NodeFacts

from . import capture
from .dcgm import parse_dcgm
from .kernel_log import SXID_LINE, find_xid, parse_kernel_log
from .nvlink import LINK_LINE, parse_nvlink_errors, parse_nvlink_status
from .query_csv import header_fields, parse_query_csv
from .smi_list import gpu_line, parse_smi_list, smi_notice
from .smi_shape import build_tree, fragment_groups
from .smi_text import parse_smi_text
from .smi_version import is_version_output, parse_smi_version
from .smi_xml import parse_smi_xml
from .transcripts import Invocation, invocation
from .values import ParseError

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise as Promise
else:
    from django.utils.functional import Promise

# Detection reads the head of the text; the parsers read all of it.
HEAD_LINES = 400
# XML opens with a declaration, a document type, a comment or an element; "<4>" is a kernel log
# line's priority.
XML_START = re.compile(r"<[?!A-Za-z_]")
SMI_XML_ROOT = "<nvidia_smi_log"


@dataclass(frozen=True)
class Sample:
    """What detection reads of a text: all of it (cleaned), its first HEAD_LINES lines that are
    not blank (`head`), and whether it opens as a JSON object."""

    text: str
    head: list[str]
    opens_json: bool

    @classmethod
    def of(cls, text: str, *, opens_json: bool) -> "Sample":
        """`text` must hold more than blanks."""
        head = [line for line in text.split("\n", HEAD_LINES)[:HEAD_LINES] if line.strip()]
        if not head:  # blank lines only, as far as the head reaches: read from the first other
            head = [line for line in text.split("\n") if line.strip()][:HEAD_LINES]
        return cls(text, head, opens_json)

    @cached_property
    def lines(self) -> list[str]:
        """The head without nvidia-smi's notices about a troubled GPU ("WARNING: infoROM is
        corrupted at gpu ...", "Unable to determine the device handle for GPU ..."), which stand
        before or among the lines of any of its outputs: the output is what the others are."""
        return [line for line in self.head if smi_notice(line) is None] or self.head

    @cached_property
    def rest(self) -> list[str]:
        """The lines past the head."""
        return self.text.split("\n")[HEAD_LINES:]

    @cached_property
    def json_like(self) -> bool:
        """A JSON object, or dcgmi's JSON after a line of text."""
        return self.opens_json or ("{" in self.text and '"DCGM' in self.text)

    @cached_property
    def gpu_blocks(self) -> str | None:
        """What follows the "GPU N: ..." lines the text opens with: see _gpu_blocks_kind."""
        return _gpu_blocks_kind(self.lines)


# How the registry reads an output: its text, and the field list its command gave (query-csv).
Parse = Callable[[str, Sequence[str] | None], NodeFacts]


@dataclass(frozen=True)
class Format:
    """One output the parsers read. `json`: it may be a JSON document (the only kind a text
    opening with "{" may be); `made_by`: whether a command line prints it (at most one format's
    holds for any command); `fields`: the field list a command line gives (--query-gpu's,
    needed for `noheader` output); `parse`: None where the parsers read it another way."""

    key: str
    name: "str | Promise"
    description: "str | Promise"
    recognise: Callable[[Sample], bool]
    parse: Parse | None
    made_by: Callable[[Invocation], bool] | None = None
    fields: Callable[[Invocation], list[str] | None] | None = None
    json: bool = False


# --- recognising ------------------------------------------------------------------------------

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


def _is_smi_xml(sample: Sample) -> bool:
    return bool(XML_START.match(sample.lines[0].lstrip())) and SMI_XML_ROOT in sample.text


def _is_capture(sample: Sample) -> bool:
    """Blocks of `#####` lines naming `# $ command` or `# phase :: title`, or a first line
    `$ command` (terminal transcripts are told apart in detect, through transcripts.py)."""
    if sample.head[0].startswith("$ "):
        return True
    rules = 0
    for line in sample.head:
        if _HASH_RULE.match(line):
            rules += 1
        elif rules and _CAPTURE_HEADER.match(line):
            return True
    return False


def _is_bundle(sample: Sample) -> bool:
    return sample.json_like and "workbench-probe-bundle/" in sample.text


_DCGM_MARKS = ('"DCGM GPU Diagnostic"', '"DCGM Diagnostic"', '"test_categories"')


def _is_dcgm(sample: Sample) -> bool:
    text = sample.text
    return sample.json_like and any(mark in text for mark in _DCGM_MARKS)


def _has_smi_banner(lines: list[str]) -> bool:
    return any("NVSMI LOG" in line for line in lines[:5]) or any(
        _SMI_GPU_BLOCK.match(line) for line in lines
    )


def _is_smi_version(sample: Sample) -> bool:
    return not _has_smi_banner(sample.lines) and is_version_output(sample.lines)


def _is_smi_text(sample: Sample) -> bool:
    """The "NVSMI LOG" banner or a "GPU 00000000:3B:00.0" line, or a fragment of a GPU block
    without that line (see smi_shape)."""
    if _has_smi_banner(sample.lines):
        return True
    return fragment_groups(build_tree("\n".join(sample.lines)).children) is not None


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


def _is_query_csv(sample: Sample) -> bool:
    return header_fields(sample.lines[0]) is not None


def _is_kernel_log(sample: Sample) -> bool:
    """journalctl's or dmesg's JSON; else an Xid or NVSwitch SXid line, or a text that is
    mostly kernel log lines (any prefix dmesg, journalctl and syslog give them)."""
    lines = sample.lines
    if sample.opens_json:
        return bool(_KERNEL_JSON.search(sample.text[:4000])) or any(
            find_xid(line) for line in lines
        )
    if any(find_xid(line) is not None for line in lines) or any(
        find_xid(line) is not None for line in sample.rest
    ):
        return True
    if any("SXid" in line and SXID_LINE.search(line) for line in lines):
        return True
    kernel = sum(1 for line in lines if _KERNEL_LINE.match(line) or _JOURNAL_MARK.match(line))
    return kernel * 2 >= len(lines)


# --- the commands that make each output -----------------------------------------------------

_QUERY = frozenset(("-q", "--query"))
_XML = frozenset(("-x", "--xml-format"))
_LIST = frozenset(("-L", "--list-gpus"))
_ERRORS = frozenset(("-e", "--errorcounters"))
_STATUS = frozenset(("-s", "--status"))


def _smi_option(run: Invocation) -> str | None:
    """nvidia-smi's first --query-* or --help* option: --query-gpu makes the CSV, the others
    outputs the parsers do not read (--query-compute-apps, --help-query-gpu, ...)."""
    return next((w for w in run.words if w.startswith("--query-") or w.startswith("--help")), None)


def _smi(run: Invocation) -> bool:
    """nvidia-smi with neither --query-* nor --help*."""
    return run.program == "nvidia-smi" and _smi_option(run) is None


def _smi_report(run: Invocation) -> bool:
    """nvidia-smi's report, -q: not nvlink's nor the list's."""
    return _smi(run) and "nvlink" not in run.flags and not run.flags & _LIST


def _makes_smi_xml(run: Invocation) -> bool:
    return _smi_report(run) and bool(run.flags & _QUERY) and bool(run.flags & _XML)


def _makes_smi_text(run: Invocation) -> bool:
    return _smi_report(run) and bool(run.flags & _QUERY) and not run.flags & _XML


def _makes_smi_version(run: Invocation) -> bool:
    return _smi_report(run) and not run.flags & _QUERY and "--version" in run.flags


def _makes_smi_list(run: Invocation) -> bool:
    return _smi(run) and "nvlink" not in run.flags and bool(run.flags & _LIST)


def _makes_nvlink_status(run: Invocation) -> bool:
    flags = run.flags
    return _smi(run) and "nvlink" in flags and bool(flags & _STATUS) and not flags & _ERRORS


def _makes_nvlink_errors(run: Invocation) -> bool:
    return _smi(run) and "nvlink" in run.flags and bool(run.flags & _ERRORS)


def _makes_query_csv(run: Invocation) -> bool:
    option = _smi_option(run) if run.program == "nvidia-smi" else None
    return option is not None and option.startswith("--query-gpu")


def _query_fields(run: Invocation) -> list[str] | None:
    """The fields a --query-gpu command line names, when it asks for `noheader` output (which
    cannot be read without them); None otherwise."""
    words = run.words
    for position, word in enumerate(words):
        if word.startswith("--query-gpu"):
            listed = word.partition("=")[2]
            if not listed and position + 1 < len(words):
                listed = words[position + 1]
            fields = [name for name in listed.split(",") if name.strip()]
            formats = next((w.partition("=")[2] for w in words if w.startswith("--format")), "")
            return fields if "noheader" in formats else None
    return None


def _makes_dcgm(run: Invocation) -> bool:
    return run.program == "dcgmi" and "diag" in run.flags and bool(run.flags & {"-j", "--json"})


def _makes_kernel_log(run: Invocation) -> bool:
    """dmesg, journalctl, or a command naming xid or kern.log, or named "kernel log"."""
    if run.program == "nvidia-smi" or _makes_dcgm(run):
        return False
    line = run.line
    return (
        run.program in ("dmesg", "journalctl")
        or "xid" in line
        or "kern.log" in line
        or line.startswith("kernel log")
    )


# --- reading --------------------------------------------------------------------------------


def _text_only(parse: Callable[[str], NodeFacts]) -> Parse:
    """A parser that takes no field list, as the registry calls it."""

    def read(text: str, fields: Sequence[str] | None = None) -> NodeFacts:
        return parse(text)

    return read


def _parse_query_csv(text: str, fields: Sequence[str] | None = None) -> NodeFacts:
    return parse_query_csv(text, fields=fields)


def _parse_capture(text: str, fields: Sequence[str] | None = None) -> NodeFacts:
    return capture.parse_capture(text, read=parse_command_output)


FORMATS: tuple[Format, ...] = (
    Format(
        key="smi-xml",
        name=_("nvidia-smi XML report"),
        description=_("nvidia-smi -q -x: the full report of every GPU, as XML."),
        recognise=_is_smi_xml,
        parse=_text_only(parse_smi_xml),
        made_by=_makes_smi_xml,
    ),
    Format(
        key="smi-text",
        name=_("nvidia-smi report"),
        description=_(
            "nvidia-smi -q: the full report as text, or sections of it pasted on their own "
            "(ECC Errors, Remapped Rows)."
        ),
        recognise=_is_smi_text,
        parse=_text_only(parse_smi_text),
        made_by=_makes_smi_text,
    ),
    Format(
        key="query-csv",
        name=_("nvidia-smi --query-gpu CSV"),
        description=_(
            "nvidia-smi --query-gpu=… --format=csv: chosen fields, with the header line."
        ),
        recognise=_is_query_csv,
        parse=_parse_query_csv,
        made_by=_makes_query_csv,
        fields=_query_fields,
    ),
    Format(
        key="smi-list",
        name=_("nvidia-smi GPU list"),
        description=_("nvidia-smi -L: each GPU with its UUID, and its MIG devices."),
        recognise=lambda sample: sample.gpu_blocks == "smi-list",
        parse=_text_only(parse_smi_list),
        made_by=_makes_smi_list,
    ),
    Format(
        key="smi-version",
        name=_("nvidia-smi versions"),
        description=_("nvidia-smi --version: the driver's, NVML's and CUDA's versions."),
        recognise=_is_smi_version,
        parse=_text_only(parse_smi_version),
        made_by=_makes_smi_version,
    ),
    Format(
        key="nvlink-status",
        name=_("NVLink status"),
        description=_("nvidia-smi nvlink -s: each GPU's NVLink links and their speed."),
        recognise=lambda sample: sample.gpu_blocks == "nvlink-status",
        parse=_text_only(parse_nvlink_status),
        made_by=_makes_nvlink_status,
    ),
    Format(
        key="nvlink-errors",
        name=_("NVLink error counters"),
        description=_("nvidia-smi nvlink -e: each NVLink link's error counters."),
        recognise=lambda sample: sample.gpu_blocks == "nvlink-errors",
        parse=_text_only(parse_nvlink_errors),
        made_by=_makes_nvlink_errors,
    ),
    Format(
        key="capture",
        name=_("capture of several commands"),
        description=_(
            "Several of these outputs from one node in one file, each after its command: a "
            "“$ nvidia-smi -q” line, a block of ##### lines naming it, or a shell prompt (a "
            "terminal transcript, also as the script command records it)."
        ),
        recognise=_is_capture,
        parse=_parse_capture,
    ),
    Format(
        key="bundle",
        name=_("workbench-probe bundle"),
        description=_("The push agent's JSON bundle, saved with workbench-probe --output."),
        recognise=_is_bundle,
        parse=None,
        json=True,
    ),
    Format(
        key="dcgm-json",
        name=_("DCGM diagnostics"),
        description=_("dcgmi diag -r LEVEL -j: DCGM's diagnostic results as JSON."),
        recognise=_is_dcgm,
        parse=_text_only(parse_dcgm),
        made_by=_makes_dcgm,
        json=True,
    ),
    Format(
        key="kernel-log",
        name=_("kernel log"),
        description=_(
            "dmesg, journalctl -k or syslog lines: the Xid and NVSwitch SXid errors and the GPUs "
            "the driver could not initialise are read, every other line is ignored."
        ),
        recognise=_is_kernel_log,
        parse=_text_only(parse_kernel_log),
        made_by=_makes_kernel_log,
        json=True,
    ),
)
KINDS = tuple(found.key for found in FORMATS)
FORMAT = {found.key: found for found in FORMATS}
CAPTURE = FORMAT["capture"]
# The order detection tries them in, the first that fits winning: an XML document is the report
# or nothing, a capture's layout (then a terminal transcript) comes before any output's content,
# and a text that opens with "{" is one of the JSON formats or refused.
DETECTION = tuple(
    FORMAT[key]
    for key in (
        "smi-xml",
        "capture",
        "bundle",
        "dcgm-json",
        "smi-version",
        "smi-text",
        "nvlink-errors",
        "nvlink-status",
        "smi-list",
        "query-csv",
        "kernel-log",
    )
)


def parse_kind(kind: str, text: str, *, fields: Sequence[str] | None = None) -> NodeFacts:
    """Facts from one output whose kind is known (one of KINDS)."""
    if not text.strip():
        raise ParseError("empty output")
    found = FORMAT.get(kind)
    if found is None:
        raise ParseError(f"unknown input kind {kind!r}")
    if found.parse is None:
        raise ParseError("a probe bundle cannot be read as one output of another input")
    return found.parse(text, fields)


def command_kind(command: str) -> tuple[str, list[str] | None] | None:
    """The kind of output a command line produces and, for --query-gpu, its field list.

    None for commands whose output the parsers do not read (topo -m, pmon, the table view, ...).
    The field list matters when the command asked for `noheader`: only then is it returned.
    """
    run = invocation(command)
    if run is None:
        return None
    for found in FORMATS:
        if found.made_by is not None and found.made_by(run):
            return found.key, (found.fields(run) if found.fields is not None else None)
    return None


def parse_command_output(command: str, text: str) -> NodeFacts | None:
    """Facts from the output of a command line, read as the command says; None for a command
    whose output the parsers do not read."""
    found = command_kind(command)
    if found is None:
        return None
    kind, fields = found
    return parse_kind(kind, text, fields=fields)
