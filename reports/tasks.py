from celery import Task, shared_task

from reports.notices import notices_scan_outdated, notices_send
from reports.services import sheet_render, sheet_seal, sheets_recover_stuck


@shared_task(bind=True, acks_late=True, max_retries=3)
def sheet_render_task(self: Task, sheet_id: int) -> None:
    sheet_render(sheet_id=sheet_id)


@shared_task(bind=True, acks_late=True, max_retries=3, default_retry_delay=30)
def sheet_seal_task(self: Task, sheet_id: int) -> None:
    sheet_seal(sheet_id=sheet_id)


@shared_task(ignore_result=True)
def notices_task() -> None:
    """Find open revisions that became outdated, then send what is pending (beat, each minute,
    and after each event)."""
    notices_scan_outdated()
    notices_send()


@shared_task(ignore_result=True)
def sheets_recover_task() -> None:
    """Take up sheet work lost with its message or worker (beat, every five minutes)."""
    sheets_recover_stuck()
