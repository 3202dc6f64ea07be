"""PostgreSQL restarted under load. A PostgreSQL server of the test's own serves a real gunicorn
(production settings, two workers) while four CI clients post results as fast as they can; the
server is shut down (fast: sessions ended, open transactions rolled back) and started again in
the middle. Requests that met the outage answer 503 with Retry-After and a JSON reason, never
500; the same gunicorn serves again once the database is back (no restart); and nothing is half
written: every post is in the database once, with its run, after the 503s are retried with
their Idempotency-Keys. The in-process tests check the 503 page and what stays a 500."""

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from django.db import OperationalError
from django.test import Client

from tests.pg_rig import PostgresServer
from tests.sshd import free_port
from tests.workbench.test_production_serve import GUNICORN, PROXY, production  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
CLIENTS, POSTS_EACH = 4, 30
SETUP = """
from evaluations import services as ev
from evaluations.models import Project
from poc import services as poc
from tests.factories import CandidateFactory, make_actions

project = Project.objects.create(slug="alpha", name="Alpha")
CandidateFactory(project=project, solution_key="volcano")
make_actions(project, [("quota-hit", "resource_shortage"), ("real-job", "real_task")])
_, raw = ev.api_token_create(
    project=project, name="ci", scopes=["read", "results:write"], actor=None
)
print("TOKEN=" + raw)
"""


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def _post(url: str, token: str, number: int) -> tuple[int, dict[str, str], bytes]:
    body = {
        "run": {"external_id": f"nightly-{number}"},
        "results": [
            {
                "candidate": "volcano",
                "action": ("quota-hit", "real-job")[number % 2],
                "outcome": ("passed", "failed")[number % 2],
                **({"failure_cause": f"post {number}"} if number % 2 else {}),
            }
        ],
    }
    request = urllib.request.Request(
        url + "/api/v1/projects/alpha/results/",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            **PROXY,
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"post-{number}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@contextmanager
def gunicorn(env: dict[str, str], log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Two sync workers; their logs (a traceback per 503) go to a file, not a pipe nobody
    reads."""
    port = free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(GUNICORN), "workbench.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                urllib.request.urlopen(url + "/healthz/", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        yield url, process
    finally:
        process.terminate()
        process.wait(timeout=30)


def _workers(master: subprocess.Popen[bytes]) -> list[str]:
    return sorted(
        subprocess.run(
            ["pgrep", "-P", str(master.pid)], capture_output=True, text=True
        ).stdout.split()
    )


@pytest.fixture
def own_database():
    server = PostgresServer()
    server.init()
    server.start()
    try:
        yield server
    finally:
        server.remove()


def test_a_database_restart_under_load_answers_503_and_loses_nothing(
    own_database: PostgresServer,
    production: dict[str, str],  # noqa: F811
) -> None:
    database_url = own_database.create_database("workbench")
    env = {**production, "DATABASE_URL": database_url, "API_THROTTLE_RATE": "100000/minute"}
    _manage(env, "migrate", "--noinput")
    _manage(env, "seed_catalog")
    token = _manage({**env, "PYTHONPATH": str(ROOT)}, "shell", "-c", SETUP).split("TOKEN=")[1]
    token = token.strip()

    answers: dict[int, tuple[int, dict[str, str], bytes]] = {}
    started = threading.Event()
    log = Path(own_database.root) / "gunicorn.log"
    with gunicorn(env, log) as (url, master):
        pids_before = _workers(master)

        def client(offset: int) -> None:
            for n in range(POSTS_EACH):
                number = offset * POSTS_EACH + n
                answers[number] = _post(url, token, number)
                if len(answers) >= 40:
                    started.set()
                time.sleep(0.01)

        threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
        for thread in threads:
            thread.start()
        assert started.wait(timeout=120), "the load did not start"
        own_database.stop()
        time.sleep(1.5)  # the clients keep posting while the database is down
        own_database.start()
        for thread in threads:
            thread.join(timeout=300)
        # The same processes serve once the database is back: posts succeed without a restart.
        after = [_post(url, token, 10_000 + n) for n in range(5)]
        pids_after = _workers(master)

        statuses = Counter(status for status, _headers, _body in answers.values())
        assert set(statuses) <= {201, 503}, (statuses, log.read_text()[-3000:])  # never a 500
        assert statuses[503] >= 1, statuses  # the outage was met
        assert [status for status, _h, _b in after] == [201] * 5
        assert pids_before and pids_after == pids_before
        for status, headers, body in answers.values():
            if status == 503:
                assert headers["Retry-After"] == "5"
                assert "database cannot be reached" in json.loads(body)["detail"]

        # Clients retry what met the outage with the same key: each post is stored once.
        for number, (status, _headers, _body) in sorted(answers.items()):
            while status != 201:
                time.sleep(0.2)
                status, _headers, _body = _post(url, token, number)

    total = CLIENTS * POSTS_EACH + len(after)
    with psycopg.connect(database_url) as connection:
        runs, results, orphans = connection.execute(
            "SELECT (SELECT count(*) FROM poc_run), (SELECT count(*) FROM poc_result),"
            " (SELECT count(*) FROM poc_run r WHERE NOT EXISTS"
            "  (SELECT 1 FROM poc_result s WHERE s.run_id = r.id))"
        ).fetchone()
        first_links = connection.execute(
            "SELECT count(*) FROM poc_result WHERE previous_id IS NULL"
        ).fetchone()
        causes = connection.execute(
            "SELECT failure_cause, count(*) FROM poc_result WHERE outcome = 'failed'"
            " GROUP BY failure_cause HAVING count(*) > 1"
        ).fetchall()
    assert (runs, results, orphans) == (total, total, 0)  # no half-written post
    assert first_links == (2,)  # two cells, each one chain
    assert causes == []  # no post stored twice


def test_a_lost_database_is_a_503_page_and_json_and_other_errors_stay_500(
    monkeypatch: pytest.MonkeyPatch, db: None
) -> None:
    from workbench import views

    def unreachable(request: object) -> None:
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    def broken(request: object) -> None:
        raise ValueError("a bug")

    from evaluations.api.views import ProjectListApi

    client = Client(raise_request_exception=False)
    monkeypatch.setattr(views, "redirect", unreachable)  # what the start page calls
    page = client.get("/")
    assert page.status_code == 503 and page["Retry-After"] == "5"
    assert "database cannot be reached" in page.content.decode()
    # Where DRF first reads the database for a request (authentication, throttling).
    monkeypatch.setattr(
        ProjectListApi, "initial", lambda self, request, *a, **k: unreachable(request)
    )
    api = client.get("/api/v1/projects/")
    assert api.status_code == 503 and "database cannot be reached" in api.json()["detail"]
    monkeypatch.setattr(views, "redirect", broken)
    assert client.get("/").status_code == 500


def test_unreachable_means_a_connection_error_even_as_a_cause() -> None:
    from django.db import IntegrityError, InterfaceError

    from workbench.views import _database_unreachable

    wrapped = RuntimeError("while saving")
    wrapped.__cause__ = InterfaceError("connection already closed")
    assert _database_unreachable(OperationalError("server closed the connection"))
    assert _database_unreachable(wrapped)
    assert not _database_unreachable(IntegrityError("duplicate key"))
    assert not _database_unreachable(ValueError("a bug"))
    assert not _database_unreachable(None)


def test_a_request_the_database_gave_up_for_another_says_busy_not_unreachable(
    monkeypatch: pytest.MonkeyPatch, db: None
) -> None:
    """A deadlock PostgreSQL broke (or a lock timeout) is the database busy, not down: 503 with a
    short Retry-After and a message that says so."""
    from psycopg import errors as pg

    from evaluations.api.views import ProjectListApi
    from workbench import views

    def gave_up(request: object) -> None:
        try:
            raise pg.DeadlockDetected("deadlock detected")
        except pg.DeadlockDetected as exc:
            raise OperationalError("deadlock detected") from exc

    assert views._database_busy(OperationalError("x").with_traceback(None)) is False
    locked = OperationalError("database is locked")  # SQLite's word for it
    assert views._database_busy(locked) and views._database_unreachable(locked)
    client = Client(raise_request_exception=False)
    monkeypatch.setattr(ProjectListApi, "initial", lambda self, request, *a, **k: gave_up(request))
    api = client.get("/api/v1/projects/")
    assert api.status_code == 503 and api["Retry-After"] == "1"
    assert "busy with another change" in api.json()["detail"]
    monkeypatch.setattr(views, "redirect", gave_up)
    page = client.get("/")
    assert page.status_code == 503 and "busy with another change" in page.content.decode()
