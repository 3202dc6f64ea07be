"""Make sure the real PostgreSQL and Redis the suite needs are up, starting them if we can.

A missing service fails the run with one line that names it; nothing is skipped silently.
"""

import glob
import os
import shutil
import socket
import subprocess
import time
from urllib.parse import urlparse


class ServiceMissing(Exception):
    pass


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _wait(host: str, port: int, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _reachable(host, port):
            return True
        time.sleep(0.3)
    return False


def _is_local(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1", "")


def ensure_postgres(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme not in ("postgres", "postgresql", "pgsql"):
        return
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 5432
    if _reachable(host, port):
        return
    if _is_local(host) and shutil.which("pg_ctlcluster"):
        for conf in sorted(glob.glob("/etc/postgresql/*/*/postgresql.conf")):
            version, cluster = conf.split("/")[3:5]
            subprocess.run(["pg_ctlcluster", version, cluster, "start"], check=False)
        if _wait(host, port):
            return
    raise ServiceMissing(
        f"PostgreSQL is not reachable at {host}:{port} and could not be started here "
        "(install postgresql, or set DATABASE_URL to a running server)"
    )


def ensure_redis(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme not in ("redis", "rediss"):
        return
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 6379
    if _reachable(host, port):
        return
    server = shutil.which("redis-server")
    if _is_local(host) and server:
        subprocess.run(
            [
                server,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--daemonize",
                "yes",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            check=False,
        )
        if _wait(host, port):
            return
    raise ServiceMissing(
        f"Redis is not reachable at {host}:{port} and could not be started here "
        "(install redis-server, or set REDIS_URL to a running server)"
    )


def ensure_all() -> None:
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith(("postgres", "pgsql")):
        raise ServiceMissing(
            "The suite runs against PostgreSQL: set DATABASE_URL=postgres://... "
            "(make test sets a localhost default)"
        )
    ensure_postgres(database_url)
    redis_url = os.environ.get("REDIS_URL") or os.environ.get("CELERY_BROKER_URL", "")
    if not redis_url.startswith("redis"):
        raise ServiceMissing(
            "The suite runs against Redis: set REDIS_URL=redis://... (make test sets a default)"
        )
    ensure_redis(redis_url)
