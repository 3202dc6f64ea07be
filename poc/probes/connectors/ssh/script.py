"""The one-session script's parts: its commands, and reading their framed
output back stream by stream."""

import re
import shlex
import signal
import time
from dataclasses import dataclass
from typing import Any


def succeeded(entry: dict[str, Any]) -> bool:
    return entry["error"] is None and entry["exit_code"] == 0


def add_note(entry: dict[str, Any], note: str) -> None:
    if note:
        entry["note"] = f"{entry['note']}; {note}" if entry.get("note") else note


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./,:+@%=-]+\Z")
_SIGNALS = {int(s): s.name.removeprefix("SIG") for s in signal.Signals}


@dataclass(frozen=True)
class Step:
    """One command of a node's batch. `plain`: its words run as they are (the GPU commands);
    otherwise the login shell reads it, as on a channel of its own. Steps of one `group` stop
    at the first that exits 0 (the kernel log: dmesg, else journalctl)."""

    name: str
    command: str
    plain: bool = True
    group: str = ""


def shown_words(step: Step) -> str:
    words = step.command.split()
    if step.plain and words and "=" not in words[0] and all(map(_PLAIN_WORD.match, words)):
        return " ".join(words)
    return '"${SHELL:-/bin/sh}" -c ' + shlex.quote(step.command)


class Splitter:
    """One stream of a batch (stdout or stderr), split at its markers as it arrives; each
    command's part is kept up to `limit` bytes."""

    def __init__(self, nonce: str, limit: int) -> None:
        self.nonce = nonce.encode()
        self.limit = limit
        self.marker = re.compile(re.escape(self.nonce) + rb":(?:h:(\d)|(\d+):b(?::(\d+))?)\n")
        self.header: bytes | None = None
        self.parts: dict[int, bytearray] = {}
        self.status: dict[int, int] = {}
        self.began: dict[int, float] = {}
        self.pids: dict[int, int] = {}  # the process each command ran in (stdout's markers)
        self.ended: dict[int, float] = {}
        self.current: int | None = None
        self.last = time.monotonic()  # when the last marker came
        self.eof = False
        self.stray = bytearray()  # the first bytes seen outside any command's frame
        self._pending = b""

    def _keep(self, data: bytes) -> None:
        assert self.current is not None
        part = self.parts[self.current]
        room = self.limit - len(part)
        if room > 0:
            part += data[:room]

    def _drop(self, data: bytes) -> None:
        if len(self.stray) < 200:
            self.stray += data[: 200 - len(self.stray)]

    def feed(self, data: bytes, now: float) -> None:
        buffer = self._pending + data
        while True:
            if self.current is None:
                found = self.marker.search(buffer)
                if found is None:
                    # Anything between the commands (a shell's complaint, a banner) is dropped.
                    keep = len(self.nonce) + 24
                    self._drop(buffer[: max(len(buffer) - keep, 0)])
                    self._pending = buffer[-keep:]
                    return
                self._drop(buffer[: found.start()])
                if found.group(1) is not None:
                    self.header = found.group(1)
                else:
                    self.current = int(found.group(2))
                    self.parts[self.current] = bytearray()
                    self.began[self.current] = now
                    if found.group(3) is not None:
                        self.pids[self.current] = int(found.group(3))
                self.last = now
                buffer = buffer[found.end() :]
                continue
            end = b"\n%s:%d:e:" % (self.nonce, self.current)
            at = buffer.find(end)
            if at < 0:
                keep = len(end) - 1
                if len(buffer) > keep:
                    self._keep(buffer[: len(buffer) - keep])
                    buffer = buffer[len(buffer) - keep :]
                self._pending = buffer
                return
            line_end = buffer.find(b"\n", at + len(end))
            if line_end < 0:  # the status is still on its way
                self._keep(buffer[:at])
                self._pending = buffer[at:]
                return
            self._keep(buffer[:at])
            status = buffer[at + len(end) : line_end]
            self.status[self.current] = int(status) if status.isdigit() else -1
            self.ended[self.current] = now
            self.current, self.last = None, now
            buffer = buffer[line_end + 1 :]

    def finish(self) -> None:
        """The stream ended or was cut: what the current command printed so far is its part."""
        if self.current is not None:
            self._keep(self._pending)
        else:
            self._drop(self._pending)
        self._pending = b""

    def text(self, index: int) -> str:
        return bytes(self.parts.get(index, b"")).decode("utf-8", "replace")[: self.limit]


@dataclass
class Batch:
    """What the batch gave: an entry per command it ran (None where it did not reach), and a
    note for the commands that then run on channels of their own ("" when none need to)."""

    entries: list[dict[str, Any] | None]
    note: str = ""


async def pump(reader: Any, splitter: Splitter) -> None:
    while chunk := await reader.read(65536):
        splitter.feed(chunk, time.monotonic())
    splitter.eof = True


def batch_entry(
    step: Step,
    index: int,
    out: Splitter,
    err: Splitter,
    timeout: float,
    timed_out: bool,
    cut: str,
    now: float,
) -> dict[str, Any]:
    seconds = out.ended.get(index, now) - out.began[index]
    entry: dict[str, Any] = {
        "name": step.name,
        "command": step.command,
        "exit_code": None,
        "stdout": out.text(index),
        "stderr": err.text(index),
        "error": None,
        "duration_s": round(seconds, 3),
    }
    status = out.status.get(index)
    if status is None:
        entry["error"] = cut or "the node's shell ended before the command did"
    elif timed_out:  # it ran past its limit: the client had it signalled
        entry["error"] = f"timed out after {timeout:g} s"
    else:
        entry["exit_code"] = status
        if status - 128 in _SIGNALS and status > 128:
            entry["error"] = f"killed by signal {_SIGNALS[status - 128]}"
    return entry
