"""A procurement sheet in a real Chromium: generate, watch it render without reloading, sign."""

import pytest
import redis
from django.conf import settings as django_settings
from playwright.sync_api import expect

from reports import services
from reports.models import Sheet, SheetStatus, SignOff

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def reports_queue():
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    client.delete("reports")
    yield client
    client.delete("reports")


def test_generate_follow_rendering_and_sign(
    logged_in_page, live_server, settings, tmp_path, reports_queue
) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/sheets/")
    page.select_option("#id_language", "en")
    page.get_by_role("button", name="Freeze and render").click()
    page.wait_for_url(f"{live_server.url}/projects/alpha/sheets/1/")
    status = page.locator("#sheet-status")
    expect(status).to_contain_text("Rendering the PDF in the background")
    assert reports_queue.llen("reports") == 1  # the job waits on the real queue
    page.evaluate("window.__same_document = true")

    # The worker's part, done here: the page notices by itself and stops polling.
    sheet = Sheet.objects.get()
    services.sheet_render(sheet_id=sheet.pk)
    expect(status).to_contain_text("Download the draft PDF", timeout=15_000)
    assert page.evaluate("window.__same_document === true")

    form = page.locator("form.signoff-form")
    form.get_by_label("Reject").check()
    form.get_by_label("Comment").fill("Exit plan is missing.")
    form.get_by_role("button", name="Record my decision").click()
    expect(page.locator("#sheet-status")).to_contain_text("Exit plan is missing.")
    expect(page.locator("form.signoff-form")).to_have_count(0)
    signoff = SignOff.objects.get()
    assert (signoff.role, signoff.decision, signoff.user.username) == ("ops", "reject", "bob")
    assert Sheet.objects.get().status == SheetStatus.READY
