"""The pages at 390 px wide (a phone): nothing scrolls sideways except inside a table's own
scroll box, and the cell panel comes into view when a cell is opened."""

import pytest
from playwright.sync_api import expect

from tests.factories import make_actions

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = (
    "/projects/",
    "/projects/alpha/",
    "/projects/alpha/requirements/",
    "/projects/alpha/matrix/",
    "/projects/alpha/comparison/",
    "/projects/alpha/responsibilities/",
    "/projects/alpha/integration/",
    "/projects/alpha/sheets/",
    "/projects/alpha/history/",
    "/catalog/",
    "/search/?q=volcano",
)


def test_no_page_scrolls_sideways_at_390_px(logged_in_page, live_server, personas) -> None:
    make_actions(personas["alpha"], [("narrow-check", "real_task")])
    page = logged_in_page
    page.set_viewport_size({"width": 390, "height": 844})
    wide = {}
    for path in PAGES:
        page.goto(f"{live_server.url}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide[path] = width
    assert wide == {}


def test_the_cell_panel_scrolls_into_view(logged_in_page, live_server, personas) -> None:
    _, (action,) = make_actions(personas["alpha"], [("narrow-cell", "real_task")])
    page = logged_in_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/projects/alpha/matrix/")
    page.locator(f"#cell-volcano-{action.pk} a").click()
    panel = page.locator("#cell-panel")
    expect(panel).to_contain_text("narrow-cell")
    expect(panel).to_be_in_viewport()
