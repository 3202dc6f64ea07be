"""A body over its route's limit answers 413 under every server the project ships: runserver
(what `make run` and `manage.py serve` start) and gunicorn (the image), never a 500."""

import http.client
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.sshd import free_port
from tests.workbench.test_production_serve import PROXY, gunicorn, production  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SIXTY_MB = 60 * 1024 * 1024
PATH = "/projects/alpha/results/1/evidence/"  # an evidence upload: limited well below 60 MB


def _post(port: int, headers: dict[str, str]) -> tuple[int, str]:
    """Send a 60 MB multipart body as a client would, whether or not the server reads it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.putrequest("POST", PATH, skip_host="Host" in headers)
    for name, value in {
        "Content-Type": "multipart/form-data; boundary=xyz",
        "Content-Length": str(SIXTY_MB),
        **headers,
    }.items():
        connection.putheader(name, value)
    connection.endheaders()
    chunk = b"x" * (1024 * 1024)
    try:
        for _ in range(SIXTY_MB // len(chunk)):
            connection.send(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed without reading the rest: allowed
    response = connection.getresponse()
    body = response.read().decode("utf-8", "replace")
    connection.close()
    return response.status, body


@contextmanager
def runserver(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "WORKBENCH_VAR_DIR": str(tmp_path / "var"),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "runserver",
            f"127.0.0.1:{port}",
            "--noreload",
            "--skip-checks",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()[0]
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                connection.request("GET", "/healthz/")
                connection.getresponse().read()
                break
            except OSError:
                assert time.monotonic() < deadline, "runserver did not start"
                time.sleep(0.3)
        yield port
    finally:
        process.terminate()
        output = process.communicate(timeout=15)[0]
        assert "Hop-by-hop" not in output, output[-3000:]


def test_runserver_answers_413_for_a_60_mb_upload(tmp_path: Path) -> None:
    with runserver(tmp_path) as port:
        status, body = _post(port, {})
    assert status == 413, body[:500]
    assert "limited to" in body


def test_gunicorn_answers_413_for_a_60_mb_upload(production) -> None:  # noqa: F811
    with gunicorn(production) as url:
        port = int(url.rsplit(":", 1)[1])
        status, body = _post(port, PROXY)
    assert status == 413, body[:500]
    assert "limited to" in body
