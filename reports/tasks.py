import random

from celery import Task, shared_task
from django.conf import settings

from reports.demo import demo_sheets_advance
from reports.services import (
    TransientSheetError,
    project_phases_refresh,
    sheet_render,
    sheet_seal,
    sheets_recover_stuck,
    sheets_resend,
)
from reports.services.notices import notices_scan_outdated, notices_scan_review, notices_send

# Passing failures (database connection, storage) are tried again this many times, after
# SHEET_RETRY_SECONDS, then twice that, and so on (capped at 5 minutes, with jitter); the
# final try records the failure on the sheet like any other.
SHEET_TRIES = 5


def _backoff(retries: int) -> float:
    delay: float = min(settings.SHEET_RETRY_SECONDS * 2**retries, 300)
    return delay * random.uniform(0.8, 1.2)  # noqa: S311 - spreading retries, not secrets


@shared_task(bind=True, acks_late=True, max_retries=SHEET_TRIES)
def sheet_render_task(self: Task, sheet_id: int) -> None:
    try:
        sheet_render(sheet_id=sheet_id, final_try=self.request.retries >= SHEET_TRIES)
    except TransientSheetError as exc:
        raise self.retry(exc=exc, countdown=_backoff(self.request.retries)) from exc


@shared_task(bind=True, acks_late=True, max_retries=SHEET_TRIES)
def sheet_seal_task(self: Task, sheet_id: int) -> None:
    try:
        sheet_seal(sheet_id=sheet_id, final_try=self.request.retries >= SHEET_TRIES)
    except TransientSheetError as exc:
        raise self.retry(exc=exc, countdown=_backoff(self.request.retries)) from exc


@shared_task(ignore_result=True)
def notices_task() -> None:
    """Find open revisions that became outdated, then send what is pending (beat, each minute,
    and after each event)."""
    notices_scan_outdated()
    notices_send()


@shared_task(ignore_result=True)
def decisions_review_task() -> None:
    """Tell the signers of sealed decisions that came due for review (beat, hourly)."""
    if notices_scan_review():
        notices_send()


@shared_task(ignore_result=True)
def sheets_recover_task() -> None:
    """Take up sheet work lost with its message or worker (beat, every five minutes)."""
    sheets_recover_stuck()


@shared_task(ignore_result=True)
def sheets_resend_task() -> None:
    """Send the renders and seals that waited while the broker was down (beat, each minute)."""
    sheets_resend()


@shared_task(ignore_result=True)
def project_phases_task() -> None:
    """Move each project's phase on with its state (beat, each minute; only projects whose
    history moved are judged)."""
    project_phases_refresh()


# The demo's sheet story waits for each rendering this long between tries, at most this many
# times (ten minutes in all).
DEMO_WAIT_SECONDS = 5
DEMO_TRIES = 120


@shared_task(bind=True, acks_late=True, max_retries=DEMO_TRIES)
def demo_sheets_task(self: Task, project_id: int) -> None:
    """Carry the demo project's sheets on once their PDFs are rendered (development only)."""
    if not demo_sheets_advance(project_id):
        raise self.retry(countdown=DEMO_WAIT_SECONDS)
