"""A new user's first run: `git clone`, then `make run`, until the login page answers.

Clones this repository (its committed HEAD) into a temporary folder, runs `make run` there on a
free port and times, from the clone's start, when the login page first answers 200. The package
caches are whatever this machine has (run it twice for the warm-cache figure). Then it stops
`make run` with SIGTERM, as a service manager would, and reports how long the stop took and
whether any process of the run was left. Standard library only; loopback only.

    python bench/first_run.py [--runs N] [--keep]
"""

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 600.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def one_run(keep: bool) -> dict[str, float | str]:
    folder = Path(tempfile.mkdtemp(prefix="first-run-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REDIS_URL"))}
    env.pop("VIRTUAL_ENV", None)
    log = (folder / "make-run.log").open("w")
    start = time.perf_counter()
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder / "wb")], check=True, env=env)
    cloned = time.perf_counter() - start
    process = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=folder / "wb",
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/accounts/login/"
    ready = None
    while time.perf_counter() - start < LIMIT_S and process.poll() is None:
        if answers(url):
            ready = time.perf_counter() - start
            break
        time.sleep(0.2)
    result: dict[str, float | str] = {"clone_s": cloned}
    if ready is None:
        result["error"] = f"no login page (make run exited {process.poll()}); see {log.name}"
    else:
        result["login_page_s"] = ready
    stop = time.perf_counter()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        result["error"] = "make run still running 30 s after SIGTERM"
    result["stop_s"] = time.perf_counter() - stop
    time.sleep(0.5)
    result["left_running"] = "yes" if group_alive(process.pid) else "no"
    if group_alive(process.pid):
        os.killpg(process.pid, signal.SIGKILL)
    log.close()
    if not keep and "error" not in result:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the clones")
    args = parser.parse_args()
    times = []
    for n in range(1, args.runs + 1):
        result = one_run(args.keep)
        print(
            f"run {n}: "
            + ", ".join(
                f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()
            )
        )
        if "error" in result:
            return 1
        times.append(float(result["login_page_s"]))
    print(
        f"git clone to login page: median {statistics.median(times):.1f} s "
        f"(min {min(times):.1f}, max {max(times):.1f}, {len(times)} runs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
