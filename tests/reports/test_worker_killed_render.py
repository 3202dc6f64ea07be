"""A worker killed in the middle of a render (SIGKILL: no clean-up of its own) loses nothing and
leaves nothing half done: the beat's recovery takes the revision up again, another worker
renders it, and it is finished exactly once (one draft PDF on disk, one "ready" notice per
person, nothing left "rendering"). Real worker processes on the real Redis and PostgreSQL."""

import os
import signal
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from poc import services as poc_services
from reports import services
from reports.models import Notice, Sheet, SheetStatus
from reports.selectors import STUCK_AFTER
from tests.factories import make_actions
from tests.workers import celery_worker, wait_until, worker_database_url
from workbench.celery import app as celery_app

SCENARIOS = ("resource_shortage", "real_task", "permission_overreach")


def _worker_env(settings: Any) -> dict[str, str]:
    return {
        "DATABASE_URL": worker_database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "SHEET_SIGNING_P12": settings.SHEET_SIGNING_P12,
        "SHEET_SIGNING_PASSPHRASE": settings.SHEET_SIGNING_PASSPHRASE,
    }


def _drafts(settings: Any) -> list[Path]:
    folder = Path(settings.MEDIA_ROOT) / "sheets" / "drafts"
    return sorted(folder.glob("alpha-r1*.pdf")) if folder.exists() else []


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_render_whose_worker_is_killed_is_finished_once_by_another(
    evaluation: dict[str, Any], login: Any, settings: Any
) -> None:
    celery_app.control.purge()
    # Enough rows that the render takes a few seconds: time to find it under way.
    _, actions = make_actions(
        evaluation["alpha"],
        [(f"load-{n:03d}", SCENARIOS[n % 3]) for n in range(150)],
        feature="Load",
    )
    for number, action in enumerate(actions):
        poc_services.result_record(
            candidate=evaluation["volcano"],
            action=action,
            outcome="failed" if number % 3 else "passed",
            failure_cause=f"cause {number}" if number % 3 else "",
            actor=None,
        )
    env = _worker_env(settings)
    with celery_worker(env, queues="reports") as doomed:
        login(evaluation["bob"]).post(
            reverse("reports:sheets", kwargs={"slug": "alpha"}),
            {"language": "en", "acknowledgement": "known gaps"},
        )
        sheet = Sheet.objects.get()

        def rendering() -> bool:
            sheet.refresh_from_db()
            return sheet.status == SheetStatus.RENDERING

        try:
            wait_until(rendering, seconds=60, what="the worker to take the render up")
        except AssertionError:
            doomed.terminate()
            raise AssertionError(doomed.communicate(timeout=15)[0][-3000:]) from None
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=15)
    sheet.refresh_from_db()
    # As a dead worker leaves it: claimed, not finished, nothing written.
    assert sheet.status == SheetStatus.RENDERING and sheet.work_started_at is not None
    assert not sheet.pdf and _drafts(settings) == []
    assert services.sheets_recover_stuck() == 0  # not yet: it may only be slow

    # Ten minutes on (the stuck-work limit), the beat's recovery queues it again.
    Sheet.objects.filter(pk=sheet.pk).update(
        work_started_at=sheet.work_started_at - STUCK_AFTER - timedelta(minutes=1)
    )
    assert services.sheets_recover_stuck() == 1
    sheet.refresh_from_db()
    assert (sheet.status, sheet.recoveries) == (SheetStatus.PENDING, 1)

    with celery_worker(env, queues="reports") as worker:

        def finished() -> bool:
            sheet.refresh_from_db()
            return sheet.status in (SheetStatus.READY, SheetStatus.FAILED)

        try:
            wait_until(finished, seconds=120, what="the second worker to render the sheet")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
        assert sheet.status == SheetStatus.READY, sheet.error
        assert sheet.work_started_at is None and sheet.progress == 100
        assert sheet.page_count >= 3
    # Exactly once: one draft on disk (the one the row names), one notice per role holder.
    drafts = _drafts(settings)
    assert [path.name for path in drafts] == [Path(sheet.pdf.name).name]
    assert drafts[0].read_bytes().startswith(b"%PDF-")
    awaiting = list(
        Notice.objects.filter(sheet=sheet, kind="awaiting").values_list("recipient", "role")
    )
    assert awaiting and len(awaiting) == len(set(awaiting))
    assert services.sheets_recover_stuck() == 0
    assert not Sheet.objects.filter(
        status__in=(SheetStatus.PENDING, SheetStatus.RENDERING)
    ).exists()
