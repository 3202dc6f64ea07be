"""Run several long-lived processes together and stop them together (`manage.py serve`).

Each child runs in a process group of its own, so that what it starts in turn (the web server's
reloader child, the worker's embedded beat) is stopped with it, and so that a terminal's Ctrl+C
reaches the supervisor alone, which then stops each group in order:

- SIGINT or SIGTERM: every group gets SIGTERM; a group still running after `grace_s` gets
  SIGKILL. A second signal kills at once.
- A child that exits on its own takes the others down, with a message naming it, and the run
  ends with a non-zero status.

Nothing of a group is left when `run()` returns (each group is waited for until it is empty).
"""

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
POLL_S = 0.1


@dataclass(frozen=True)
class Child:
    name: str
    argv: Sequence[str]


@dataclass(frozen=True)
class Running:
    child: Child
    process: subprocess.Popen[bytes]

    @property
    def name(self) -> str:
        return self.child.name

    @property
    def pgid(self) -> int:
        return self.process.pid  # the leader of a new session: its group id is its pid


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal is still a member
        return True
    return True


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


class Supervisor:
    def __init__(
        self,
        children: Sequence[Child],
        *,
        grace_s: float = 7.0,
        say: Callable[[str], None] = print,
    ) -> None:
        self.children = list(children)
        self.grace_s = grace_s
        self.say = say
        self._running: list[Running] = []
        self._stop_signal: int | None = None
        self._kill_now = False

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._stop_signal is None:
            self._stop_signal = signum
        else:
            self._kill_now = True
            for running in self._running:
                _signal_group(running.pgid, signal.SIGKILL)

    def run(self) -> int:
        """Start every child and supervise them until a signal or a child's exit; 0 when
        stopped by a signal with every child still up, 1 when a child ended the run."""
        previous = {signum: signal.signal(signum, self._on_signal) for signum in STOP_SIGNALS}
        failed: Running | None = None
        try:
            for child in self.children:
                if self._stop_signal is not None:
                    break
                process = subprocess.Popen(child.argv, start_new_session=True)
                self._running.append(Running(child, process))
            while self._stop_signal is None and failed is None:
                failed = next((r for r in self._running if r.process.poll() is not None), None)
                if failed is None:
                    time.sleep(POLL_S)
            if failed is not None:
                others = [r.name for r in self._running if r is not failed]
                self.say(
                    f"serve: the {failed.name} exited with code {failed.process.returncode}; "
                    f"stopping {' and '.join(others) or 'nothing else'}"
                )
            self._stop()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return 1 if failed is not None else 0

    def _stop(self) -> None:
        started = list(self._running)
        for child in started:
            if not self._kill_now:
                _signal_group(child.pgid, signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s
        while time.monotonic() < deadline and not self._kill_now:
            for child in started:
                child.process.poll()
            if not any(_group_alive(child.pgid) for child in started):
                return
            time.sleep(POLL_S)
        for child in started:
            if _group_alive(child.pgid):
                if not self._kill_now:
                    self.say(f"serve: the {child.name} did not stop in time; killing it")
                _signal_group(child.pgid, signal.SIGKILL)
        for child in started:
            child.process.wait()
            end = time.monotonic() + 2.0
            while _group_alive(child.pgid) and time.monotonic() < end:
                time.sleep(POLL_S)
