"""What each test process keeps to itself when the suite runs in parallel (pytest-xdist).

Loaded with `-p tests.parallel` (pyproject's addopts), before pytest-django reads the settings,
so that what it sets here is what the settings and the processes tests start (Celery workers,
web servers) read:

- the services' defaults, PostgreSQL and Redis on localhost, when the environment names none;
- a Redis database per test process: Celery workers started by tests take jobs from queues by
  name, and two such workers on one database would take each other's jobs. A run without xdist
  keeps REDIS_URL's database; worker gwN uses database N + 1.

pytest-django gives each test process a database of its own (test_workbench_gw0, ...).
"""

import os
import re

REDIS_DATABASES = 16  # Redis' default `databases`

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/workbench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")


def redis_url_for(url: str, worker: str) -> str:
    """REDIS_URL with the database of test process `worker` (gw0, gw1, ...)."""
    number = int(worker.removeprefix("gw")) + 1
    if number >= REDIS_DATABASES:
        raise RuntimeError(
            f"test process {worker} would need Redis database {number}: run fewer processes "
            f"(make test PYTEST_WORKERS={REDIS_DATABASES - 1})"
        )
    base = re.sub(r"/\d*$", "", url.split("?", 1)[0].rstrip("/"))
    query = "?" + url.split("?", 1)[1] if "?" in url else ""
    return f"{base}/{number}{query}"


_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    os.environ["REDIS_URL"] = redis_url_for(os.environ["REDIS_URL"], _worker)
    if os.environ.get("CELERY_BROKER_URL", "").startswith("redis"):
        os.environ["CELERY_BROKER_URL"] = os.environ["REDIS_URL"]
