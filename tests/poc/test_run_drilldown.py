"""A CI run drills down to what each post did: the cells it made new, regressed, recovered or
changed (with the outcome before), and the testcases that named no action."""

import importlib
import re

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from poc import services
from poc.models import (
    Change,
    Result,
    RunImport,
)
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db

JUNIT = b"""<testsuite name="nightly">
  <testcase name="quota-hit" classname="gpu.quota"/>
  <testcase name="gpu-burn" classname="gpu.stress"><failure message="Xid 79"/></testcase>
</testsuite>"""


def _row(action: str, outcome: str, **extra: str) -> dict[str, str]:
    return {"candidate": "volcano", "action": action, "outcome": outcome, **extra}


def _two_posts(suite) -> tuple[object, int]:
    client, _, _ = token_client(suite["alpha"])
    first = [
        _row("quota-hit", "passed"),
        _row("real-job", "failed", failure_cause="stalled at step 40"),
        _row("cross-tenant", "not_covered"),
    ]
    assert post_results(client, "alpha", payload(first, run="nightly-7")).status_code == 201
    second = [
        _row("quota-hit", "failed", failure_cause="quota not enforced"),
        _row("real-job", "passed"),
        _row("cross-tenant", "not_covered"),
    ]
    response = post_results(client, "alpha", payload(second, run="nightly-7"))
    assert response.status_code == 201
    return client, response.json()["run"]["id"]


def test_each_result_keeps_its_post_and_what_it_did(suite) -> None:
    _client, run_id = _two_posts(suite)
    first, second = RunImport.objects.filter(run_id=run_id).order_by("posted_at", "pk")
    assert {r.action.key: r.change for r in first.results.all()} == {
        "quota-hit": Change.NEW,
        "real-job": Change.NEW,
        "cross-tenant": Change.NEW,
    }
    assert {r.action.key: r.change for r in second.results.all()} == {
        "quota-hit": Change.REGRESSED,
        "real-job": Change.RECOVERED,
        "cross-tenant": Change.UNCHANGED,
    }
    assert (second.regressed, second.recovered, second.unchanged) == (1, 1, 1)


def test_the_run_page_lists_each_post_by_change(suite, login) -> None:
    client, run_id = _two_posts(suite)
    client.post(
        "/api/v1/projects/alpha/junit/?candidate=volcano&run=nightly-7",
        JUNIT,
        content_type="application/xml",
    )
    url = reverse("poc:run_detail", args=["alpha", run_id])
    page = login(suite["bob"]).get(url)
    assert page.status_code == 200
    html = page.content.decode()
    newest = RunImport.objects.filter(run_id=run_id).order_by("-posted_at", "-pk")
    junit, second, first = newest
    # Newest first; the regression names the cell, links to it, and shows the outcome before.
    assert html.index(f'id="post-{junit.pk}"') < html.index(f'id="post-{second.pk}"')
    regressed = html[html.index(f'id="post-{second.pk}-regressed"') :]
    regressed = regressed[: regressed.index("</details>")]
    assert "quota-hit" in regressed and "quota not enforced" in regressed
    assert reverse("poc:cell", args=["alpha", "volcano", suite["actions"][0].pk]) in regressed
    assert re.search(r"Passed.*Failed", regressed, re.S)  # before, then now
    # Candidates by product, never by slug.
    assert f"<td>{suite['volcano'].solution.name}" in regressed
    assert "<td>volcano</td>" not in regressed
    assert f"Candidate: {suite['volcano'].solution.name}." in html
    # A run without a name of its own is named once, by its key.
    assert html.count("nightly-7") >= 1 and '<code class="small">nightly-7</code>' not in html
    recovered = html[html.index(f'id="post-{second.pk}-recovered"') :]
    assert "real-job" in recovered[: recovered.index("</details>")]
    assert f'id="post-{first.pk}-new"' in html
    # The JUnit post's testcase that named no action is listed with its class.
    unmapped = html[html.index(f'id="post-{junit.pk}-unmapped"') :]
    assert "gpu-burn" in unmapped and "gpu.stress" in unmapped
    # The runs list links the counts to these groups.
    runs = login(suite["bob"]).get(reverse("poc:runs", args=["alpha"])).content.decode()
    assert f"{url}#post-{second.pk}-regressed" in runs
    assert f"{url}#post-{junit.pk}-unmapped" in runs
    assert '<code class="small">nightly-7</code>' not in runs


def test_the_page_reads_a_fixed_number_of_queries_whatever_the_rows(suite, login) -> None:
    client, run_id = _two_posts(suite)
    browser = login(suite["bob"])
    url = reverse("poc:run_detail", args=["alpha", run_id])
    browser.get(url)
    with CaptureQueriesContext(connection) as few:
        browser.get(url)
    _, more_actions = services_make_actions(suite, 40)
    rows = [_row(a.key, "failed", failure_cause="x") for a in more_actions]
    post_results(client, "alpha", payload(rows, run="nightly-7"))
    post_results(
        client, "alpha", payload([_row(a.key, "passed") for a in more_actions], run="nightly-7")
    )
    with CaptureQueriesContext(connection) as many:
        browser.get(url)
    # Two more posts add their own group queries; the rows inside them add none.
    assert len(many) <= len(few) + 2 * 2


def services_make_actions(suite, count: int):
    from tests.factories import make_actions

    return make_actions(suite["alpha"], [(f"extra-{n}", "real_task") for n in range(count)])


def test_a_run_of_another_project_or_for_a_stranger_is_404(suite, login) -> None:
    _client, run_id = _two_posts(suite)
    assert (
        login(suite["charlie"]).get(reverse("poc:run_detail", args=["beta", run_id])).status_code
        == 404
    )
    assert login(suite["charlie"]).get(
        reverse("poc:run_detail", args=["alpha", run_id])
    ).status_code in (403, 404)


def test_posts_stored_before_are_linked_by_the_migration(suite) -> None:
    """Results posted before posts kept their results: the migration gives each result its
    post (by time, within its run) and what it did to its cell."""
    _client, run_id = _two_posts(suite)
    first, second = RunImport.objects.filter(run_id=run_id).order_by("posted_at", "pk")
    Result.objects.filter(run_id=run_id).update(run_import=None, change="")
    services.result_record(
        candidate=suite["volcano"],
        action=suite["actions"][0],
        outcome="passed",
        change_reason="rerun by hand",
        actor=None,
    )  # by hand: no run, never linked
    migration = importlib.import_module("poc.migrations.0007_result_run_import")
    migration.link_posts(apps, None)
    assert {r.action.key: r.change for r in first.results.all()} == dict.fromkeys(
        ("quota-hit", "real-job", "cross-tenant"), Change.NEW
    )
    assert {r.action.key: r.change for r in second.results.all()} == {
        "quota-hit": Change.REGRESSED,
        "real-job": Change.RECOVERED,
        "cross-tenant": Change.UNCHANGED,
    }
    assert Result.objects.filter(run=None, run_import=None, change="").count() == 1
