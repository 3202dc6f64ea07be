"""Terminal transcripts: shell prompts, what stands before a command and after it, typescripts.

A transcript is what a terminal showed, pasted or recorded with `script`: each command after its
shell prompt (`root@gpu01:~#`, `[user@node01 ~]$`, SUSE's `gpu01:~ #`, `bash-5.1$`, oh-my-zsh's
arrow, PowerShell's and cmd.exe's prompts, or a bare `$`, `#`, `%` or `❯`), maybe with `sudo`
or `time` before the tool and `| grep` after it, between a typescript's "Script started on" and
"Script done on" lines, with the window titles and other escapes a terminal leaves.

detect asks whether a text is a transcript (`transcript_prompts`), capture where each command's
section starts (`prompt_command`), and formats.command_kind which tool a command line runs and
with which words (`invocation`).
"""

import re
import shlex
from dataclasses import dataclass

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
READ_TOOLS = frozenset(("nvidia-smi", "dcgmi", "dmesg", "journalctl"))
WRAPPERS = frozenset(("sudo", "doas", "time", "env", "nohup", "command", "exec", "nice"))
# Options of the wrappers that take a value (`sudo -u root`, `nice -n 5`).
_WRAPPER_VALUES = frozenset(("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-n"))
# Commands a pipe may send an output through and leave it the same kind.
FILTERS = frozenset(
    ("grep", "egrep", "fgrep", "rg", "head", "tail", "less", "more", "cat", "tee", "sort", "uniq")
)
# The tools whose output any other command after a pipe (awk, wc, ...) makes unreadable; a
# kernel log stays one whatever selects its lines.
_FILTERED_ONLY = ("nvidia-smi", "dcgmi")
SCRIPT_START = "Script started on "
SCRIPT_END = "Script done on "


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


def transcript_prompts(head: list[str]) -> int:
    """How many prompt lines a terminal transcript's head (its first non-blank lines) holds; 0
    when it is not one.

    A transcript runs a tool the parsers read at one of its prompts, and either opens with a
    prompt (maybe after a typescript's header) or holds two prompts or more after a preamble
    (a login banner, the message of the day).
    """
    head = [strip_terminal(line) for line in head]
    commands = [command for command in map(prompt_command, head) if command is not None]
    if not any(runs_read_tool(command) for command in commands):
        return 0
    if head[0].startswith(SCRIPT_START):
        head = head[1:]
    if len(commands) >= 2 or (head and prompt_command(head[0]) is not None):
        return len(commands)
    return 0


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
        while stage and (_program(stage[0]) in WRAPPERS or "=" in stage[0]):
            stage.pop(0)
            while stage and stage[0].startswith("-"):
                option = stage.pop(0)
                if option in _WRAPPER_VALUES and stage:
                    stage.pop(0)
    return [stage for stage in stages if stage]


def runs_read_tool(command: str) -> bool:
    """Whether a command line runs a tool whose output the parsers read (nvidia-smi, ...)."""
    stages = _pipeline(command)
    return bool(stages) and _program(stages[0][0]) in READ_TOOLS


@dataclass(frozen=True)
class Invocation:
    """The command whose output a command line shows: its program (`nvidia-smi` for
    `/usr/bin/nvidia-smi` or `nvidia-smi.exe`), its words (the program's first), the set of
    them, and the whole command line in lower case."""

    program: str
    words: list[str]
    flags: frozenset[str]
    line: str


def invocation(command: str) -> Invocation | None:
    """What a command line runs, past `sudo`, `time`, `VAR=value` and the like; a filter after
    a pipe (`| grep -i ecc`) leaves the output what it was. None for an empty line, and for
    nvidia-smi or dcgmi piped through anything else (`| awk ...`, `| wc -l`)."""
    words = _words(command)
    if not words:
        return None
    program = _program(words[0])
    if program in WRAPPERS or "=" in words[0] or "|" in command:
        # `sudo nvidia-smi -q`, `nvidia-smi -q | grep -i ecc`: the first command's own words
        # name the output, and a filter after it leaves the output that kind.
        stages = _pipeline(command)
        if stages:
            words = stages[0]
            program = _program(words[0])
            if program in _FILTERED_ONLY and any(
                _program(stage[0]) not in FILTERS for stage in stages[1:]
            ):
                return None
    return Invocation(program, words, frozenset(words[1:]), command.lower())
