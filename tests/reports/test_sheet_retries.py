"""Sheet work that meets a passing failure retries with backoff; a lasting one is recorded.

The failure is real: the storage folder the draft is written to is blocked by a plain file, so
writing it fails with an OSError, exactly as a full or unmounted volume would."""

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from reports import services
from reports.models import Sheet, SheetStatus
from reports.tasks import _backoff
from tests.workers import celery_worker, wait_until, worker_database_url
from workbench.celery import app as celery_app


def _block_storage(media_root: str) -> Path:
    """A plain file where the sheets folder goes: every draft write fails until removed."""
    blocker = Path(media_root) / "sheets"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a folder")
    return blocker


@pytest.mark.django_db
def test_a_passing_failure_gives_the_work_back_and_a_lasting_one_is_recorded(
    evaluation: dict[str, Any], settings: Any
) -> None:
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    blocker = _block_storage(settings.MEDIA_ROOT)
    with pytest.raises(services.TransientSheetError, match="Error"):
        services.sheet_render(sheet_id=sheet.pk, final_try=False)
    sheet.refresh_from_db()
    # Queued again for the retry: no claim, no error, no file.
    assert (sheet.status, sheet.work_started_at, sheet.error, sheet.pdf.name) == (
        SheetStatus.PENDING,
        None,
        "",
        "",
    )
    blocker.unlink()
    done = services.sheet_render(sheet_id=sheet.pk, final_try=False)
    assert done is not None and done.status == SheetStatus.READY
    # The task's final try records the failure like any other.
    second = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    Path(settings.MEDIA_ROOT, "sheets", "drafts").rename(Path(settings.MEDIA_ROOT, "moved"))
    Path(settings.MEDIA_ROOT, "sheets", "drafts").write_text("not a folder")
    failed = services.sheet_render(sheet_id=second.pk, final_try=True)
    assert failed is not None and failed.status == SheetStatus.FAILED
    assert "Error" in failed.error and failed.work_started_at is None


def test_backoff_doubles_and_is_capped(settings: Any) -> None:
    settings.SHEET_RETRY_SECONDS = 10
    waits = [_backoff(n) for n in range(8)]
    assert 8 <= waits[0] <= 12 and 16 <= waits[1] <= 24 and 32 <= waits[2] <= 48
    assert max(waits) <= 300 * 1.2


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_retries_a_render_whose_storage_failed(
    evaluation: dict[str, Any], login: Any, settings: Any
) -> None:
    celery_app.control.purge()
    env = {
        "DATABASE_URL": worker_database_url(),
        "MEDIA_ROOT": settings.MEDIA_ROOT,
        "SHEET_SIGNING_P12": settings.SHEET_SIGNING_P12,
        "SHEET_SIGNING_PASSPHRASE": settings.SHEET_SIGNING_PASSPHRASE,
        "SHEET_RETRY_SECONDS": "2",
    }
    blocker = _block_storage(settings.MEDIA_ROOT)
    with celery_worker(env, queues="reports") as worker:
        client = login(evaluation["bob"])
        client.post(
            reverse("reports:sheets", kwargs={"slug": "alpha"}),
            {"language": "en", "acknowledgement": "known gaps"},
        )
        sheet = Sheet.objects.get()
        first_queued = sheet.queued_at

        def given_back() -> bool:
            sheet.refresh_from_db()
            return sheet.queued_at != first_queued and sheet.status == SheetStatus.PENDING

        def rendered() -> bool:
            sheet.refresh_from_db()
            return sheet.status in (SheetStatus.READY, SheetStatus.FAILED)

        try:
            wait_until(given_back, seconds=90, what="the worker's first try to fail and retry")
            blocker.unlink()  # the volume is back
            wait_until(rendered, seconds=90, what="the retry to render the sheet")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
        assert sheet.status == SheetStatus.READY, sheet.error
        assert Path(django_settings.MEDIA_ROOT, sheet.pdf.name).read_bytes().startswith(b"%PDF")
