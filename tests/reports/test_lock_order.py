"""Writers take the project's locks in an order that cannot close a cycle: a CI post committing
while a new revision is being generated both finish. (A results import holds the project's
history head until it commits, and its deferred foreign-key checks then want a key-share lock on
the project row; a revision locked that row for update and waited for the history head, so
PostgreSQL broke the cycle by failing one of them.) PostgreSQL only: the cycle is its locks."""

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from poc.models import ResultCell
from poc.services.ingest import RunData, results_ingest, validate_rows
from reports import services
from reports.models import Sheet

pytestmark = pytest.mark.django_db(transaction=True)


def _someone_waits_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        # pg_locks, not pg_stat_activity: the latter is read once per transaction.
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return bool(cursor.fetchone()[0])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's row locks")
def test_a_ci_post_committing_while_a_revision_is_generated(evaluation: dict[str, Any]) -> None:
    alpha = evaluation["alpha"]
    key = evaluation["actions"][1].key  # failed until this post
    errors: list[BaseException] = []

    def generate() -> None:
        try:
            services.sheet_generate(
                acknowledgement="known gaps", project=alpha, language="en", actor=None
            )
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)
        finally:
            connection.close()

    revision = threading.Thread(target=generate)
    with transaction.atomic():  # the import, committed only once the revision waits on it
        rows = validate_rows(alpha, [{"candidate": "volcano", "action": key, "outcome": "passed"}])
        results_ingest(project=alpha, run=RunData("ci-1"), rows=rows, token=None, user=None)
        revision.start()
        waited = time.monotonic() + 20
        while not _someone_waits_for_a_lock() and time.monotonic() < waited:
            time.sleep(0.05)
        assert _someone_waits_for_a_lock(), "the revision never waited for the import"
    revision.join(60)
    assert not revision.is_alive() and errors == []
    assert ResultCell.objects.get(candidate=evaluation["volcano"], action__key=key).outcome == (
        "passed"
    )
    assert Sheet.objects.filter(project=alpha).count() == 1
