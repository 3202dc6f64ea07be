"""Shared set-up for benchmarks: Django on a throwaway PostgreSQL database."""

import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/workbench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")


def django_on_throwaway_database() -> Callable[[], None]:
    """Set Django up on a fresh test database; returns the function that drops it."""
    import django
    from django.db import connection

    # No setup_test_environment(): its template instrumentation would be measured too.
    django.setup()
    if connection.vendor != "postgresql":
        raise SystemExit("benchmarks run on PostgreSQL: set DATABASE_URL=postgres://...")
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)

    def teardown() -> None:
        connection.creation.destroy_test_db(old_name, verbosity=0)

    return teardown


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def bulk_actions(
    project: object,
    count: int,
    *,
    feature: str,
    question: str,
    dimensions: Sequence[str] = ("scheduling",),
) -> list:
    """`count` acceptance actions under requirements of ten each, written in two bulk inserts.
    `feature` and `question` are format strings given the requirement or action number."""
    from evaluations.models import AcceptanceAction, Requirement

    reqs = Requirement.objects.bulk_create(
        Requirement(
            project=project,
            feature=feature.format(r),
            dimension=dimensions[r % len(dimensions)],
            owner_team="platform",
            position=r,
        )
        for r in range(count // 10)
    )
    return AcceptanceAction.objects.bulk_create(
        AcceptanceAction(
            project=project,
            requirement=reqs[a // 10],
            key=f"action-{a}",
            question=question.format(a),
            pass_criterion="ok",
            scenario="real_task",
            position=a,
        )
        for a in range(count)
    )


def admin_connection(database_url: str):  # type: ignore[no-untyped-def]
    """An autocommit connection to the server's `postgres` database (to make and drop others)."""
    from urllib.parse import urlparse

    import psycopg

    parsed = urlparse(database_url)
    return psycopg.connect(
        host=parsed.hostname or "127.0.0.1",
        port=parsed.port or 5432,
        user=parsed.username or "postgres",
        password=parsed.password or None,
        dbname="postgres",
        autocommit=True,
    )


def fresh_database(database_url: str, name: str) -> str:
    """Drop and make database `name` on the server of `database_url`; its URL."""
    with admin_connection(database_url) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return database_url.rsplit("/", 1)[0] + "/" + name
