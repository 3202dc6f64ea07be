"""A list table in a real Chromium: sorting and filtering update the table in place and keep
the state in the address, so that a reload or the back button shows the same view; without
JavaScript the same links and form do it with whole pages."""

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from poc import services
from tests.factories import CandidateFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
# Each table with a filter applied, a sort, and a value it had to leave out (so that the
# notice, the chips and the pager are on the page too).
TABLES = (
    "results/?outcome=failed&sort=candidate&per_page=1&page=x",
    "actions/?results=yes&sort=-results&per_page=1&scenario=none",
    "integration/?all=1&sort=-effort&team=nobody",
    "ci/runs/?status=steady&posted_from=2026-02-30",
    "probes/?source=upload&sort=gpus&cluster=0",
)


@pytest.fixture
def browser_context_args(browser_context_args: dict) -> dict:
    # axe-core is put into the page as a script of the test's own, which the pages' Content
    # Security Policy (script-src 'self') would refuse.
    return {**browser_context_args, "bypass_csp": True}


@pytest.fixture
def results(suite: dict[str, Any]) -> dict[str, Any]:
    """Volcano fails quota-hit and passes real-job; Slurm needs integration on quota-hit."""
    quota, job, _tenant = suite["actions"]
    slurm = CandidateFactory(project=suite["alpha"], solution_key="slurm", slug="slurm", position=5)
    record = services.result_record
    record(
        candidate=slurm,
        action=quota,
        outcome="needs_integration",
        actor=None,
        integration_what="LDAP groups",
        integration_owner_team="ops",
        integration_effort_days=Decimal(2),
    )
    record(
        candidate=suite["volcano"],
        action=quota,
        outcome="failed",
        actor=None,
        failure_cause="quota ignored",
    )
    record(candidate=suite["volcano"], action=job, outcome="passed", actor=None)
    return suite


def _rows(page: Any) -> Any:
    return page.locator("#results-table tbody tr")


def _settled(page: Any) -> None:
    """Wait until htmx has swapped and settled the table (its new controls then answer)."""
    page.wait_for_function(
        "!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
    )


def test_sort_and_filter_in_place_and_the_address_keeps_them(
    logged_in_page, live_server, results
) -> None:
    page = logged_in_page
    url = f"{live_server.url}/projects/alpha/results/"
    page.goto(url)
    expect(_rows(page)).to_have_count(3)
    page.evaluate("window.__same_document = true")

    page.locator("#results-table thead").get_by_role("link", name="Candidate").click()
    expect(page).to_have_url(f"{url}?sort=candidate")
    candidate_header = page.locator("#results-table th", has_text="Candidate")
    expect(candidate_header).to_have_attribute("aria-sort", "ascending")
    expect(_rows(page).first).to_contain_text("Volcano")
    _settled(page)

    page.select_option("#results-table-outcome", "failed")
    expect(page).to_have_url(f"{url}?outcome=failed&sort=candidate")
    expect(_rows(page)).to_have_count(1)
    expect(_rows(page).first).to_contain_text("quota ignored")
    expect(page.locator(".table-active")).to_contain_text("Outcome: Failed")
    assert page.evaluate("window.__same_document === true")  # no page was loaded

    page.reload()
    expect(_rows(page)).to_have_count(1)
    expect(page.locator("#results-table-outcome")).to_have_value("failed")
    expect(candidate_header).to_have_attribute("aria-sort", "ascending")

    page.locator(".table-active").get_by_role("link", name="Clear all filters").click()
    expect(page).to_have_url(f"{url}?sort=candidate")
    expect(_rows(page)).to_have_count(3)
    _settled(page)
    page.go_back()
    expect(page).to_have_url(f"{url}?outcome=failed&sort=candidate")
    expect(_rows(page)).to_have_count(1)


def test_without_javascript_the_links_and_the_form_do_the_same(
    logged_in_page, browser, live_server, results
) -> None:
    context = browser.new_context(java_script_enabled=False)
    context.add_cookies(logged_in_page.context.cookies())  # bob's session
    page = context.new_page()
    url = f"{live_server.url}/projects/alpha/results/"
    page.goto(f"{url}?sort=-outcome")
    page.select_option("#results-table-candidate", "volcano")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(re.escape(f"{url}?sort=-outcome&candidate=volcano&outcome=&")))
    expect(_rows(page)).to_have_count(2)
    expect(_rows(page).first).to_contain_text("Passed")
    outcome = page.locator("#results-table th", has_text="Outcome")
    expect(outcome).to_have_attribute("aria-sort", "descending")
    outcome.get_by_role("link").click()
    page.wait_for_url(f"{url}?candidate=volcano&sort=outcome")
    expect(_rows(page).first).to_contain_text("Failed")
    context.close()


def test_the_tables_have_no_serious_accessibility_violation(
    logged_in_page, live_server, results
) -> None:
    """WCAG 2.1 AA as axe-core checks it, in English and in Chinese."""
    page = logged_in_page
    problems = {}
    for language in ("en", "zh-hans"):
        page.context.add_cookies(
            [{"name": "django_language", "value": language, "url": live_server.url}]
        )
        for path in TABLES:
            answer = page.goto(f"{live_server.url}/projects/alpha/{path}")
            assert answer is not None and answer.status == 200, path
            expect(page.locator(".table-problems")).to_be_visible()
            page.add_script_tag(path=str(AXE))
            found = page.evaluate(
                """async () => (await axe.run(document, {
                    runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
                    resultTypes: ["violations"],
                })).violations
                    .filter(v => v.impact === "serious" || v.impact === "critical")
                    .map(v => v.id + ": " + v.nodes.slice(0, 3).map(n => n.target).join("; "))"""
            )
            if found:
                problems[f"{language} {path}"] = found
    assert problems == {}
