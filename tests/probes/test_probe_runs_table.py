"""The probe runs table on the GPU probes page: filtered by candidate, cluster, source and
status, sorted and paged from the query string, answered to htmx alone."""

from html import unescape
from typing import Any

import pytest

from poc.probes.models import ProbeRun, ProbeSource, ProbeStatus
from poc.probes.services import clusters as cluster_services
from poc.probes.services import probes
from tests.factories import CandidateFactory
from tests.probes.helpers import bundle

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(personas: dict[str, Any]) -> dict[str, Any]:
    """Volcano: an agent run and an upload; Slurm: an agent run that failed, on cluster lab."""
    alpha, volcano = personas["alpha"], personas["volcano"]
    slurm = CandidateFactory(project=alpha, solution_key="slurm", slug="slurm")
    lab = cluster_services.cluster_save(
        project=alpha,
        data=cluster_services.ClusterData(
            name="lab", kind="ssh", candidate=slurm, hosts="127.0.0.1:9", ssh_user="x"
        ),
        secrets={"ssh_password": "not-used"},
        actor=None,
    )

    def ingest(candidate: Any, source: str = ProbeSource.AGENT) -> ProbeRun:
        return probes.probe_ingest_bundle(
            project=alpha, candidate=candidate, bundle=bundle(), actor=None, source=source
        ).run

    agent, upload, failed = ingest(volcano), ingest(volcano, ProbeSource.UPLOAD), ingest(slurm)
    ProbeRun.objects.filter(pk=failed.pk).update(status=ProbeStatus.FAILED, cluster=lab)
    return {**personas, "lab": lab, "agent": agent, "upload": upload, "failed": failed}


def _run_ids(client: Any, query: str = "") -> list[int]:
    response = client.get(f"/projects/alpha/probes/{query}")
    assert response.status_code == 200
    html = unescape(response.content.decode())
    table = html[html.index('id="probe-runs-table"') :]
    body = table[table.index("<tbody>") : table.index("</tbody>")]
    return [int(part.split(" ", 1)[0]) for part in body.split(">#")[1:]]


def test_probe_runs_newest_first_and_filtered(runs, login) -> None:
    client = login(runs["bob"])
    agent, upload, failed = runs["agent"].pk, runs["upload"].pk, runs["failed"].pk
    assert _run_ids(client) == [failed, upload, agent]
    assert _run_ids(client, "?source=upload") == [upload]
    assert _run_ids(client, "?status=failed") == [failed]
    assert _run_ids(client, f"?cluster={runs['lab'].pk}") == [failed]
    assert _run_ids(client, "?candidate=volcano&sort=run") == [agent, upload]
    assert _run_ids(client, "?candidate=volcano&status=failed") == []


def test_the_filters_show_and_junk_is_named(runs, login) -> None:
    client = login(runs["bob"])
    html = unescape(client.get("/projects/alpha/probes/?status=failed").content.decode())
    assert "Status: Failed" in html and "Showing 1–1 of 1" in html
    assert 'href="/projects/alpha/probes/"' in html  # clear all: back to every run
    junk = client.get("/projects/alpha/probes/?cluster=999999&source=ftp&page=7")
    text = unescape(junk.content.decode())
    assert junk.status_code == 200
    assert "Cluster: Select a valid choice. 999999 is not one of the available choices." in text
    assert "Source: Select a valid choice. ftp is not one of the available choices." in text
    assert "There is no page 7: showing the last page, 1." in text
    assert "Upload probe output" in text  # the rest of the page is still there


def test_paged_and_answered_to_htmx_alone(runs, login) -> None:
    client = login(runs["bob"])
    assert _run_ids(client, "?per_page=1&page=2") == [runs["upload"].pk]
    part = client.get(
        "/projects/alpha/probes/?per_page=1&page=3",
        headers={"HX-Request": "true", "HX-Target": "probe-runs-table"},
    ).content.decode()
    assert part.lstrip().startswith('<div id="probe-runs-table"')
    assert "Upload probe output" not in part and f"#{runs['agent'].pk} ·" in part


def test_queries_do_not_grow_with_filtered_runs(runs, login, django_assert_max_num_queries) -> None:
    client = login(runs["bob"])
    url = "/projects/alpha/probes/?candidate=volcano&sort=-gpus"
    with django_assert_max_num_queries(40) as few:
        client.get(url)
    for _ in range(4):
        probes.probe_ingest_bundle(
            project=runs["alpha"], candidate=runs["volcano"], bundle=bundle(), actor=None
        )
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get(url)
