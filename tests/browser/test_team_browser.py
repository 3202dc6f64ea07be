"""Removing a member asks first, and a new API token can be copied with one click."""

import pytest
from playwright.sync_api import expect

from evaluations.models import Membership

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def admin_page(page, live_server, personas):
    """Chromium logged in as alice, who administers project alpha."""
    alice = personas["alice"]
    alice.set_password("browser-pass-2")
    alice.save()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "browser-pass-2")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/projects/")
    return page


def test_removing_a_member_asks_first(admin_page, live_server, personas) -> None:
    page = admin_page
    bob = Membership.objects.get(project=personas["alpha"], user=personas["bob"])
    page.goto(f"{live_server.url}/projects/alpha/members/")
    remove = page.locator(f"form[action$='/members/{bob.pk}/remove/'] button")
    questions: list[str] = []

    def dismiss(dialog) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    remove.click()
    page.wait_for_timeout(300)
    assert questions and "bob" in questions[0]
    assert Membership.objects.filter(pk=bob.pk).exists()  # dismissed: nothing happened
    page.once("dialog", lambda dialog: dialog.accept())
    remove.click()
    page.wait_for_load_state()
    expect(page.locator(f"form[action$='/members/{bob.pk}/remove/']")).to_have_count(0)
    assert not Membership.objects.filter(pk=bob.pk).exists()


def test_a_new_token_is_copied_with_one_click(admin_page, live_server) -> None:
    page = admin_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{live_server.url}/projects/alpha/ci/tokens/")
    page.fill("#id_name", "gitlab-poc")
    page.get_by_role("button", name="Create").click()
    token = page.locator("#new-token").inner_text().strip()
    assert token.startswith("wbt")
    button = page.get_by_role("button", name="Copy the token")
    button.click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == token
