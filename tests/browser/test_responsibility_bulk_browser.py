"""Bulk assignment on the responsibility grid in a real Chromium: a column's box ticks its
cells, and the assignment is written and shown without a page reload."""

import pytest
from playwright.sync_api import expect

from evaluations.models import ProjectEvent
from poc.models import Responsibility, ResponsibilityArea
from tests.factories import CandidateFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_assign_a_whole_column_without_a_reload(logged_in_page, live_server, personas) -> None:
    CandidateFactory(project=personas["alpha"], solution_key="slurm")
    areas = len(ResponsibilityArea.values)
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/responsibilities/")
    page.evaluate("window.__same_document = true")
    volcano_cells = page.locator("input[name='cell'][data-column='volcano']")
    slurm_cells = page.locator("input[name='cell'][data-column='slurm']")
    # Keyboard only: focus the column's box and tick it with the space bar.
    column = page.get_by_label("Select every area of Volcano")
    column.focus()
    page.keyboard.press("Space")
    expect(column).to_be_checked()
    expect(page.locator("input[name='cell'][data-column='volcano']:checked")).to_have_count(areas)
    expect(page.locator("input[name='cell'][data-column='slurm']:checked")).to_have_count(0)
    # Clearing one cell leaves the column's box neither ticked nor clear.
    page.get_by_label("Select Volcano · Training").uncheck()
    expect(column).not_to_be_checked()
    assert column.evaluate("box => box.indeterminate") is True
    page.get_by_label("Select Volcano · Training").check()
    expect(column).to_be_checked()
    assert column.evaluate("box => box.indeterminate") is False

    form = page.locator("#bulk-assign")
    form.get_by_label("Party").select_option("vendor")
    form.get_by_label("Named person").fill("Jane Doe")
    form.get_by_label("Escalation").fill("vendor TAM")
    form.get_by_role("button", name="Assign to the chosen cells").click()

    expect(page.locator("#bulk-status")).to_have_text(
        f"{areas} cells assigned to Vendor · Jane Doe."
    )
    grid = page.locator("#responsibility-grid")
    expect(grid.locator("td.gap")).to_have_count(areas)  # slurm's column only
    expect(page.locator("#r-support_sla")).to_contain_text("Jane Doe")
    expect(volcano_cells.first).not_to_be_checked()  # a fresh selection
    expect(slurm_cells.first).not_to_be_checked()
    expect(page.get_by_role("button", name="Assign to the chosen cells")).to_be_focused()
    assert page.evaluate("window.__same_document === true")  # no reload
    assert Responsibility.objects.filter(candidate__slug="volcano", party="vendor").count() == areas
    assert ProjectEvent.objects.filter(verb="responsibility.set").count() == areas

    # A refusal comes back in place too, naming the field; nothing is written.
    page.get_by_label("Select every candidate for Deployment").check()
    form.get_by_role("button", name="Assign to the chosen cells").click()
    expect(page.locator("#bulk-assign [role=alert]").first).to_contain_text("required")
    expect(page.get_by_label("Select Slurm · Deployment")).to_be_checked()
    assert page.evaluate("window.__same_document === true")
    assert Responsibility.objects.count() == areas
