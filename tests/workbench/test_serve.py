"""`manage.py serve` and its supervisor stop cleanly, with real processes: SIGINT and SIGTERM
stop the web server and the worker (with its beat) and leave no process behind; a second signal
kills at once; a process that dies takes the others down and the command exits non-zero."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.sshd import free_port

ROOT = Path(__file__).resolve().parents[2]
SLEEPER = "import time; time.sleep(120)"
STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
# A child that starts a grandchild in its own group, as the worker starts its beat.
PARENT = (
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
    f"{SLEEPER!r}]); time.sleep(120)"
)


def descendants(pid: int) -> set[int]:
    """Every living process below `pid`, read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.add(pid)
    return living


def ignoring_sigterm(pids: set[int]) -> int:
    """How many of `pids` have already set SIGTERM to be ignored (SigIgn in /proc): a child
    signalled before it gets that far would simply die, and the grace would go untested."""
    count = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        mask = re.search(r"^SigIgn:\s*([0-9a-f]+)", status, re.MULTILINE)
        if mask and int(mask.group(1), 16) & (1 << (signal.SIGTERM - 1)):
            count += 1
    return count


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def supervise(children: list[tuple[str, str]], tmp_path: Path, grace_s: float = 7.0):
    """A supervisor in a process of its own over `python -c` children."""
    script = (
        "import sys; from workbench.processes import Child, Supervisor; "
        f"children = [Child(n, [sys.executable, '-c', c]) for n, c in {children!r}]; "
        f"sys.exit(Supervisor(children, grace_s={grace_s}).run())"
    )
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        stdout=(tmp_path / "out.log").open("w"),
        stderr=subprocess.STDOUT,
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_every_child_and_what_they_started(signum: int, tmp_path: Path) -> None:
    runner = supervise([("web server", SLEEPER), ("worker", PARENT)], tmp_path)
    wait_for(lambda: len(descendants(runner.pid)) >= 3, 15, "three processes")
    below = descendants(runner.pid)
    runner.send_signal(signum)
    assert runner.wait(timeout=10) == 0
    assert alive(below) == set()


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    runner = supervise([("web server", SLEEPER), ("worker", STUBBORN)], tmp_path, grace_s=1.5)
    wait_for(lambda: len(descendants(runner.pid)) >= 2, 15, "two processes")
    wait_for(lambda: ignoring_sigterm(descendants(runner.pid)) >= 1, 15, "the stubborn child")
    below = descendants(runner.pid)
    started = time.monotonic()
    runner.send_signal(signal.SIGTERM)
    assert runner.wait(timeout=10) == 0
    assert 1.4 <= time.monotonic() - started < 6
    assert alive(below) == set()
    assert "the worker did not stop in time; killing it" in (tmp_path / "out.log").read_text()


def test_a_second_signal_kills_at_once(tmp_path: Path) -> None:
    runner = supervise([("web server", STUBBORN), ("worker", STUBBORN)], tmp_path, grace_s=60)
    wait_for(lambda: len(descendants(runner.pid)) >= 2, 15, "two processes")
    wait_for(lambda: ignoring_sigterm(descendants(runner.pid)) >= 2, 15, "two stubborn children")
    below = descendants(runner.pid)
    runner.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert runner.poll() is None and alive(below) == below  # waiting for the grace of 60 s
    runner.send_signal(signal.SIGINT)
    assert runner.wait(timeout=5) == 0
    assert alive(below) == set()


def test_a_child_that_dies_takes_the_others_down(tmp_path: Path) -> None:
    runner = supervise(
        [("web server", "import sys, time; time.sleep(1); sys.exit(3)"), ("worker", PARENT)],
        tmp_path,
    )
    wait_for(lambda: len(descendants(runner.pid)) >= 3, 15, "three processes")
    below = descendants(runner.pid)
    assert runner.wait(timeout=15) == 1
    assert alive(below) == set()
    said = (tmp_path / "out.log").read_text()
    assert "the web server exited with code 3; stopping worker" in said


def serve_env(tmp_path: Path) -> dict[str, str]:
    """Development settings on SQLite and the file broker of a folder of the test's own (a
    worker on the suite's Redis would take other tests' jobs)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_URL", "REDIS_URL", "CELERY_", "DJANGO_ENV"))
    }
    env["WORKBENCH_VAR_DIR"] = str(tmp_path / "var")
    return env


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.mark.worker
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_stops_the_web_server_and_the_worker(signum: int, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--reload"],
        cwd=ROOT,
        env=serve_env(tmp_path),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: answers(f"http://127.0.0.1:{port}/healthz/"), 60, "the web server")
        wait_for(lambda: "ready." in log.read_text(), 60, "the worker")
        wait_for(lambda: "beat: Starting" in log.read_text(), 30, "the beat")
        # runserver's reloader and its server, the worker, and the worker's beat process.
        below = descendants(serve.pid)
        assert len(below) >= 4, log.read_text()
        started = time.monotonic()
        serve.send_signal(signum)
        assert serve.wait(timeout=12) == 0, log.read_text()
        assert time.monotonic() - started < 10
        assert alive(below) == set(), log.read_text()
        assert not answers(f"http://127.0.0.1:{port}/healthz/")
    finally:
        if serve.poll() is None:
            serve.kill()


def test_serve_exits_non_zero_when_the_web_server_cannot_start(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT,
            env=serve_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "the web server exited with code 1; stopping worker" in said
    assert "stopped because a process exited" in said
