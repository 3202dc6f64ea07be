"""Which output a text is, from its content (`detect`) or from the command that made it.

Detection looks at the structure that identifies each output, never at values, in this order:

* smi-xml: XML whose root element is <nvidia_smi_log> (other XML is refused).
* capture: command sections, either blocks of `#####` lines naming `# $ command` or
  `# phase :: title`, or a text that opens with a `$ command` line, or a terminal transcript:
  a text that opens with a shell prompt (`root@gpu01:~#`, `[user@node01 ~]$`, `gpu01:~ #`,
  PowerShell's, cmd.exe's, ...; a typescript's "Script started on" header may come first),
  or holds two prompts after a login banner, and runs a tool the parsers read at one of its
  prompts (see prompt_command). One prompt line over an output the other rules recognise is
  that output.
* bundle: a JSON object naming the format "workbench-probe-bundle/...".
* dcgm-json: JSON holding "DCGM GPU Diagnostic", "DCGM Diagnostic" or "test_categories",
  possibly after a line of text.
* smi-text: the "NVSMI LOG" banner, or a "GPU 00000000:3B:00.0" block header line; or a
  fragment of a GPU block without that line (sections such as "ECC Errors" or "Remapped
  Rows" as pasted into a ticket; see smi_shape).
* smi-version: nothing but the "label : value" lines of `nvidia-smi --version`
  ("NVIDIA-SMI version", "NVML version", "DRIVER version", "CUDA Version").
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
from .smi_shape import build_tree, fragment_groups
from .smi_version import is_version_output
from .values import ParseError

KINDS = (
    "smi-xml",
    "smi-text",
    "query-csv",
    "smi-list",
    "smi-version",
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

# Terminal clutter values.clean_text leaves: operating system commands (the window title a
# prompt sets), character set and keypad selections, other two-character escapes, bells.
_TERMINAL = re.compile(r"\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[()][0-9A-Za-z]|\x1b[^\[\n]|\x07")
# Shell prompts that cannot be output: user@host, a SUSE host with its path, bash's own
# `bash-5.1$`, oh-my-zsh's arrow and directory; a conda or virtualenv name may stand before
# them. Then Windows: a PowerShell location or a drive's path. Group 1 is the command.
_PROMPT = re.compile(
    r"(?:\([\w.@-]+\)\s+)?"
    r"(?:[\w.-]+@[\w.-]+(?::[^\s#$%>]*| [^\s#$%>]+)?\s?[#$%>]"
    r"|\[[\w.-]+@[\w.-]+(?:\s[^\]]*)?\][#$]"
    r"|[\w.-]+:[~/][^\s#$]* [#>]"
    r"|(?:ba|z|k)?sh-\d+(?:\.\d+)*[#$]"
    r"|➜\s+\S+(?:\s+git:\([^)]*\))?(?:\s+✗)?)"
    r"(?:\s+(.*))?$"
)
_WINDOWS_PROMPT = re.compile(r"(?:PS [^>\n]+>|[A-Za-z]:\\[^>\n]*>)\s*(.*)$")
# Bare prompts (`$ cmd`, root's `# cmd`, zsh's `% cmd`, `❯ cmd`): `$` opens a command as it
# always has; the others only when the command runs a tool the parsers read, since a line
# starting with `#` may be any comment.
_BARE_PROMPT = re.compile(r"([#%❯])\s+(\S.*)$")
# The tools whose output the parsers read; `sudo`, `time` and the like may stand before them.
_READ_TOOLS = frozenset(("nvidia-smi", "dcgmi", "dmesg", "journalctl"))
_WRAPPERS = frozenset(("sudo", "doas", "time", "env", "nohup", "command", "exec", "nice"))
# Options of the wrappers that take a value (`sudo -u root`, `nice -n 5`).
_WRAPPER_VALUES = frozenset(("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-n"))
# Commands a pipe may send an output through and leave it the same kind.
_FILTERS = frozenset(
    ("grep", "egrep", "fgrep", "rg", "head", "tail", "less", "more", "cat", "tee", "sort", "uniq")
)
SCRIPT_START = "Script started on "
SCRIPT_END = "Script done on "


def _lines(text: str) -> list[str]:
    head: list[str] = []
    for line in text.split("\n", _HEAD_LINES)[:_HEAD_LINES]:
        if line.strip():
            head.append(line)
    return head


def strip_terminal(text: str) -> str:
    """Text with the terminal escapes values.clean_text keeps removed and backspaces applied."""
    if "\x1b" in text or "\x07" in text:
        text = _TERMINAL.sub("", text)
    if "\b" in text:
        kept: list[str] = []
        for char in text:
            if char != "\b":
                kept.append(char)
            elif kept and kept[-1] != "\n":
                kept.pop()
        text = "".join(kept)
    return text


def prompt_command(line: str) -> str | None:
    """The command of a shell prompt line ("" when the prompt stands alone), else None.

    `$ command` and prompts that cannot be output (see _PROMPT) always count; a bare `#`,
    `%` or `❯` prompt only when its command runs a tool the parsers read.
    """
    if line.startswith("$ ") or line.rstrip() == "$":
        return line[1:].strip()
    match = _PROMPT.match(line) or _WINDOWS_PROMPT.match(line)
    if match is not None:
        return (match.group(1) or "").strip()
    bare = _BARE_PROMPT.match(line)
    if bare is not None and runs_read_tool(bare.group(2)):
        return bare.group(2).strip()
    return None


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


def _transcript_prompts(lines: list[str]) -> int:
    """How many prompt lines a terminal transcript's head holds; 0 when it is not one.

    A transcript runs a tool the parsers read at one of its prompts, and either opens with a
    prompt (maybe after a typescript's header) or holds two prompts or more after a preamble
    (a login banner, the message of the day).
    """
    head = [strip_terminal(line) for line in lines]
    commands = [command for command in map(prompt_command, head) if command is not None]
    if not any(runs_read_tool(command) for command in commands):
        return 0
    if head[0].startswith(SCRIPT_START):
        head = head[1:]
    if len(commands) >= 2 or (head and prompt_command(head[0]) is not None):
        return len(commands)
    return 0


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
    prompts = _transcript_prompts(lines)
    if prompts == 1 and any(
        prompt_command(strip_terminal(line)) is not None for line in text.split("\n")[_HEAD_LINES:]
    ):
        prompts = 2  # the next command comes after a long output
    if prompts == 1:
        # One command line over its output (`# dmesg | grep -i xid` and the Xid line): what
        # the output is, when its lines tell; else the one section a capture reads.
        try:
            return _content_kind(text, stripped, lines)
        except ParseError:
            return "capture"
    if prompts:
        return "capture"
    return _content_kind(text, stripped, lines)


def _content_kind(text: str, stripped: str, lines: list[str]) -> str:
    """The kind `detect` finds from the lines of an output that is not a capture."""
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
    if is_version_output(lines):
        return "smi-version"
    if fragment_groups(build_tree("\n".join(lines)).children) is not None:
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
    # Without quotes a backslash is a Windows path's (C:\...\nvidia-smi.exe), not an escape.
    if not any(quote in command for quote in "'\""):
        return command.split()  # shlex reads character by character: slow on long field lists
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _program(word: str) -> str:
    name = re.split(r"[/\\]", word)[-1]
    return name[:-4] if name.lower().endswith(".exe") else name


def _pipeline(command: str) -> list[list[str]]:
    """The words of each stage of a pipeline, wrappers (`sudo -E`, `time`) left out."""
    if any(quote in command for quote in "'\""):
        try:
            lexer = shlex.shlex(command, posix=True, punctuation_chars="|")
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError:
            words = command.split()
    else:
        words = command.replace("|", " | ").split()
    stages: list[list[str]] = [[]]
    for word in words:
        if word.strip("|") == "":
            if stages[-1]:
                stages.append([])
        else:
            stages[-1].append(word)
    for stage in stages:
        while stage and (_program(stage[0]) in _WRAPPERS or "=" in stage[0]):
            stage.pop(0)
            while stage and stage[0].startswith("-"):
                option = stage.pop(0)
                if option in _WRAPPER_VALUES and stage:
                    stage.pop(0)
    return [stage for stage in stages if stage]


def runs_read_tool(command: str) -> bool:
    """Whether a command line runs a tool whose output the parsers read (nvidia-smi, ...)."""
    stages = _pipeline(command)
    return bool(stages) and _program(stages[0][0]) in _READ_TOOLS


def command_kind(command: str) -> tuple[str, list[str] | None] | None:
    """The kind of output a command line produces and, for --query-gpu, its field list.

    None for commands whose output the parsers do not read (topo -m, pmon, the table view, ...).
    The field list matters when the command asked for `noheader`: only then is it returned.
    """
    words = _words(command)
    if not words:
        return None
    program = _program(words[0])
    if program in _WRAPPERS or "=" in words[0] or "|" in command:
        # `sudo nvidia-smi -q`, `nvidia-smi -q | grep -i ecc`: the first command's own words
        # name the output, and a filter after it leaves the output that kind.
        stages = _pipeline(command)
        if stages:
            words = stages[0]
            program = _program(words[0])
            if program in ("nvidia-smi", "dcgmi") and any(
                _program(stage[0]) not in _FILTERS for stage in stages[1:]
            ):
                return None
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
