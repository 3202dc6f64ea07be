"""A PostgreSQL server of a test's own (initdb in a temporary folder, its own port), for tests
that stop and start the database under a running web server. The shared test database is never
touched. Run as root, the server runs as the `postgres` user (PostgreSQL refuses root)."""

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from tests.sshd import free_port


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    path = found[-1] if found else shutil.which(name)
    if path is None:
        raise AssertionError(f"{name} is needed (the README's system packages install PostgreSQL)")
    return path


class PostgresServer:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="wb-pg-"))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.sockets = self.root / "run"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._as_postgres = os.geteuid() == 0

    def _command(self, *words: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *words] if self._as_postgres else list(words)

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def init(self) -> None:
        self.data.mkdir()
        self.sockets.mkdir()
        if self._as_postgres:
            shutil.chown(self.data, "postgres", "postgres")
            shutil.chown(self.sockets, "postgres", "postgres")
        subprocess.run(
            self._command(
                _bin("initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ),
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        self.process = subprocess.Popen(
            self._command(
                _bin("postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-k",
                str(self.sockets),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=50",
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("the test's PostgreSQL did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        """A fast shutdown, as a restart by an operator does: sessions are ended at once and
        their open transactions rolled back."""
        if self.process is None:
            return
        pid_file = self.data / "postmaster.pid"
        if pid_file.exists():  # the server itself, not runuser in front of it
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGINT)
        else:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
