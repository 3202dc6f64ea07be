"""Sheets never get stuck: a failed seal, a lost worker, an unreachable queue and a sign-off
page too long for one page all end in a sealed sheet or in a message with a way to retry."""

import subprocess
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from reports import services, signing
from reports.models import Sheet, SheetStatus
from reports.verify import verify_pdf
from tests.reports.helpers import approve_all, rendered

pytestmark = pytest.mark.django_db


@pytest.fixture
def reports_queue() -> Any:
    """The real reports queue in Redis (a list named after the queue), emptied before and
    after."""
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    client.delete("reports")
    yield lambda: client.llen("reports")
    client.delete("reports")


def test_the_last_approval_queues_the_seal_and_closes_sign_off(
    evaluation, reports_queue, django_capture_on_commit_callbacks
) -> None:
    sheet = rendered(evaluation)
    with django_capture_on_commit_callbacks(execute=True):
        approve_all(evaluation, sheet)
    sheet.refresh_from_db()
    assert sheet.status == SheetStatus.SEALING
    assert reports_queue() == 1  # one seal job, on the reports queue
    with pytest.raises(ValidationError, match="not open for sign-off"):
        services.signoff_record(
            sheet=sheet,
            user=evaluation["bob"],
            role="ops",
            decision="reject",
            sheet_sha256=sheet.sha256,
        )


def test_a_failed_seal_is_shown_and_can_be_retried(
    evaluation, login, monkeypatch, reports_queue, django_capture_on_commit_callbacks
) -> None:
    sheet = rendered(evaluation)
    approve_all(evaluation, sheet)

    def unavailable(*args: object, **kwargs: object) -> bytes:
        raise signing.SigningUnavailable("the signing certificate expired")

    monkeypatch.setattr(signing, "sign_pdf", unavailable)
    failed = services.sheet_seal(sheet_id=sheet.pk)
    assert failed.status == SheetStatus.SEALING and not failed.sealed_pdf
    assert "certificate expired" in failed.seal_error

    # A second delivery takes it up again; while it works, the old failure is not shown.
    def still_unavailable(*args: object, **kwargs: object) -> bytes:
        assert Sheet.objects.get(pk=sheet.pk).seal_error == ""
        raise signing.SigningUnavailable("the signing certificate expired, still")

    monkeypatch.setattr(signing, "sign_pdf", still_unavailable)
    again = services.sheet_seal(sheet_id=sheet.pk)
    assert again.seal_error == "SigningUnavailable: the signing certificate expired, still"

    url = reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1})
    page = login(evaluation["bob"]).get(url).content.decode()
    assert "certificate expired" in page and "Try sealing again" in page
    assert "hx-trigger" not in page  # nothing to wait for: no polling
    assert "Try sealing again" not in login(evaluation["dave"]).get(url).content.decode()

    monkeypatch.undo()
    retry = reverse("reports:sheet_retry", kwargs={"slug": "alpha", "revision": 1})
    assert login(evaluation["dave"]).post(retry).status_code == 403  # observers cannot
    with django_capture_on_commit_callbacks(execute=True):
        assert login(evaluation["bob"]).post(retry).status_code == 302
    assert reports_queue() == 1
    sealed = services.sheet_seal(sheet_id=sheet.pk)
    assert sealed.status == SheetStatus.SEALED and sealed.seal_error == ""
    assert verify_pdf(sealed.sealed_pdf.read()).valid


def test_work_lost_with_its_worker_is_taken_up_again(evaluation, login) -> None:
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    # A worker took it up a moment ago: a second delivery of the same job leaves it alone.
    Sheet.objects.filter(pk=sheet.pk).update(
        status=SheetStatus.RENDERING, work_started_at=timezone.now()
    )
    assert services.sheet_render(sheet_id=sheet.pk).status == SheetStatus.RENDERING
    url = reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1})
    assert "hx-trigger" in login(evaluation["bob"]).get(url).content.decode()

    # That worker died long ago: the page says so, and the redelivered job renders it.
    Sheet.objects.filter(pk=sheet.pk).update(work_started_at=timezone.now() - timedelta(minutes=30))
    page = login(evaluation["bob"]).get(url).content.decode()
    assert "may have stopped" in page and "Try again" in page and "hx-trigger" not in page
    assert services.sheet_render(sheet_id=sheet.pk).status == SheetStatus.READY


def test_an_unreachable_queue_leaves_the_work_waiting_until_the_beat_sends_it(
    evaluation, login, monkeypatch, reports_queue, django_capture_on_commit_callbacks
) -> None:
    """The broker refuses: the revision is saved, its render waits in the row (marked unsent,
    said on the page, not "stuck"), and the beat's resend queues it once the broker answers.
    The same for a seal asked for while the broker is down."""

    def refused(task: str, *args: object) -> None:
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    client = login(evaluation["bob"])
    monkeypatch.setattr(services, "send", refused)  # renders and seals; notices go on
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("reports:sheets", kwargs={"slug": "alpha"}),
            {"language": "en", "acknowledgement": "known gaps"},
        )
    assert response.status_code == 302  # the sheet is saved; no error page
    sheet = Sheet.objects.get()
    assert (sheet.status, sheet.unsent) == (SheetStatus.PENDING, True)
    Sheet.objects.filter(pk=sheet.pk).update(queued_at=timezone.now() - timedelta(hours=2))
    page = client.get(reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1}))
    assert "sent as soon as the queue answers" in page.content.decode()
    assert "may have stopped" not in page.content.decode()
    assert services.sheets_recover_stuck() == 0  # waiting for the broker is not lost work
    assert services.sheets_resend() == [] and reports_queue() == 0  # still refused

    monkeypatch.undo()
    assert services.sheets_resend() == [sheet.pk]
    sheet.refresh_from_db()
    assert (sheet.status, sheet.unsent) == (SheetStatus.PENDING, False) and reports_queue() == 1
    assert services.sheets_resend() == []  # sent once

    rendered_sheet = services.sheet_render(sheet_id=sheet.pk)
    assert rendered_sheet is not None and rendered_sheet.status == SheetStatus.READY
    monkeypatch.setattr(services, "send", refused)
    with django_capture_on_commit_callbacks(execute=True):
        approve_all(evaluation, rendered_sheet)
    sheet.refresh_from_db()
    assert (sheet.status, sheet.unsent, sheet.seal_error) == (SheetStatus.SEALING, True, "")
    monkeypatch.undo()
    assert services.sheets_resend() == [sheet.pk]
    sheet.refresh_from_db()
    assert not sheet.unsent


def test_a_failed_render_can_be_retried(
    evaluation, login, reports_queue, django_capture_on_commit_callbacks
) -> None:
    sheet = rendered(evaluation)
    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.FAILED, error="no fonts")
    with django_capture_on_commit_callbacks(execute=True):
        login(evaluation["bob"]).post(
            reverse("reports:sheet_retry", kwargs={"slug": "alpha", "revision": sheet.revision})
        )
    sheet.refresh_from_db()
    assert sheet.status == SheetStatus.PENDING and reports_queue() == 1


def test_a_sign_off_page_longer_than_one_page_renders_the_sheet_again(evaluation, tmp_path) -> None:
    sheet = rendered(evaluation)
    draft_pages = sheet.page_count
    approve_all(evaluation, sheet, comment="Reviewed against the exit plan. " * 60)
    sealed = services.sheet_seal(sheet_id=sheet.pk)
    assert sealed.status == SheetStatus.SEALED, sealed.seal_error
    path = tmp_path / "sealed.pdf"
    path.write_bytes(sealed.sealed_pdf.read())
    pages = subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout.split("\f")[:-1]
    assert len(pages) > draft_pages
    total = len(pages)
    for number, page in enumerate(pages, start=1):  # every footer counts the new total
        assert f"{number} / {total}" in page
    assert verify_pdf(path.read_bytes()).valid


def test_a_failed_save_is_recorded_and_leaves_no_orphan_pdf(
    evaluation, monkeypatch, settings
) -> None:
    import io
    from pathlib import Path

    from pypdf import PdfWriter

    from reports import rendering

    blank = PdfWriter()
    blank.add_blank_page(width=595, height=842)
    laid_out = io.BytesIO()
    blank.write(laid_out)
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    # The database refuses the row (a page count below zero breaks its check constraint).
    monkeypatch.setattr(
        rendering,
        "html_to_pdf",
        lambda html, **options: rendering.Rendered(pdf=laid_out.getvalue(), pages=-1),
    )
    failed = services.sheet_render(sheet_id=sheet.pk)
    assert failed.status == SheetStatus.FAILED and "IntegrityError" in failed.error
    drafts = Path(settings.MEDIA_ROOT) / "sheets" / "drafts"
    assert not drafts.exists() or not any(drafts.iterdir())
    assert not failed.pdf


@pytest.mark.parametrize("meanwhile", ["taken over", "finished by another"])
def test_a_worker_whose_work_was_taken_over_writes_nothing(
    meanwhile, evaluation, monkeypatch, settings
) -> None:
    from pathlib import Path

    from reports import rendering

    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    real = rendering.html_to_pdf
    if meanwhile == "taken over":  # declared lost and taken by another worker, still rendering
        after = {"status": SheetStatus.RENDERING, "work_started_at": timezone.now()}
    else:  # retried and rendered by another worker
        after = {"status": SheetStatus.READY, "work_started_at": None, "pdf": "sheets/other.pdf"}

    def slow(html: str, **options: str | None) -> rendering.Rendered:
        result = real(html, **options)
        Sheet.objects.filter(pk=sheet.pk).update(**after)
        return result

    monkeypatch.setattr(rendering, "html_to_pdf", slow)
    late = services.sheet_render(sheet_id=sheet.pk)
    assert late.status == after["status"]
    assert late.pdf.name == after.get("pdf", "")
    drafts = Path(settings.MEDIA_ROOT) / "sheets" / "drafts"
    assert not drafts.exists() or not any(drafts.iterdir())  # its own PDF was never stored


def test_a_second_delivery_of_a_seal_being_made_does_nothing(evaluation, login) -> None:
    sheet = rendered(evaluation)
    approve_all(evaluation, sheet)
    Sheet.objects.filter(pk=sheet.pk).update(work_started_at=timezone.now())  # taken
    again = services.sheet_seal(sheet_id=sheet.pk)
    assert again.status == SheetStatus.SEALING and not again.sealed_pdf

    # Queued half an hour ago and never taken: the message was lost, the page offers a retry.
    Sheet.objects.filter(pk=sheet.pk).update(
        work_started_at=None, queued_at=timezone.now() - timedelta(minutes=30)
    )
    page = login(evaluation["bob"]).get(reverse("reports:sheet", args=["alpha", 1]))
    assert "Try sealing again" in page.content.decode()
    assert services.sheet_retry(sheet=sheet, actor=evaluation["bob"]) == "seal"
    assert services.sheet_seal(sheet_id=sheet.pk).status == SheetStatus.SEALED


def test_the_upgrade_turns_old_queue_stamps_into_queued_at(evaluation) -> None:
    """Before queued_at existed, work_started_at was stamped when work was queued."""
    import importlib

    from django.apps import apps

    upgrade = importlib.import_module("reports.migrations.0003_sheet_queued_at")
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    stamped = timezone.now() - timedelta(minutes=1)
    Sheet.objects.filter(pk=sheet.pk).update(queued_at=None, work_started_at=stamped)
    upgrade.waiting_work_is_queued_not_taken(apps, None)
    sheet.refresh_from_db()
    assert (sheet.queued_at, sheet.work_started_at) == (stamped, None)
    assert services.sheet_render(sheet_id=sheet.pk).status == SheetStatus.READY  # taken up


def test_the_beat_task_takes_up_lost_work_a_few_times(
    evaluation, reports_queue, django_capture_on_commit_callbacks
) -> None:
    from reports.tasks import sheets_recover_task

    long_ago = timezone.now() - timedelta(minutes=11)
    lost = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    fresh = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    failed_seal = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    Sheet.objects.filter(pk=lost.pk).update(queued_at=long_ago)  # its message was lost
    Sheet.objects.filter(pk=failed_seal.pk).update(
        status=SheetStatus.SEALING, seal_error="certificate expired", queued_at=long_ago
    )
    for attempt in range(1, services.MAX_RECOVERIES + 1):
        with django_capture_on_commit_callbacks(execute=True):
            sheets_recover_task()
        taken = Sheet.objects.get(pk=lost.pk)
        assert (taken.status, taken.recoveries) == (SheetStatus.PENDING, attempt)
        assert taken.queued_at > long_ago and reports_queue() == attempt  # queued again
        Sheet.objects.filter(pk=lost.pk).update(queued_at=long_ago)  # ...and lost again
    with django_capture_on_commit_callbacks(execute=True):
        sheets_recover_task()
    assert Sheet.objects.get(pk=lost.pk).recoveries == services.MAX_RECOVERIES  # a person now
    assert reports_queue() == services.MAX_RECOVERIES
    assert Sheet.objects.get(pk=fresh.pk).recoveries == 0
    left = Sheet.objects.get(pk=failed_seal.pk)
    assert (left.recoveries, left.seal_error) == (0, "certificate expired")
