"""The CI runs page shows trends across runs: each candidate's pass rate per run (a chart with
its figures in a table), the actions whose outcome flips from run to run, and what the newest
run of each candidate broke or mended; in a fixed number of queries whatever the runs."""

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from poc import charts, run_tallies, selectors
from poc.models import RunImport
from poc.selectors import trends as trends_module
from tests.factories import CandidateFactory
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db

NEEDS = {"what": "LDAP groups", "owner_team": "platform", "effort_days": 2}
# Outcome of quota-hit, real-job and cross-tenant for Volcano in each run, oldest first:
# real-job flips P F P F (three flips); the newest run breaks quota-hit and real-job and
# mends cross-tenant.
VOLCANO = [
    ("passed", "passed", "failed"),  # 2 of 3: 66.7 %
    ("passed", "failed", "failed"),  # 1 of 3: 33.3 %
    ("passed", "passed", "failed"),  # 2 of 3: 66.7 %
    ("failed", "failed", "passed"),  # 1 of 3: 33.3 %
]
KEYS = ("quota-hit", "real-job", "cross-tenant")


def _row(candidate: str, action: str, outcome: str) -> dict:
    row = {"candidate": candidate, "action": action, "outcome": outcome}
    if outcome == "failed":
        row["failure_cause"] = "broke"
    if outcome == "needs_integration":
        row["integration"] = NEEDS
    return row


def _post(client, run: str, rows: list[dict]) -> None:
    response = post_results(client, "alpha", payload(rows, run=run, name=f"Nightly {run}"))
    assert response.status_code == 201, response.content


@pytest.fixture
def runs(suite):
    """Four runs of Volcano; Slurm joins the last two (one run posts both candidates)."""
    CandidateFactory(project=suite["alpha"], solution_key="slurm", version="23.11")
    client, _, _ = token_client(suite["alpha"])
    for n, outcomes in enumerate(VOLCANO, start=1):
        rows = [_row("volcano", key, o) for key, o in zip(KEYS, outcomes, strict=True)]
        if n == 3:
            rows += [_row("slurm", key, "passed") for key in KEYS]  # 3 of 3
        if n == 4:  # 1 of 3; cross-tenant passed -> needs integration is a regression too
            rows += [
                _row("slurm", "quota-hit", "passed"),
                _row("slurm", "real-job", "not_covered"),
                _row("slurm", "cross-tenant", "needs_integration"),
            ]
        _post(client, f"r{n}", rows)
    return client


def _section(html: str, start: str, end: str) -> str:
    part = html[html.index(start) :]
    return part[: part.index(end)]


def _figures(html: str, slug: str) -> list[tuple[str, str, str, str]]:
    """(run, passed, results, pass rate) per row of a candidate's figures table."""
    row = _section(html, f'id="trend-{slug}"', "</details>")
    return re.findall(
        r'<tr><th scope="row">([^<]+)</th><td>(\d+)</td><td>(\d+)</td><td>([\d.]+) %</td></tr>',
        row,
    )


def _page(suite, login) -> str:
    response = login(suite["bob"]).get(reverse("poc:runs", args=["alpha"]))
    assert response.status_code == 200
    return response.content.decode()


def test_pass_rate_per_candidate_per_run_with_its_figures(runs, suite, login) -> None:
    html = _page(suite, login)
    assert _figures(html, "volcano") == [
        ("Nightly r1", "2", "3", "66.7"),
        ("Nightly r2", "1", "3", "33.3"),
        ("Nightly r3", "2", "3", "66.7"),
        ("Nightly r4", "1", "3", "33.3"),
    ]
    # One run posted both candidates: each candidate counts its own results.
    assert _figures(html, "slurm") == [
        ("Nightly r3", "3", "3", "100"),
        ("Nightly r4", "1", "3", "33.3"),
    ]
    volcano = _section(html, 'id="trend-volcano"', 'id="trend-slurm"')
    # The chart is an image named in words; the newest run's figure is written beside it.
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="chart spark"' in volcano
    assert 'role="img"' in volcano
    assert (
        'aria-label="Pass rate of Volcano over its last 4 runs, oldest to newest: from 66.7 % '
        'to 33.3 %, lowest 33.3 %, highest 66.7 %"' in volcano
    )
    assert volcano.count("<circle") == 4
    newest = volcano[volcano.index("</details>") :]
    assert "33.3 %" in newest and "1 of 3 passed" in newest and '<td class="num">4</td>' in newest
    slurm = _section(html, 'id="trend-slurm"', "</th>")
    assert "Slurm" in slurm and "23.11" in slurm  # by product name and version, not by key


def test_flaky_actions_with_their_flips_and_sequence(runs, suite, login) -> None:
    html = _page(suite, login)
    flaky = _section(html, 'id="flaky-h"', 'id="regressions-h"')
    real_job = suite["actions"][1]
    rows = re.findall(r"<tr><td>.*?</tr>", flaky, re.S)
    assert len(rows) == 1  # quota-hit and cross-tenant flipped once each: not flaky
    (row,) = rows
    assert reverse("poc:cell", args=["alpha", "volcano", real_job.pk]) in row
    assert "real-job?" in row and '<code class="small">real-job</code>' in row
    assert '<td class="num">3</td>' in row
    assert '<span class="sequence" aria-hidden="true">✓✗✓✗</span>' in row
    assert "Passed, Failed, Passed, Failed" in row  # the same in words for screen readers


def test_the_newest_runs_regressions_and_recoveries(runs, suite, login) -> None:
    html = _page(suite, login)
    quota, real_job, tenant = suite["actions"]
    regressions = _section(html, 'id="regressions-h"', "</table>")
    listed = re.findall(r"<code class=\"small\">([\w-]+)</code>", regressions)
    # Volcano's newest run broke quota-hit and real-job; Slurm's broke cross-tenant (passed ->
    # needs integration); passed -> not covered is no regression.
    assert listed == ["quota-hit", "real-job", "cross-tenant"]
    assert reverse("poc:cell", args=["alpha", "volcano", quota.pk]) in regressions
    assert reverse("poc:cell", args=["alpha", "slurm", tenant.pk]) in regressions
    run_id = selectors.runs_for_project(suite["alpha"])[0].pk
    assert reverse("poc:run_detail", args=["alpha", run_id]) + "#post-" in regressions
    assert "Needs integration" in regressions
    recoveries = _section(html, 'id="recoveries"', "</details>")
    assert "1 cell back to passed" in recoveries
    assert re.findall(r"<code class=\"small\">([\w-]+)</code>", recoveries) == ["cross-tenant"]
    assert reverse("poc:cell", args=["alpha", "volcano", tenant.pk]) in recoveries


def test_a_run_posting_a_cell_twice_counts_where_it_ended(suite, monkeypatch) -> None:
    """A run's posts count together; a cell broken and mended again in the same run is no
    regression of that run."""
    client, _, _ = token_client(suite["alpha"])
    _post(client, "r1", [_row("volcano", key, "passed") for key in KEYS])
    _post(client, "r2", [_row("volcano", "quota-hit", "failed")])
    _post(
        client,
        "r2",
        [_row("volcano", "quota-hit", "passed"), _row("volcano", "real-job", "failed")],
    )
    trends = selectors.ci_trends(suite["alpha"])
    (volcano,) = trends.trends
    assert [(r.name, r.passed, r.total) for r in volcano.runs] == [
        ("Nightly r1", 3, 3),
        ("Nightly r2", 1, 3),
    ]
    assert [m.action.key for m in trends.regressions] == ["real-job"]
    assert trends.recoveries == [] and trends.flaky == []
    # A window cut between the two posts of r2 would count r2 in part: it is left out.
    monkeypatch.setattr(run_tallies, "WINDOW_POSTS", 1)
    cut = selectors.ci_trends(suite["alpha"])
    assert cut.cut and cut.trends == [] and cut.regressions == []


def test_the_window_is_bounded(runs, suite, monkeypatch) -> None:
    monkeypatch.setattr(trends_module, "TREND_RUNS", 2)
    volcano, _slurm = selectors.ci_trends(suite["alpha"]).trends
    assert [r.name for r in volcano.runs] == ["Nightly r3", "Nightly r4"]
    monkeypatch.setattr(trends_module, "TREND_RUNS", 30)
    monkeypatch.setattr(run_tallies, "WINDOW_POSTS", 3)
    bounded = selectors.ci_trends(suite["alpha"])
    assert bounded.cut and not bounded.counting
    # The newest three posts: r4, r3 and r2, whole (r1, left out, is another run).
    assert [r.name for r in bounded.trends[0].runs] == ["Nightly r2", "Nightly r3", "Nightly r4"]
    assert not selectors.ci_trends(suite["beta"]).cut


def _counts(ctx) -> int:
    return sum("COUNT(" in q["sql"] for q in ctx.captured_queries)


def test_each_post_is_counted_once_and_the_rest_on_the_next_visit(
    runs, suite, login, monkeypatch
) -> None:
    # r4 and r3 carry six results each, r2 and r1 three: a visit counts twelve at most.
    monkeypatch.setattr(run_tallies, "TALLY_BUDGET", 12)
    with CaptureQueriesContext(connection) as first:
        trends = selectors.ci_trends(suite["alpha"])
    assert _counts(first) == 1 and trends.counting
    assert [r.name for r in trends.trends[0].runs] == ["Nightly r3", "Nightly r4"]
    html = _page(suite, login)  # counts r2 and r1
    assert "Older posts are still being counted" not in html
    assert len(_figures(html, "volcano")) == 4
    with CaptureQueriesContext(connection) as later:
        trends = selectors.ci_trends(suite["alpha"])
    assert _counts(later) == 0 and not trends.counting and not trends.cut
    assert [r.name for r in trends.trends[0].runs] == [f"Nightly r{n}" for n in range(1, 5)]


def test_queries_do_not_grow_with_the_runs(runs, suite, login) -> None:
    browser = login(suite["bob"])
    url = reverse("poc:runs", args=["alpha"])
    browser.get(url)
    with CaptureQueriesContext(connection) as few:
        assert browser.get(url).status_code == 200
    for n in range(5, 15):
        outcome = "passed" if n % 2 else "failed"
        rows = [_row("volcano", key, outcome) for key in KEYS]
        rows += [_row("slurm", key, "passed" if n % 3 else "failed") for key in KEYS]
        _post(runs, f"r{n}", rows)
    with CaptureQueriesContext(connection) as counting:
        browser.get(url)  # counts the new posts, once
    assert len(counting) == len(few) + 1
    with CaptureQueriesContext(connection) as many:
        html = browser.get(url).content.decode()
    assert len(many) == len(few), [q["sql"][:120] for q in many.captured_queries]
    assert len(_figures(html, "volcano")) == 14


def test_no_run_yet(suite, login) -> None:
    html = _page(suite, login)
    assert "No run has posted results yet: the trends start with the first post." in html


def test_the_chart_escapes_and_names_itself() -> None:
    svg = charts.pass_rate_line([("<b>r1</b>", 50.0), ("r2", 100.0)], slots=30, title='A "B"')
    assert 'role="img"' in svg and 'aria-label="A &quot;B&quot;"' in svg
    assert "<title>A &quot;B&quot;</title>" in svg
    assert "&lt;b&gt;r1&lt;/b&gt;: 50.0%" in svg and "<b>" not in svg
    assert "<polyline" in svg
    assert "<polyline" not in charts.pass_rate_line([("r1", 0.0)], slots=30, title="t")


def test_the_ingest_keeps_each_posts_tally_as_the_page_would_count_it(
    suite, django_capture_on_commit_callbacks
) -> None:
    slurm = CandidateFactory(project=suite["alpha"], solution_key="slurm")
    client, _, _ = token_client(suite["alpha"])
    _post(client, "r1", [_row("volcano", key, "passed") for key in KEYS])
    rows = [_row("volcano", k, o) for k, o in zip(KEYS, VOLCANO[3], strict=True)]
    rows += [_row("slurm", "quota-hit", "failed"), _row("volcano", "quota-hit", "passed")]
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, "r2", rows)
    post = RunImport.objects.filter(run__external_id="r2").get()
    kept = cache.get(run_tallies._key(post.pk, post.posted_at))
    quota, real_job, tenant = (a.pk for a in suite["actions"])
    # Volcano: four results (quota-hit twice), two passed; quota-hit and real-job moved
    # (cross-tenant passed again). Slurm: one result, new.
    assert kept == {suite["volcano"].pk: (2, 4, (quota, real_job)), slurm.pk: (0, 1, ())}
    assert tenant not in kept[suite["volcano"].pk][2]
    assert run_tallies._count([run_tallies.post_window(suite["alpha"]).posts[0]]) == {post.pk: kept}


class _Unreachable:
    def get_many(self, keys):
        raise ConnectionError("no cache")

    def set_many(self, values, timeout):
        raise ConnectionError("no cache")


def test_without_the_cache_the_page_counts_the_posts_itself(
    runs, suite, login, monkeypatch
) -> None:
    monkeypatch.setattr(run_tallies, "cache", _Unreachable())
    html = _page(suite, login)
    assert len(_figures(html, "volcano")) == 4 and "real-job" in html


JUNIT = b"""<testsuite name="nightly">
  <testcase name="quota-hit" classname="gpu.quota"/>
  <testcase name="gpu-burn" classname="gpu.stress"><failure message="Xid 79"/></testcase>
</testsuite>"""


def test_each_run_and_post_is_one_click_from_its_details(suite, login) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = client.post(
        "/api/v1/projects/alpha/junit/?candidate=volcano&run=nightly-9",
        JUNIT,
        content_type="application/xml",
    )
    assert response.status_code == 201, response.content
    post = RunImport.objects.get(run__external_id="nightly-9")
    detail = reverse("poc:run_detail", args=["alpha", post.run_id])
    html = _page(suite, login)
    posts = html[html.index('id="posts-h"') :]
    assert f'href="{detail}"' in posts  # the run
    assert f'href="{detail}#post-{post.pk}"' in posts and "JUnit report" in posts  # the post
    assert f'href="{detail}#post-{post.pk}-unmapped"' in posts  # its unmapped testcase
    assert "<td>Volcano</td>" in posts  # the candidate by product name
    # The run's page names the testcases behind each result.
    page = login(suite["bob"]).get(detail).content.decode()
    assert "JUnit testcases: quota-hit" in page and "gpu-burn" in page
