"""The review under load: people browsing, CI pipelines posting results and revisions being
generated at the same time, through the real stack (gunicorn, a Celery worker, PostgreSQL,
Redis), on loopback only, for a bounded time.

Prints per kind of request the count, p50 and p95 latency and the answers that were not a
success, and checks that every result a pipeline was told was stored (201) is stored, and
nothing else. A post answered 503 (database busy or unreachable) is sent again with the same
Idempotency-Key after its Retry-After, as the CI client does. Run with
`.venv/bin/python bench/load.py [SECONDS]` (default 60; PostgreSQL from DATABASE_URL, Redis
from REDIS_URL; a throwaway database `workbench_bench_load`).
"""

import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path

from _setup import admin_connection, fresh_database

ROOT = Path(__file__).resolve().parents[1]
BASE_URL = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/workbench")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0").rsplit("/", 1)[0] + "/9"
BENCH_DB = "workbench_bench_load"
PORT = 8766
SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
CANDIDATES, ACTIONS = 5, 200
POSTERS, BROWSERS = 4, 20
SHEET_EVERY_S = 30
PAGES = ("/projects/load/", "/projects/load/matrix/", "/projects/load/comparison/",
         "/projects/load/sheets/", "/projects/load/costs/")  # fmt: skip


def _bench_url() -> str:
    return BASE_URL.rsplit("/", 1)[0] + "/" + BENCH_DB


def prepare() -> tuple[str, list[str]]:
    """The project, its members' sessions (cookies) and a CI token."""
    os.environ["DATABASE_URL"] = fresh_database(BASE_URL, BENCH_DB)
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from evaluations import services
    from evaluations.models import AcceptanceAction, Candidate, Project, Requirement, Solution

    call_command("migrate", verbosity=0)
    call_command("seed_catalog", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
    project = Project.objects.create(name="Load bench", slug="load")
    solutions = list(Solution.objects.all())
    Candidate.objects.bulk_create(
        Candidate(project=project, solution=solutions[i], slug=f"c{i}", reason="bench", position=i)
        for i in range(CANDIDATES)
    )
    requirement = Requirement.objects.create(
        project=project, feature="Bench", dimension="scheduling", owner_team="platform"
    )
    AcceptanceAction.objects.bulk_create(
        AcceptanceAction(
            project=project,
            requirement=requirement,
            key=f"a{i}",
            question=f"Action {i}?",
            pass_criterion="ok",
            scenario="real_task",
            position=i,
        )
        for i in range(ACTIONS)
    )
    store = import_module(settings.SESSION_ENGINE).SessionStore
    cookies = []
    roles = ("platform", "ops", "procurement", "business", "architecture")
    for number in range(BROWSERS):
        person = User.objects.create_user(f"reader{number}", password=uuid.uuid4().hex)
        services.membership_set(
            project=project, user=person, role=roles[number % len(roles)], actor=None
        )
        session = store()
        session[SESSION_KEY] = str(person.pk)
        session[BACKEND_SESSION_KEY] = "evaluations.sso.local.LocalAccountsBackend"
        session[HASH_SESSION_KEY] = person.get_session_auth_hash()
        session.create()
        cookies.append(f"{settings.SESSION_COOKIE_NAME}={session.session_key}")
    _token, raw = services.api_token_create(
        project=project, name="load", scopes=["read", "results:write"], actor=None
    )
    return raw, cookies


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.answers: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.acknowledged: dict[str, int] = {}  # run -> results a 201 said were stored

    def add(self, kind: str, seconds: float, status: int) -> None:
        with self.lock:
            self.latency[kind].append(seconds)
            self.answers[kind][status] += 1


def _request(method: str, path: str, headers: dict[str, str], body: bytes | None = None):  # type: ignore[no-untyped-def]
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    started = time.perf_counter()
    try:
        conn.request(method, path, body, headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), data, time.perf_counter() - started
    except OSError:
        return 0, {}, b"", time.perf_counter() - started
    finally:
        conn.close()


def poster(token: str, until: float, record: Recorder, seed: int) -> None:
    rng = random.Random(seed)
    number = 0
    while time.monotonic() < until:
        number += 1
        run = f"pipeline-{seed}-{number}"
        count = rng.randint(100, 200)
        cells = rng.sample([(c, a) for c in range(CANDIDATES) for a in range(ACTIONS)], count)
        rows = [
            {"candidate": f"c{c}", "action": f"a{a}", "outcome": rng.choice(("passed", "failed"))}
            for c, a in cells
        ]
        for row in rows:
            if row["outcome"] == "failed":
                row["failure_cause"] = "step 3 timed out"
        body = json.dumps({"run": {"external_id": run}, "results": rows}).encode()
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Idempotency-Key": uuid.uuid4().hex,
        }
        for _attempt in range(5):
            status, answer, _data, seconds = _request(
                "POST", "/api/v1/projects/load/results/", headers, body
            )
            record.add("CI post", seconds, status)
            if status == 201:
                with record.lock:
                    record.acknowledged[run] = count
                break
            if status not in (0, 429, 503):
                break
            time.sleep(float(answer.get("Retry-After", "1")))
        time.sleep(rng.uniform(1, 2))


def browser(cookie: str, until: float, record: Recorder, seed: int) -> None:
    rng = random.Random(seed)
    while time.monotonic() < until:
        path = rng.choice(PAGES)
        status, answer, _d, seconds = _request("GET", path, {"Cookie": cookie})
        if status == 302 and os.environ.get("BENCH_DEBUG"):
            print("redirected to", answer.get("Location"))
        record.add("page", seconds, status)
        time.sleep(rng.uniform(0.5, 2))


def generator(token: str, until: float, record: Recorder) -> None:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    body = json.dumps({"language": "en", "acknowledgement": "load test"}).encode()
    while time.monotonic() < until:
        status, _h, _d, seconds = _request("POST", "/api/v1/projects/load/sheets/", headers, body)
        record.add("sheet generated", seconds, status)
        time.sleep(SHEET_EVERY_S)


def _stored() -> dict[str, int]:
    from django.db.models import Count

    from poc.models import Result

    return {
        run: n
        for run, n in Result.objects.filter(run__isnull=False)
        .values_list("run__external_id")
        .annotate(n=Count("pk"))
        .order_by()
    }


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    token, cookies = prepare()
    env = {
        **os.environ,
        "DATABASE_URL": _bench_url(),
        "REDIS_URL": REDIS_URL,
        "API_THROTTLE_RATE": "100000/minute",
        "SHEET_RENDERS_PER_PERSON": "1000",
        "SHEET_RENDERS_PER_INSTANCE": "1000",
    }
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "workbench.wsgi", "--bind", f"127.0.0.1:{PORT}",
         "--workers", "2", "--threads", "4", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workbench", "worker", "--pool=solo",
         "--queues=default,reports,probes", "--loglevel=WARNING"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        for _ in range(100):
            if _request("GET", "/healthz/", {})[0] == 200:
                break
            time.sleep(0.2)
        record = Recorder()
        until = time.monotonic() + SECONDS
        threads = [
            *(
                threading.Thread(target=poster, args=(token, until, record, n))
                for n in range(POSTERS)
            ),
            *(
                threading.Thread(target=browser, args=(cookie, until, record, n))
                for n, cookie in enumerate(cookies)
            ),
            threading.Thread(target=generator, args=(token, until, record)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stored = _stored()
        print(
            f"load: {SECONDS} s, {POSTERS} CI pipelines (100-200 results every 1-2 s), "
            f"{BROWSERS} people browsing, a revision every {SHEET_EVERY_S} s"
        )
        for kind in ("page", "CI post", "sheet generated"):
            samples = record.latency[kind]
            if not samples:
                continue
            bad = {s: n for s, n in record.answers[kind].items() if s not in (200, 201, 202)}
            p50, p95 = statistics.median(samples), _percentile(samples, 0.95)
            print(
                f"  {kind:16} {len(samples):5} requests, p50 {p50 * 1000:6.0f} ms, p95 "
                f"{p95 * 1000:6.0f} ms, not a success: {bad or 'none'}"
            )
        acknowledged = sum(record.acknowledged.values())
        kept = sum(stored.get(run, 0) for run in record.acknowledged)
        extra = sum(n for run, n in stored.items() if run not in record.acknowledged)
        print(
            f"  results acknowledged {acknowledged}, stored {kept} of them, stored without an "
            f"acknowledgement {extra}: {'OK' if acknowledged == kept and not extra else 'LOST'}"
        )
    finally:
        for process in (web, worker):
            process.terminate()
        for process in (web, worker):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        from django.db import connections

        connections.close_all()
        with admin_connection(BASE_URL) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')


if __name__ == "__main__":
    main()
