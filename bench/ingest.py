"""Posting results through the real HTTP stack (gunicorn, PostgreSQL): results per second,
server time and SQL queries per batch, against bare psycopg executemany of the same rows.

Targets: 1,000 results stored in 300 ms or less, a constant number of queries per batch, and
at least a third of the bare-insert rate. Run with `make bench` or
`.venv/bin/python bench/ingest.py` (PostgreSQL from DATABASE_URL; a throwaway database).
"""

import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from _setup import admin_connection, fresh_database

ROOT = Path(__file__).resolve().parents[1]
BASE_URL = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/workbench")
BENCH_DB = "workbench_bench_ingest"
PORT = 8765
SIZES = [100, 1000, 5000]
REPEAT = 5
CANDIDATES, ACTIONS = 10, 500  # 5,000 distinct cells


def bench_url() -> str:
    return BASE_URL.rsplit("/", 1)[0] + "/" + BENCH_DB


def prepare() -> str:
    os.environ["DATABASE_URL"] = fresh_database(BASE_URL, BENCH_DB)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    from evaluations import services
    from evaluations.models import AcceptanceAction, Candidate, Project, Requirement, Solution

    call_command("migrate", verbosity=0)
    call_command("seed_catalog", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
    project = Project.objects.create(name="Ingest bench", slug="bench")
    solutions = list(Solution.objects.all())
    Candidate.objects.bulk_create(
        Candidate(
            project=project,
            solution=solutions[i % len(solutions)],
            slug=f"c{i}",
            reason="bench",
            position=i,
        )
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
            question="?",
            pass_criterion="ok",
            scenario="real_task",
            position=i,
        )
        for i in range(ACTIONS)
    )
    _token, raw = services.api_token_create(
        project=project, name="bench", scopes=["results:write"], actor=None
    )
    return raw


def rows(n: int, salt: int) -> list[dict[str, str]]:
    out = []
    for i in range(n):
        outcome = ("passed", "failed")[(i + salt) % 2]
        out.append(
            {
                "candidate": f"c{i % CANDIDATES}",
                "action": f"a{(i // CANDIDATES) % ACTIONS}",
                "outcome": outcome,
                **({"failure_cause": "timeout in step 3"} if outcome == "failed" else {}),
            }
        )
    return out


def post(token: str, body: bytes) -> tuple[float, float, int, int]:
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    start = time.perf_counter()
    conn.request(
        "POST",
        "/api/v1/projects/bench/results/",
        body,
        {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    response = conn.getresponse()
    response.read()
    wall = time.perf_counter() - start
    server = float(response.getheader("Server-Timing", "app;dur=0").split("dur=")[1]) / 1000
    queries = int(response.getheader("X-Query-Count", "0"))
    conn.close()
    return wall, server, queries, response.status


def bare_insert(n: int) -> float:
    """The same rows inserted by psycopg executemany in one transaction (no validation)."""
    import psycopg

    parsed = urlparse(bench_url())
    with psycopg.connect(
        host=parsed.hostname,
        port=parsed.port or 5432,
        user=parsed.username or "postgres",
        password=parsed.password or None,
        dbname=BENCH_DB,
    ) as conn:
        project_id = conn.execute(
            "SELECT id FROM evaluations_project WHERE slug='bench'"
        ).fetchone()[0]
        cands = dict(conn.execute("SELECT slug, id FROM evaluations_candidate").fetchall())
        acts = dict(conn.execute("SELECT key, id FROM evaluations_acceptanceaction").fetchall())
        params = [
            (
                project_id,
                cands[r["candidate"]],
                acts[r["action"]],
                r["outcome"],
                r.get("failure_cause", ""),
            )
            for r in rows(n, 0)
        ]
        start = time.perf_counter()
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO poc_result (project_id, candidate_id, action_id, outcome, "
                "failure_cause, integration_what, integration_owner_team, note, change_reason, "
                "source, run_reference, recorded_at) VALUES (%s, %s, %s, %s, %s, '', '', '', '', "
                "'ci', 'bare', now())",
                params,
            )
        conn.commit()
        return time.perf_counter() - start


def main() -> None:
    token = prepare()
    env = {
        **os.environ,
        "DATABASE_URL": bench_url(),
        "WORKBENCH_QUERY_STATS": "true",
        "API_THROTTLE_RATE": "100000/minute",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "workbench.wsgi",
            "--bind",
            f"127.0.0.1:{PORT}",
            "--workers",
            "2",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        for _ in range(100):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=2)
                conn.request("GET", "/healthz/")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        print(
            f"{'batch':>6}{'results/s':>12}{'server ms':>11}{'wall ms':>9}{'queries':>9}"
            f"{'bare ms':>9}{'bare/s':>10}{'ratio':>7}"
        )
        per_size: dict[int, set[int]] = {}
        at_1000 = 0.0
        salt = 0
        for size in SIZES:
            walls, servers = [], []
            for _ in range(REPEAT):
                salt += 1
                body = json.dumps(
                    {"run": {"external_id": f"bench-{size}-{salt}"}, "results": rows(size, salt)}
                ).encode()
                wall, server_time, queries, status = post(token, body)
                assert status == 201, status
                walls.append(wall)
                servers.append(server_time)
                per_size.setdefault(size, set()).add(queries)
            bare = statistics.median(bare_insert(size) for _ in range(REPEAT))
            server_ms = statistics.median(servers) * 1000
            rate = size / statistics.median(servers)
            bare_rate = size / bare
            if size == 1000:
                at_1000 = server_ms
            counts = "/".join(str(q) for q in sorted(per_size[size]))
            print(
                f"{size:>6}{rate:>12,.0f}{server_ms:>11.1f}{statistics.median(walls) * 1000:>9.1f}"
                f"{counts:>9}{bare * 1000:>9.1f}{bare_rate:>10,.0f}{rate / bare_rate:>7.2f}"
            )
        print()
        print(
            f"1,000 results stored in {at_1000:.1f} ms (target <= 300 ms): "
            f"{'OK' if at_1000 <= 300 else 'OVER'}"
        )
        # A token's first request in a minute records its last use: one query more, whatever
        # the batch size. The size must not change the count.
        constant = len({min(q) for q in per_size.values()}) == 1
        print(
            f"queries per batch by size: { {k: sorted(v) for k, v in per_size.items()} } "
            f"({'constant' if constant else 'GROWS'} with size)"
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
        from django.db import connections

        connections.close_all()
        with admin_connection(BASE_URL) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}"')


if __name__ == "__main__":
    main()
