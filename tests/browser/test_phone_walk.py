"""A walk through the workbench on a phone (390 x 844): log in, read the matrix, open a cell,
read a revision's sheet page and sign it off. Nothing scrolls the page sideways, the matrix keeps
its action column in view, an open cell covers the screen and gives the focus back when closed,
long hashes wrap, and the language selector's chevron has room of its own."""

from typing import Any

import pytest
from playwright.sync_api import expect

from reports import services as report_services
from reports.models import SignOff
from tests.factories import CandidateFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 390, 844


@pytest.fixture
def browser_context_args(browser_context_args: dict) -> dict:
    # The phone from the first page on: the login form too.
    return {**browser_context_args, "viewport": {"width": WIDTH, "height": HEIGHT}}


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    return box


def _page_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_a_phone_walk_from_login_to_sign_off(
    logged_in_page, live_server, suite, settings, tmp_path
) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    alpha, first_action = suite["alpha"], suite["actions"][0]
    for key in ("slurm", "runai", "openshift-ai"):  # a matrix wider than the phone
        CandidateFactory(project=alpha, solution_key=key)
    page = logged_in_page
    assert page.viewport_size == {"width": WIDTH, "height": HEIGHT}

    # The language selector: its words fit beside the chevron, which has the right padding.
    room = page.evaluate(
        """() => {
            const select = document.querySelector("#lang-select");
            const style = getComputedStyle(select);
            const pen = document.createElement("canvas").getContext("2d");
            pen.font = style.font;
            const words = pen.measureText(select.selectedOptions[0].text).width;
            const pad = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
            return {words, inside: select.clientWidth - pad, right: parseFloat(style.paddingRight)};
        }"""
    )
    assert room["right"] >= 16, room  # the chevron's own room
    assert room["inside"] >= room["words"], room  # the words never run under it
    assert _box(page, "#lang-select")["x"] + _box(page, "#lang-select")["width"] <= WIDTH

    # The matrix: the page never scrolls sideways; the action column stays while cells do.
    page.goto(f"{live_server.url}/projects/alpha/matrix/")
    assert _page_width(page) <= WIDTH
    matrix = page.locator("#matrix")
    assert page.evaluate("document.querySelector('#matrix').scrollWidth") > WIDTH
    row_head = f"#cell-volcano-{first_action.pk}"
    head = page.locator(f"tr:has({row_head}) > th.action-col")
    matrix.evaluate("m => { m.scrollLeft = m.scrollWidth; }")
    assert matrix.evaluate("m => m.scrollLeft") > 100
    shown = head.bounding_box()
    assert shown is not None and shown["x"] >= 0 and shown["x"] + shown["width"] <= WIDTH
    # Nothing is drawn over it: the column is opaque and on top of the cells under it.
    on_top = head.evaluate(
        """th => { const b = th.getBoundingClientRect();
                   const hit = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
                   return th.contains(hit) && getComputedStyle(th).backgroundColor; }"""
    )
    assert on_top not in (False, "rgba(0, 0, 0, 0)", "transparent"), on_top
    assert _page_width(page) <= WIDTH

    # A cell opens over the whole screen, focus inside; Escape closes it and focus goes back.
    link = page.locator(f"{row_head} a")
    panel = page.locator("#cell-panel")
    link.focus()
    page.keyboard.press("Enter")
    expect(panel.locator("#panel-h")).to_contain_text(first_action.key)
    assert panel.evaluate("p => getComputedStyle(p).position") == "fixed"
    covered = _box(page, "#cell-panel")
    assert covered["x"] == 0 and covered["y"] == 0
    assert covered["width"] == WIDTH and covered["height"] == HEIGHT
    assert panel.evaluate("p => getComputedStyle(p).overflowY") == "auto"
    assert panel.evaluate("p => p.contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(panel).to_contain_text("Choose a cell")
    expect(link).to_be_focused()
    assert panel.evaluate("p => getComputedStyle(p).position") != "fixed"
    # The close button does the same.
    page.keyboard.press("Enter")
    expect(panel.locator("#panel-h")).to_contain_text(first_action.key)
    panel.get_by_role("button", name="Close").click()
    expect(panel).to_contain_text("Choose a cell")
    expect(link).to_be_focused()

    # A revision frozen for sign-off: its page fits, its SHA-256 wraps inside the screen.
    report_services.review_freeze_set(project=alpha, frozen=True, actor=suite["alice"])
    sheet = report_services.sheet_generate(
        acknowledgement="Known gaps, looked at by the team.",
        project=alpha,
        language="en",
        actor=suite["alice"],
    )
    report_services.sheet_render(sheet_id=sheet.pk)
    page.goto(f"{live_server.url}/projects/alpha/sheets/{sheet.revision}/")
    expect(page.locator(".notice.frozen")).to_contain_text("Frozen for the sign-off")
    digest = page.locator("#sheet-status code", has_text=sheet.sha256)
    expect(digest).to_have_count(1)
    box = digest.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH
    assert _page_width(page) <= WIDTH

    # Sign-off from the phone: every part of the form is on screen and it records the decision.
    form = page.locator("form.signoff-form")
    for part in ("input[value=approve]", "textarea", "button[type=submit]"):
        box = form.locator(part).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, part
    form.get_by_label("Approve", exact=True).check()
    form.get_by_label("Comment").fill("Fits our platform.")
    form.get_by_role("button", name="Record my decision").click()
    expect(page.locator("#sheet-status")).to_contain_text("Fits our platform.")
    assert _page_width(page) <= WIDTH
    signoff = SignOff.objects.get()
    assert (signoff.role, signoff.decision, signoff.user.username) == ("ops", "approve", "bob")
