"""Start a real Celery worker process for tests whose behaviour depends on one."""

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def celery_worker(env: dict[str, str], queues: str = "default") -> Iterator[subprocess.Popen]:
    full_env = {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "workbench.settings"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "workbench",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            f"--queues={queues}",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until(condition: Callable[[], bool], *, seconds: float = 40, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {seconds}s waiting for {what or condition}")


def worker_database_url() -> str:
    """The test database as a URL, for a worker process started by a test."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    return (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )
