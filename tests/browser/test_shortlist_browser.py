"""The shortlist and the acceptance suite in a real Chromium: HTMX swaps without reloads."""

import pytest
from playwright.sync_api import expect

from evaluations import services
from evaluations.models import AcceptanceAction, Candidate, Tier

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_move_between_tiers_without_a_reload(logged_in_page, live_server, personas) -> None:
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/")
    page.evaluate("window.__same_document = true")
    card = page.locator("#candidate-volcano")
    card.get_by_role("button", name="→ Validate as alternative").click()
    expect(page.locator(".tier-alternative #candidate-volcano")).to_be_visible()
    assert page.evaluate("window.__same_document === true")
    assert Candidate.objects.get(pk=personas["volcano"].pk).tier == Tier.ALTERNATIVE


def test_not_applicable_needs_a_reason_typed_inline(logged_in_page, live_server, personas) -> None:
    Candidate.objects.filter(pk=personas["volcano"].pk).update(reason="")
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/")
    page.evaluate("window.__same_document = true")
    page.locator("#candidate-volcano").get_by_role(
        "button", name="→ Not applicable for now"
    ).click()
    alert = page.locator("#candidate-volcano [role=alert]")
    expect(alert).to_contain_text("needs a reason")
    assert Candidate.objects.get(pk=personas["volcano"].pk).tier == Tier.FIRST
    page.fill("#reason-volcano", "No Kubernetes skills in the batch team yet.")
    page.locator("#candidate-volcano").get_by_role("button", name="Save").click()
    expect(page.locator(".tier-not_applicable #candidate-volcano")).to_contain_text(
        "No Kubernetes skills"
    )
    assert page.evaluate("window.__same_document === true")


def test_chinese_interface(logged_in_page, live_server) -> None:
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/")
    page.select_option("#lang-select", "zh-hans")
    page.wait_for_load_state()
    expect(page.locator("h2#shortlist-h")).to_have_text("短名单")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    # The glyphs are drawn with a real CJK font, not fallback boxes: a CJK string is wider than
    # the same number of Latin letters.
    widths = page.evaluate(
        """() => { const c = document.createElement('canvas').getContext('2d');
        const style = getComputedStyle(document.body);
        c.font = style.fontSize + ' ' + style.fontFamily;
        return [c.measureText('短名单').width, c.measureText('abc').width]; }"""
    )
    assert widths[0] > widths[1]


def test_edit_an_action_inline(logged_in_page, live_server, personas) -> None:
    requirement = services.requirement_create(
        project=personas["alpha"],
        actor=None,
        feature="Supports quotas",
        dimension="tenancy",
        owner_team="platform",
    )
    action = services.action_create(
        requirement=requirement,
        actor=None,
        key="quota-hit",
        question="What at the quota?",
        pass_criterion="Clear refusal.",
        scenario="resource_shortage",
    )
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/requirements/")
    page.evaluate("window.__same_document = true")
    page.locator(f"#action-{action.pk}").get_by_role("link", name="Edit").click()
    field = page.locator(f"#id_act{action.pk}-pass_criterion")
    expect(field).to_be_visible()
    field.fill("The job is refused with a message naming the quota.")
    page.get_by_role("button", name="Save action").click()
    expect(page.locator(f"#action-{action.pk}")).to_contain_text("naming the quota")
    assert page.evaluate("window.__same_document === true")
    assert "naming the quota" in AcceptanceAction.objects.get(pk=action.pk).pass_criterion
