"""The results matrix in a real Chromium: keyboard navigation and recording from the panel."""

import contextlib
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from poc.models import (
    Result,
)
from tests.factories import make_actions

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def actions(personas):
    _, created = make_actions(
        personas["alpha"], [("first-action", "real_task"), ("second-action", "real_task")]
    )
    return created


def test_record_a_failure_from_the_panel(logged_in_page, live_server, actions) -> None:
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/matrix/")
    page.evaluate("window.__same_document = true")
    first = page.locator(f"#cell-volcano-{actions[0].pk} a")
    first.focus()
    page.keyboard.press("ArrowDown")
    second = page.locator(f"#cell-volcano-{actions[1].pk} a")
    expect(second).to_be_focused()
    page.keyboard.press("Enter")
    panel = page.locator("#cell-panel")
    expect(panel).to_contain_text("second-action")
    panel.get_by_label("Failed").check()
    panel.get_by_role("button", name="Record result").click()
    expect(panel.locator("[role=alert]")).to_contain_text("failure cause")
    panel.locator("#id_failure_cause").fill("Job hung on the second node")
    panel.get_by_role("button", name="Record result").click()
    expect(panel).to_contain_text("Result recorded.")
    expect(page.locator(f"#cell-volcano-{actions[1].pk}")).to_contain_text("Failed")
    assert page.evaluate("window.__same_document === true")
    result = Result.objects.get()
    assert (result.outcome, result.failure_cause) == ("failed", "Job hung on the second node")


def test_the_result_form_shows_the_fields_its_outcome_needs(
    logged_in_page, live_server, actions
) -> None:
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/matrix/")
    page.locator(f"#cell-volcano-{actions[0].pk} a").click()
    panel = page.locator("#cell-panel")
    expect(panel).to_contain_text("first-action")
    cause, what = panel.locator("#id_failure_cause"), panel.locator("#id_integration_what")
    expect(cause).to_be_hidden()
    expect(what).to_be_hidden()
    panel.get_by_label("Failed").check()
    expect(cause).to_be_visible()
    expect(what).to_be_hidden()
    panel.get_by_label("Needs integration").check()
    expect(cause).to_be_hidden()
    expect(what).to_be_visible()
    expect(panel.locator("#id_integration_effort_days")).to_be_visible()
    panel.get_by_label("Passed").check()
    expect(what).to_be_hidden()


def test_the_grid_is_one_tab_stop(logged_in_page, live_server, actions) -> None:
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/matrix/")
    first = page.locator(f"#cell-volcano-{actions[0].pk} a")
    second = page.locator(f"#cell-volcano-{actions[1].pk} a")
    expect(first).to_have_attribute("tabindex", "0")
    expect(second).to_have_attribute("tabindex", "-1")
    first.focus()
    page.keyboard.press("ArrowDown")
    expect(second).to_be_focused()
    expect(second).to_have_attribute("tabindex", "0")
    expect(first).to_have_attribute("tabindex", "-1")
    page.keyboard.press("Tab")  # out of the grid, not to the next cell
    assert page.evaluate("!document.activeElement.hasAttribute('data-cell')")
    page.keyboard.press("Shift+Tab")  # back into the grid, on the cell last used
    expect(second).to_be_focused()


def test_a_change_made_while_the_matrix_reloads_still_reaches_it(
    logged_in_page, live_server, actions
) -> None:
    """Two results recorded in quick succession: the grid ends showing both, whatever the order
    in which its reloads come back (a slow reload must not swallow the one after it)."""
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/matrix/")
    held: list = []
    reloads: list[str] = []

    def hold_the_first_reload(route) -> None:
        reloads.append(route.request.url)
        if len(reloads) == 1:
            # Answered now (the grid as it is after the first result), delivered later.
            held.append((route, route.fetch()))
        else:
            route.continue_()

    page.route(lambda url: urlsplit(url).path == "/projects/alpha/matrix/", hold_the_first_reload)
    panel = page.locator("#cell-panel")
    for action in actions:
        page.locator(f"#cell-volcano-{action.pk} a").click()
        expect(panel.locator("#panel-h")).to_contain_text(action.key)
        panel.get_by_label("Passed").check()
        panel.get_by_role("button", name="Record result").click()
        expect(panel).to_contain_text("Result recorded.")
        for _ in range(200):
            if held:
                break
            page.wait_for_timeout(50)
    route, response = held[0]
    with contextlib.suppress(PlaywrightError):  # given up for the newer reload: nothing to do
        route.fulfill(response=response)
    for action in actions:
        expect(page.locator(f"#cell-volcano-{action.pk}")).to_contain_text("Passed")
    assert Result.objects.filter(outcome="passed").count() == 2
