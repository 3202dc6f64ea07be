"""Run a migration check (a function of no arguments that migrates the default database and
asserts) in a child process on SQLite, the embedded default, with a database file of its own."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_on_sqlite(tmp_path: Path, module: str, function: str = "exercise") -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "workbench.settings",
    }
    script = (
        "import django; django.setup()\n"
        "from django.db import connection\n"
        "assert connection.vendor == 'sqlite', connection.vendor\n"
        f"from {module} import {function}\n"
        f"{function}()\n"
        "print('migrated both ways')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "migrated both ways" in done.stdout
