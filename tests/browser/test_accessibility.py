"""WCAG 2.1 AA, as axe-core checks it in Chromium: the main pages in English and in Chinese have
no serious or critical violation; on the matrix, the keyboard opens a cell's panel and Escape
closes it, giving the focus back to the cell. axe-core is vendored from the npm registry
(tests/browser/vendor/axe-core, its version and hash in VERSION)."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from evaluations import services as evaluation_services
from poc import services as poc_services
from tests.factories import make_actions

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
PAGES = (
    "/projects/",
    "/projects/alpha/",
    "/projects/alpha/framing/",
    "/projects/alpha/requirements/",
    "/projects/alpha/matrix/",
    "/projects/alpha/comparison/",
    "/projects/alpha/responsibilities/",
    "/projects/alpha/integration/",
    "/projects/alpha/ci/runs/",
    "/projects/alpha/probes/",
    "/projects/alpha/clusters/",
    "/projects/alpha/terms/",
    "/projects/alpha/compatibility/",
    "/projects/alpha/costs/",
    "/projects/alpha/to-confirm/",
    "/projects/alpha/sheets/",
    "/projects/alpha/history/",
    "/projects/alpha/members/",
    "/catalog/",
    "/search/?q=volcano",
    "/sheets/verify/",
)
SERIOUS = ("serious", "critical")


@pytest.fixture
def browser_context_args(browser_context_args: dict) -> dict:
    # axe-core is put into the page as a script of the test's own, which the pages' Content
    # Security Policy (script-src 'self') would refuse.
    return {**browser_context_args, "bypass_csp": True}


def _review(personas) -> int:
    """Alpha with actions, a result of each kind and a responsibility: pages with content."""
    alpha = personas["alpha"]
    _, actions = make_actions(
        alpha,
        [
            ("quota-hit", "resource_shortage"),
            ("real-job", "real_task"),
            ("node-down", "node_failure"),
        ],
    )
    volcano = alpha.candidates.get(slug="volcano")
    poc_services.result_record(
        candidate=volcano, action=actions[0], outcome="passed", actor=personas["bob"]
    )
    poc_services.result_record(
        candidate=volcano,
        action=actions[1],
        outcome="failed",
        failure_cause="the job stalled at step 40",
        actor=personas["bob"],
    )
    evaluation_services.project_update(
        project=alpha, actor=personas["alice"], workloads=["training"]
    )
    return actions[0].pk


def _violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => {
            const result = await axe.run(document, {
                runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
                resultTypes: ["violations"],
            });
            return result.violations.map(v => ({
                id: v.id, impact: v.impact,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")),
                count: v.nodes.length,
            }));
        }"""
    )
    return [
        f"{v['id']} ({v['impact']}, {v['count']}×: {'; '.join(v['nodes'])})"
        for v in found
        if v["impact"] in SERIOUS
    ]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_main_pages_have_no_serious_violation(
    logged_in_page, live_server, personas, language
) -> None:
    _review(personas)
    page = logged_in_page
    page.context.add_cookies(
        [{"name": "django_language", "value": language, "url": live_server.url}]
    )
    problems = {}
    for path in PAGES:
        answer = page.goto(f"{live_server.url}{path}")
        assert answer is not None and answer.status == 200, path
        page.wait_for_load_state("networkidle")
        if found := _violations(page):
            problems[path] = found
    assert problems == {}


def test_escape_closes_the_cell_panel_and_gives_the_focus_back(
    logged_in_page, live_server, personas
) -> None:
    action_id = _review(personas)
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/matrix/")
    link = page.locator(f"#cell-volcano-{action_id} a")
    link.focus()
    page.keyboard.press("Enter")
    panel = page.locator("#cell-panel")
    expect(panel).to_contain_text("quota-hit")
    page.keyboard.press("Escape")
    expect(panel).not_to_contain_text("quota-hit")
    expect(panel).to_contain_text("Choose a cell")
    expect(link).to_be_focused()
