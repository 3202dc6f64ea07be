"""The matrix and comparison pages: cells, counts, filters, and queries that do not grow."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluations import services as evaluation_services
from poc import selectors, services
from tests.factories import CandidateFactory

pytestmark = pytest.mark.django_db


def _record(suite) -> None:
    volcano, (quota, job, tenant) = suite["volcano"], suite["actions"]
    services.result_record(candidate=volcano, action=quota, outcome="passed", actor=None)
    services.result_record(
        candidate=volcano, action=job, outcome="failed", failure_cause="NCCL timeout", actor=None
    )
    services.result_record(
        candidate=volcano,
        action=tenant,
        outcome="needs_integration",
        integration_what="LDAP groups",
        integration_owner_team="platform",
        integration_effort_days=Decimal("4.5"),
        actor=None,
    )


def test_matrix_cells_and_totals(suite, login) -> None:
    _record(suite)
    CandidateFactory(project=suite["alpha"], solution_key="slurm", tier="alternative")
    matrix = selectors.matrix_for_project(suite["alpha"])
    assert [c.slug for c in matrix.candidates] == ["volcano", "slurm"]
    totals = {t.candidate.slug: t for t in matrix.totals}
    assert totals["volcano"].counts == {
        "passed": 1,
        "failed": 1,
        "not_covered": 0,
        "needs_integration": 1,
    }
    assert totals["volcano"].coverage_percent == 100
    assert totals["slurm"].counts["not_covered"] == 3
    body = login(suite["bob"]).get(reverse("poc:matrix", kwargs={"slug": "alpha"})).content.decode()
    assert 'id="cell-volcano-' in body
    # colour, icon and word together
    assert 'class="cell o-failed"' in body and "✗</span> Failed" in body
    # A cell nobody recorded anything for is not a result saying "not covered".
    assert 'class="cell o-not_covered untried"' in body and "·</span> no result yet" in body
    assert 'aria-label="Slurm · quota-hit: no result yet"' in body
    services.result_record(
        candidate=totals["slurm"].candidate,
        action=suite["actions"][0],
        outcome="not_covered",
        note="no second tenant in the lab",
        actor=None,
    )
    body = login(suite["bob"]).get(reverse("poc:matrix", kwargs={"slug": "alpha"})).content.decode()
    assert 'class="cell o-not_covered"' in body and "○</span> Not covered" in body
    assert body.count('o-not_covered untried"') == 2  # the two cells still untouched


def test_matrix_filters(suite, login) -> None:
    _record(suite)
    client = login(suite["bob"])
    url = reverse("poc:matrix", kwargs={"slug": "alpha"})
    failed = client.get(url, {"outcome": "failed"}, headers={"HX-Request": "true"}).content.decode()
    assert failed.lstrip().startswith('<div id="matrix"')
    assert "real-job" in failed and "quota-hit" not in failed
    by_scenario = client.get(url, {"scenario": "permission_overreach"}).content.decode()
    assert "cross-tenant" in by_scenario and "real-job" not in by_scenario
    assert "No acceptance action matches" in client.get(url, {"team": "business"}).content.decode()


def test_comparison_summary(suite, login) -> None:
    _record(suite)
    services.responsibility_set(
        candidate=suite["volcano"],
        area="deployment",
        party="vendor",
        person="Vendor SE",
        actor=None,
    )
    summary = selectors.comparison_for_project(suite["alpha"])[0]
    assert [c.action.key for c in summary.failed] == ["real-job"]
    assert summary.integration_effort == Decimal("4.5")
    assert len(summary.responsibility_gaps) == 10
    body = (
        login(suite["bob"])
        .get(reverse("poc:comparison", kwargs={"slug": "alpha"}))
        .content.decode()
    )
    assert "NCCL timeout" in body
    assert "4.5 person-days in total" in body
    assert "10 gaps" in body
    for area in ("deployment", "training"):  # edit and assign links, built from one prefix
        assert reverse("poc:responsibility_edit", args=["alpha", "volcano", area]) in body


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("page", ["poc:matrix", "poc:comparison"])
def test_query_count_is_the_same_at_two_sizes(suite, login, page) -> None:
    _record(suite)
    client = login(suite["bob"])
    url = reverse(page, kwargs={"slug": "alpha"})
    small = _queries(client, url)
    for key in ("slurm", "runai", "k8s-gpu-operator"):
        candidate = CandidateFactory(project=suite["alpha"], solution_key=key)
        for action in suite["actions"]:
            services.result_record(
                candidate=candidate, action=action, outcome="failed", failure_cause="x", actor=None
            )
            services.responsibility_set(
                candidate=candidate, area="training", party="vendor", person="p", actor=None
            )
    requirement = evaluation_services.requirement_create(
        project=suite["alpha"], actor=None, feature="More", dimension="operations", owner_team="ops"
    )
    for n in range(10):
        evaluation_services.action_create(
            requirement=requirement,
            actor=None,
            key=f"more-{n}",
            question="?",
            pass_criterion="ok",
            scenario="monitoring_gap",
        )
    assert _queries(client, url) == small


def _many_actions(suite, count: int) -> list:
    requirement = evaluation_services.requirement_create(
        project=suite["alpha"], actor=None, feature="Load", dimension="operations", owner_team="ops"
    )
    return [
        evaluation_services.action_create(
            requirement=requirement,
            actor=None,
            key=f"load-{n:02d}",
            question=f"load {n}?",
            pass_criterion="ok",
            scenario="real_task",
        )
        for n in range(count)
    ]


def test_the_matrix_shows_a_page_of_rows_and_totals_for_all(suite, login, monkeypatch) -> None:
    """Rows come a page at a time (in dimension, requirement and action order); the totals, the
    row count and the filters cover every row whatever the page."""
    monkeypatch.setattr(selectors.matrix, "MATRIX_ROWS_PER_PAGE", 4)
    _record(suite)
    load = _many_actions(suite, 6)  # 3 + 6 actions: three pages of four
    for action in load[:2]:
        services.result_record(
            candidate=suite["volcano"],
            action=action,
            outcome="failed",
            failure_cause="x",
            actor=None,
        )
    first = selectors.matrix_for_project(suite["alpha"])
    third = selectors.matrix_for_project(suite["alpha"], page=3)
    assert first.row_count == third.row_count == 9
    assert first.page is not None and first.page.paginator.num_pages == 3
    assert [t.counts for t in first.totals] == [t.counts for t in third.totals]
    assert first.totals[0].counts == {
        "passed": 1,
        "failed": 3,
        "not_covered": 4,
        "needs_integration": 1,
    }

    def keys(matrix) -> list[str]:
        return [row.action.key for g in matrix.groups for r in g.requirements for row in r.rows]

    # Tenancy (the suite's requirement) comes before operations (the load), as the groups read.
    assert keys(first) == ["quota-hit", "real-job", "cross-tenant", "load-00"]
    assert keys(third) == ["load-05"]
    everything = selectors.matrix_for_project(suite["alpha"], page=None)
    assert everything.page is None and len(keys(everything)) == 9
    # Filters apply before paging: the failed rows fit on one page.
    failed = selectors.matrix_for_project(suite["alpha"], selectors.MatrixFilters(outcome="failed"))
    assert keys(failed) == ["real-job", "load-00", "load-01"] and failed.page is None
    not_covered = selectors.matrix_for_project(
        suite["alpha"], selectors.MatrixFilters(outcome="not_covered"), page=None
    )
    assert keys(not_covered) == [f"load-{n:02d}" for n in range(2, 6)]
    # The page links keep the filters and move by page; a page past the end shows the last.
    client = login(suite["bob"])
    url = reverse("poc:matrix", kwargs={"slug": "alpha"})
    body = client.get(url, {"scenario": "real_task", "page": "1"}).content.decode()
    assert "rows 1–4 of 7" in body and "?scenario=real_task&amp;page=2" in body
    last = client.get(url, {"page": "99"}).content.decode()
    assert "load-05" in last and "rows 9–9 of 9" in last


def test_the_matrix_reads_the_same_queries_on_every_page(suite, login, monkeypatch) -> None:
    monkeypatch.setattr(selectors.matrix, "MATRIX_ROWS_PER_PAGE", 4)
    _record(suite)
    _many_actions(suite, 6)
    client = login(suite["bob"])
    url = reverse("poc:matrix", kwargs={"slug": "alpha"})
    counts = {_queries(client, f"{url}?page={page}") for page in (1, 2, 3)}
    counts.add(_queries(client, f"{url}?page=2&outcome=not_covered"))
    assert len(counts) == 1


def test_the_comparison_lists_the_first_failures_and_counts_them_all(
    suite, login, monkeypatch
) -> None:
    monkeypatch.setattr(selectors.comparison, "COMPARISON_LIST_LIMIT", 2)
    _record(suite)
    load = _many_actions(suite, 4)
    for n, action in enumerate(load):
        services.result_record(
            candidate=suite["volcano"],
            action=action,
            outcome="failed",
            failure_cause=f"cause {n}",
            actor=None,
        )
    (overview,) = selectors.comparison_overview(suite["alpha"])
    assert overview.counts["failed"] == 5 and overview.more_failed == 3
    # The first in suite order: the suite's own failure, then the load's first.
    assert [c.action.key for c in overview.failed] == ["real-job", "load-00"]
    assert overview.integration_effort == Decimal("4.5")
    body = login(suite["bob"]).get(reverse("poc:comparison", args=["alpha"])).content.decode()
    assert "Failed (5)" in body and "cause 0" in body and "cause 1" not in body
    assert "…and 3 more: the matrix lists every failure." in body
    assert "?outcome=failed" in body


def test_the_side_by_side_rows_come_a_page_at_a_time(suite, login, monkeypatch) -> None:
    monkeypatch.setattr(selectors.matrix, "MATRIX_ROWS_PER_PAGE", 4)
    _record(suite)
    _many_actions(suite, 6)
    first = selectors.side_by_side(suite["alpha"])
    last = selectors.side_by_side(suite["alpha"], page=3)
    assert [r.key for g in first.requirements for r in g.rows] == [
        "quota-hit",
        "real-job",
        "cross-tenant",
        "load-00",
    ]
    assert [r.key for g in last.requirements for r in g.rows] == ["load-05"]
    assert first.summaries[0].counts == last.summaries[0].counts  # whole-suite counts
    client = login(suite["bob"])
    url = reverse("poc:comparison", args=["alpha"])
    body = client.get(url, {"columns": "1", "page": "2"}).content.decode()
    assert "rows 5–8 of 9" in body and "columns=1&amp;page=3" in body
    counts = {_queries(client, f"{url}?columns=1&page={p}") for p in (1, 2, 3)}
    assert max(counts) - min(counts) <= 1  # a page without a failure reads no result text


def test_a_large_comparison_opens_its_lists_on_demand(suite, login, monkeypatch) -> None:
    monkeypatch.setattr(selectors.comparison, "COMPARISON_INLINE_CELLS", 2)
    _record(suite)
    client = login(suite["bob"])
    body = client.get(reverse("poc:comparison", args=["alpha"])).content.decode()
    failed_url = reverse("poc:comparison_list", args=["alpha", "volcano", "failed"])
    assert f'hx-get="{failed_url}"' in body and "NCCL timeout" not in body
    assert "4.5 person-days in total" in body  # counts and effort stay on the page
    listed = client.get(failed_url, headers={"HX-Request": "true"}).content.decode()
    assert "NCCL timeout" in listed and "real-job" in listed and "<html" not in listed
    page = client.get(
        reverse("poc:comparison_list", args=["alpha", "volcano", "needs_integration"])
    ).content.decode()
    assert "LDAP groups" in page and "<html" in page  # its own page without script
    for bad in (("volcano", "passed"), ("nobody", "failed")):
        assert client.get(reverse("poc:comparison_list", args=["alpha", *bad])).status_code == 404
    assert login(suite["charlie"]).get(failed_url).status_code in (403, 404)


def test_each_cell_keeps_its_latest_effort(suite) -> None:
    """The comparison sums the effort kept on each cell: it follows the latest result, from
    the form and from CI alike, and the migration fills it for cells stored before."""
    import importlib

    from django.apps import apps

    from poc.models import (
        ResultCell,
    )
    from tests.poc.api_helpers import payload, post_results, token_client

    _record(suite)
    tenant = suite["actions"][2]
    cell = ResultCell.objects.get(action=tenant)
    assert cell.integration_effort_days == Decimal("4.5")
    client, _, _ = token_client(suite["alpha"])
    row = {
        "candidate": "volcano",
        "action": tenant.key,
        "outcome": "needs_integration",
        "integration": {"what": "SSO bridge", "owner_team": "platform", "effort_days": "7"},
    }
    assert post_results(client, "alpha", payload([row])).status_code == 201
    cell.refresh_from_db()
    assert cell.integration_effort_days == Decimal("7.0")
    assert selectors.comparison_overview(suite["alpha"])[0].integration_effort == Decimal("7.0")
    services.result_record(
        candidate=suite["volcano"],
        action=tenant,
        outcome="passed",
        change_reason="integrated",
        actor=None,
    )
    cell.refresh_from_db()
    assert cell.integration_effort_days is None
    assert selectors.comparison_overview(suite["alpha"])[0].integration_effort == Decimal(0)
    # Cells stored before they kept a copy: the migration reads it from their result.
    services.result_record(
        candidate=suite["volcano"],
        action=tenant,
        outcome="needs_integration",
        integration_what="SSO bridge",
        integration_owner_team="platform",
        integration_effort_days=Decimal("2.5"),
        change_reason="regressed",
        actor=None,
    )
    ResultCell.objects.update(integration_effort_days=None)
    importlib.import_module("poc.migrations.0008_cell_integration_effort").copy_effort(apps, None)
    cell.refresh_from_db()
    assert cell.integration_effort_days == Decimal("2.5")
