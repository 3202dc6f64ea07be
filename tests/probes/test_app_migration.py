"""GPU evidence became its own app and the idempotency records moved beside the API tokens:
the tables are taken over and renamed (no row copied), both ways, on PostgreSQL (here) and on
SQLite (the embedded default, in a child process with its own database file)."""

from pathlib import Path

import pytest
from django.conf import settings

from tests.migration_child import run_on_sqlite
from tests.probes.migration_rig import exercise


@pytest.mark.django_db(transaction=True)
def test_the_move_keeps_every_row_both_ways_on_postgresql() -> None:
    assert settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    exercise()


def test_the_move_keeps_every_row_both_ways_on_sqlite(tmp_path: Path) -> None:
    run_on_sqlite(tmp_path, "tests.probes.migration_rig")
