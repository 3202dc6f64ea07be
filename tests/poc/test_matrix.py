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
    assert 'class="cell o-not_covered"' in body and "○</span> Not covered" in body


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
