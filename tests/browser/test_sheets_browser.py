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
    logged_in_page, live_server, settings, tmp_path, reports_queue, suite
) -> None:
    # `suite`: alpha has acceptance actions, without which no sheet is generated.
    settings.MEDIA_ROOT = str(tmp_path)
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/sheets/")
    page.select_option("#id_language", "en")
    page.get_by_role("button", name="Freeze and render").click()
    # The review is not ready: the page names the gaps and asks why, and freezes nothing.
    expect(page.locator("form[action='/projects/alpha/sheets/']")).to_contain_text(
        "The review is not ready"
    )
    assert not Sheet.objects.exists()
    page.get_by_label("If the review is not ready: why generate it anyway?").fill(
        "Steering committee needs a first look."
    )
    page.get_by_role("button", name="Freeze and render").click()
    page.wait_for_url(f"{live_server.url}/projects/alpha/sheets/1/")
    expect(page.locator("#gaps")).to_contain_text("Steering committee needs a first look.")
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
    form.get_by_label("Reject", exact=True).check()
    form.get_by_label("Comment").fill("Exit plan is missing.")
    form.get_by_role("button", name="Record my decision").click()
    expect(page.locator("#sheet-status")).to_contain_text("Exit plan is missing.")
    expect(page.locator("form.signoff-form")).to_have_count(0)
    signoff = SignOff.objects.get()
    assert (signoff.role, signoff.decision, signoff.user.username) == ("ops", "reject", "bob")
    assert Sheet.objects.get().status == SheetStatus.READY


def test_an_edit_refused_by_the_freeze_says_why_on_the_page(
    logged_in_page, live_server, suite
) -> None:
    from evaluations.models import AcceptanceAction, Project

    alpha = suite["alpha"]
    services.review_freeze_set(project=alpha, frozen=True, actor=suite["alice"])
    services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=suite["bob"]
    )
    order = list(AcceptanceAction.objects.order_by("position").values_list("key", flat=True))
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/requirements/")
    expect(page.locator(".notice.frozen")).to_contain_text("Frozen for the sign-off of r1")
    page.evaluate("window.__same_document = true")
    first = page.locator(f"#action-{suite['actions'][0].pk}")
    first.get_by_role("button", name="Move down").click()
    refused = page.locator("#request-refused")
    expect(refused).to_contain_text("frozen for the sign-off of revision r1")
    assert page.evaluate("window.__same_document === true")
    assert list(AcceptanceAction.objects.order_by("position").values_list("key", flat=True)) == (
        order
    )
    assert Project.objects.get(pk=alpha.pk).frozen_revision == 1
