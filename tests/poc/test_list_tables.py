"""The project's list tables (every result, the acceptance actions, the integration gaps, the
CI posts): sorted, filtered and paged from the query string; junk in it never fails a page;
htmx gets the table alone; the queries stay the same however many rows there are."""

from decimal import Decimal
from html import unescape
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluations.models import Candidate, Tier
from poc import services
from poc.models import RunImport
from tests.factories import CandidateFactory, make_actions
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db

LIST_PAGES = ["results", "actions", "integration", "ci/runs", "probes"]
HTMX = {"HX-Request": "true"}


def _page(client: Any, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return unescape(response.content.decode())


def _rows(html: str, table_id: str = "") -> str:
    """The body of the table inside the element `table_id` (or of the page's first table)."""
    part = html[html.index(f'id="{table_id}"') :] if table_id else html
    return part[part.index("<tbody>") : part.index("</tbody>")]


@pytest.fixture
def recorded(suite: dict[str, Any]) -> dict[str, Any]:
    """Volcano passed quota-hit then failed it (two results in one cell), failed real-job;
    Slurm (a second candidate) needs integration on cross-tenant, recorded by bob."""
    quota, job, tenant = suite["actions"]
    volcano = suite["volcano"]
    slurm = CandidateFactory(project=suite["alpha"], solution_key="slurm", slug="slurm")
    record = services.result_record
    record(candidate=volcano, action=quota, outcome="passed", actor=None, note="first try")
    record(
        candidate=volcano,
        action=quota,
        outcome="failed",
        failure_cause="quota ignored",
        change_reason="rerun",
        actor=None,
    )
    record(candidate=volcano, action=job, outcome="failed", failure_cause="OOM", actor=None)
    record(
        candidate=slurm,
        action=tenant,
        outcome="needs_integration",
        integration_what="LDAP groups",
        integration_owner_team="ops",
        integration_effort_days=Decimal(3),
        actor=suite["bob"],
    )
    return {**suite, "slurm": slurm}


def test_every_result_is_listed_newest_first_and_filters_narrow_it(recorded, login) -> None:
    client = login(recorded["bob"])
    rows = _rows(_page(client, "/projects/alpha/results/"), "results-table")
    assert rows.count("<tr>") == 4  # the earlier result of a cell is listed too
    assert rows.index("LDAP groups") < rows.index("OOM") < rows.index("first try")
    failed = _rows(_page(client, "/projects/alpha/results/?outcome=failed"), "results-table")
    assert failed.count("<tr>") == 2 and "quota ignored" in failed and "OOM" in failed
    slurm = _rows(_page(client, "/projects/alpha/results/?candidate=slurm"), "results-table")
    assert slurm.count("<tr>") == 1 and "LDAP groups" in slurm
    by_bob = f"/projects/alpha/results/?by={recorded['bob'].pk}"
    assert _rows(_page(client, by_bob), "results-table").count("<tr>") == 1
    requirement = recorded["requirement"].pk
    scenario = f"/projects/alpha/results/?requirement={requirement}&scenario=real_task"
    only_job = _rows(_page(client, scenario), "results-table")
    assert only_job.count("<tr>") == 1 and "OOM" in only_job


def test_the_results_table_sorts_and_keeps_the_filters_in_its_links(recorded, login) -> None:
    client = login(recorded["bob"])
    html = _page(client, "/projects/alpha/results/?outcome=failed&sort=action")
    rows = _rows(html, "results-table")
    assert rows.index("quota ignored") < rows.index("OOM")  # the suite's order of actions
    assert 'aria-sort="ascending"' in html
    # The header offers the reverse and keeps the filter; the chip removes the filter only.
    assert 'href="/projects/alpha/results/?outcome=failed&sort=-action"' in html
    assert 'href="/projects/alpha/results/?sort=action"' in html
    assert "Outcome: Failed" in html and "Showing 1–2 of 2" in html
    reverse = _rows(_page(client, "/projects/alpha/results/?outcome=failed&sort=-action"))
    assert reverse.index("OOM") < reverse.index("quota ignored")


def test_results_are_paged_with_a_choice_of_rows_per_page(recorded, login) -> None:
    client = login(recorded["bob"])
    html = _page(client, "/projects/alpha/results/?per_page=1&page=2")
    assert _rows(html, "results-table").count("<tr>") == 1
    assert "Showing 2–2 of 4" in html
    assert 'href="/projects/alpha/results/?per_page=1&page=3"' in html
    assert 'aria-current="page">2<' in html
    assert '<option value="1" selected>1</option>' in html


@pytest.mark.parametrize("page", LIST_PAGES)
def test_junk_in_the_query_falls_back_and_says_what_was_wrong(recorded, login, page) -> None:
    query = (
        "?sort=%3Cscript%3E&page=abc&per_page=99999&outcome=bogus&candidate=nobody"
        "&requirement=x&results=maybe&team=nobody&effort_min=-1&status=zz&cluster=abc"
        "&posted_from=2026-99-99&source=%00"
    )
    response = login(recorded["bob"]).get(f"/projects/alpha/{page}/{query}")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="notice table-problems" role="alert"' in html
    assert "There is no column “&lt;script&gt;” to sort by" in html
    assert "is not a page number: showing page 1." in html
    assert "At most 200 rows are shown per page" in html
    assert "<script>" not in html.split("</head>", 1)[1]
    if page != "actions":  # a candidate filter on every table but the actions'
        assert "Candidate: Select a valid choice. nobody is not one of the available" in html


@pytest.mark.parametrize("page", LIST_PAGES)
def test_htmx_gets_the_table_alone_and_a_plain_request_the_page(recorded, login, page) -> None:
    client = login(recorded["bob"])
    table_id = {
        "results": "results-table",
        "actions": "actions-table",
        "integration": "gaps-table",
        "ci/runs": "posts-table",
        "probes": "probe-runs-table",
    }[page]
    url = f"/projects/alpha/{page}/?sort=-{'results' if page == 'actions' else 'candidate'}"
    part = client.get(url, headers={**HTMX, "HX-Target": table_id}).content.decode()
    assert part.lstrip().startswith(f'<div id="{table_id}"') and 'class="tabs"' not in part
    whole = client.get(url, headers={**HTMX, "HX-Target": "main"}).content.decode()
    assert 'class="tabs"' in whole and f'id="{table_id}"' in whole
    assert 'class="tabs"' in client.get(url).content.decode()


@pytest.mark.parametrize("page", ["results", "actions"])
def test_outsiders_learn_nothing(recorded, login, page) -> None:
    assert login(recorded["charlie"]).get(f"/projects/alpha/{page}/").status_code == 404
    assert login(recorded["dave"]).get(f"/projects/alpha/{page}/").status_code == 200


def test_actions_table_counts_candidates_with_results_and_filters_on_it(recorded, login) -> None:
    make_actions(recorded["alpha"], [("gpu-count", "real_task")], feature="Inventory")
    client = login(recorded["bob"])
    html = _page(client, "/projects/alpha/actions/?sort=-results")
    rows = _rows(html, "actions-table")
    assert rows.count("<tr>") == 4
    # quota-hit and real-job have Volcano's results, cross-tenant Slurm's, gpu-count none.
    assert rows.index("gpu-count") > rows.index("cross-tenant")
    assert '<td class="num">1</td>' in rows and '<td class="num">0</td>' in rows
    without = _rows(_page(client, "/projects/alpha/actions/?results=no"), "actions-table")
    assert without.count("<tr>") == 1 and "gpu-count" in without
    real = _rows(_page(client, "/projects/alpha/actions/?scenario=real_task&results=yes"))
    assert real.count("<tr>") == 1 and "real-job" in real
    inventory = [r for r in recorded["alpha"].requirements.all() if r.feature == "Inventory"]
    by_requirement = _page(client, f"/projects/alpha/actions/?requirement={inventory[0].pk}")
    assert _rows(by_requirement, "actions-table").count("<tr>") == 1
    assert "Requirement: Inventory" in by_requirement


def test_gaps_filter_by_team_and_effort_and_the_totals_follow(recorded, login) -> None:
    volcano, (quota, job, _tenant) = recorded["volcano"], recorded["actions"]
    for action, team, days in ((quota, "platform", "5"), (job, "platform", "1.5")):
        services.result_record(
            candidate=volcano,
            action=action,
            outcome="needs_integration",
            integration_what=f"exporter for {action.key}",
            integration_owner_team=team,
            integration_effort_days=Decimal(days),
            change_reason="needs work",
            actor=None,
        )
    client = login(recorded["bob"])
    html = _page(client, "/projects/alpha/integration/")
    rows = _rows(html, "every-gap-h")
    assert rows.count("<tr>") == 3 and "<strong>9.5</strong>" in html
    assert rows.index("exporter for quota-hit") < rows.index("LDAP groups")  # largest first
    platform = _page(client, "/projects/alpha/integration/?team=platform&effort_min=2")
    assert _rows(platform, "every-gap-h").count("<tr>") == 1
    assert "<strong>5.0</strong>" in platform and "<strong>9.5</strong>" not in platform
    assert "Owning team: Platform" in platform and "Effort from (days): 2" in platform
    by_team = _rows(_page(client, "/projects/alpha/integration/?sort=team"), "every-gap-h")
    assert by_team.index("exporter for quota-hit") < by_team.index("LDAP groups")


def test_gaps_of_candidates_not_in_play_show_when_asked(recorded, login) -> None:
    Candidate.objects.filter(pk=recorded["slurm"].pk).update(tier=Tier.NOT_APPLICABLE)
    client = login(recorded["bob"])
    html = _page(client, "/projects/alpha/integration/")
    assert "LDAP groups" not in html and "No cell needs integration" in html
    every = _page(client, "/projects/alpha/integration/?all=1")
    assert "LDAP groups" in every and "Candidates: Every candidate, not applicable too" in every


@pytest.fixture
def posts(recorded) -> Any:
    """Two CI runs: nightly-1 posts passes for Volcano, nightly-2 (Volcano's own) breaks
    quota-hit again."""
    client, _token, _raw = token_client(recorded["alpha"])
    rows = [
        {"candidate": "volcano", "action": "quota-hit", "outcome": "passed"},
        {"candidate": "volcano", "action": "real-job", "outcome": "passed"},
    ]
    for run, outcome in (("nightly-1", "passed"), ("nightly-2", "failed")):
        rows[0] = {**rows[0], "outcome": outcome}
        if outcome == "failed":
            rows[0]["failure_cause"] = "quota ignored again"
        named = {"name": f"Nightly {run}"}
        if run == "nightly-2":
            named["candidate"] = "volcano"
        response = post_results(client, "alpha", payload(rows, run=run, **named))
        assert response.status_code == 201, response.content
    return client


def test_ci_posts_filter_by_status_run_and_date(recorded, posts, login) -> None:
    client = login(recorded["bob"])
    html = _page(client, "/projects/alpha/ci/runs/")
    assert _rows(html, "posts-table").count("<tr>") == 2
    regressed = _rows(_page(client, "/projects/alpha/ci/runs/?status=regressed"), "posts-table")
    assert regressed.count("<tr>") == 1 and "nightly-2" in regressed
    named = _rows(_page(client, "/projects/alpha/ci/runs/?run=NIGHTLY-1"), "posts-table")
    assert named.count("<tr>") == 1 and "nightly-1" in named
    today = RunImport.objects.first().posted_at.date().isoformat()  # type: ignore[union-attr]
    dated = _page(client, f"/projects/alpha/ci/runs/?posted_from={today}&posted_to={today}")
    assert _rows(dated, "posts-table").count("<tr>") == 2
    assert f"Posted from: {today}" in dated
    none = _page(client, "/projects/alpha/ci/runs/?posted_to=2000-01-01")
    assert "No post matches these filters." in none
    volcano = _rows(_page(client, "/projects/alpha/ci/runs/?candidate=volcano"), "posts-table")
    assert volcano.count("<tr>") == 1 and "nightly-2" in volcano


def _queries(client: Any, url: str) -> int:
    client.get(url)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_queries_do_not_grow_with_the_rows(recorded, posts, login) -> None:
    client = login(recorded["bob"])
    urls = [
        "/projects/alpha/results/?sort=candidate",
        "/projects/alpha/actions/?sort=-results",
        "/projects/alpha/integration/?sort=team",
        "/projects/alpha/ci/runs/?sort=-regressed",
    ]
    few = {url: _queries(client, url) for url in urls}
    _, more = make_actions(
        recorded["alpha"], [(f"extra-{n}", "real_task") for n in range(12)], feature="More"
    )
    for n, action in enumerate(more):
        for candidate in (recorded["volcano"], recorded["slurm"]):
            services.result_record(
                candidate=candidate,
                action=action,
                outcome="needs_integration",
                integration_what=f"piece {n}",
                integration_owner_team="ops" if n % 2 else "platform",
                integration_effort_days=Decimal(n),
                actor=recorded["bob"],
            )
    rows = [{"candidate": "slurm", "action": a.key, "outcome": "passed"} for a in more]
    for run in range(3):
        post_results(posts, "alpha", payload(rows, run=f"more-{run}"))
    assert {url: _queries(client, url) for url in urls} == few
