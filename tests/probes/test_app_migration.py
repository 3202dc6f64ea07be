"""GPU evidence became its own app and the idempotency records moved beside the API tokens:
the tables are taken over and renamed (no row copied), both ways, on PostgreSQL (here) and on
SQLite (the embedded default, in a child process with its own database file)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.probes.migration_rig import exercise

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db(transaction=True)
def test_the_move_keeps_every_row_both_ways_on_postgresql() -> None:
    assert settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    exercise()


def test_the_move_keeps_every_row_both_ways_on_sqlite(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "workbench.settings",
    }
    script = (
        "import django; django.setup()\n"
        "from django.db import connection\n"
        "assert connection.vendor == 'sqlite', connection.vendor\n"
        "from tests.probes.migration_rig import exercise\n"
        "exercise()\n"
        "print('moved both ways')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "moved both ways" in done.stdout
