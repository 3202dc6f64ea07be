"""Many writers recording the first result of an empty cell at once: every writer succeeds,
the cell counts every result, and each result but the first points at the one before."""

import threading
from typing import Any

import pytest
from django.db import connection

from poc import services
from poc.models import (
    Result,
    ResultCell,
)
from poc.services.ingest import RunData, results_ingest, validate_rows

pytestmark = pytest.mark.django_db(transaction=True)
WRITERS = 10


def _together(work: Any) -> list[BaseException]:
    start = threading.Barrier(WRITERS)
    errors: list[BaseException] = []

    def one(number: int) -> None:
        try:
            start.wait()
            work(number)
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def _chain_is_whole(cell: ResultCell) -> None:
    results = list(Result.objects.filter(candidate=cell.candidate, action=cell.action))
    assert len(results) == WRITERS == cell.result_count
    firsts = [r for r in results if r.previous_id is None]
    assert len(firsts) == 1
    assert len({r.previous_id for r in results if r.previous_id}) == WRITERS - 1


def test_ten_people_recording_the_first_result_at_once(suite) -> None:
    action = suite["actions"][0]

    def record(number: int) -> None:
        services.result_record(
            candidate=suite["volcano"],
            action=action,
            outcome="passed",
            actor=suite["alice"],
            note=f"writer {number}",
        )

    assert _together(record) == []
    _chain_is_whole(ResultCell.objects.get(candidate=suite["volcano"], action=action))


def test_ten_ci_runs_posting_the_first_result_at_once(suite) -> None:
    action = suite["actions"][1]

    def post(number: int) -> None:
        rows = validate_rows(
            suite["alpha"],
            [{"candidate": "volcano", "action": action.key, "outcome": "passed"}],
            default_candidate="",
        )
        results_ingest(
            project=suite["alpha"],
            run=RunData(external_id=f"run-{number}"),
            rows=rows,
            token=None,
            user=None,
        )

    assert _together(post) == []
    _chain_is_whole(ResultCell.objects.get(candidate=suite["volcano"], action=action))
