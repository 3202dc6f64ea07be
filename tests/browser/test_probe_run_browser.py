"""A cluster run's page in a real Chromium, at a phone's width: what the cluster said (long
node lists, a refusal's words) wraps or scrolls inside its tables, never the page."""

import pytest
from playwright.sync_api import expect

from poc.models import ProbeRun
from poc.probes.connectors import slurm
from poc.services import clusters as services
from tests.poc.clusters.test_cluster_facts_page import PARTITIONS, SCONTROL

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_what_the_cluster_said_fits_a_phone(logged_in_page, live_server, personas) -> None:
    cluster = services.cluster_save(
        project=personas["alpha"],
        data=services.ClusterData(
            name="hpc",
            kind="slurm_rest",
            candidate=personas["volcano"],
            api_url="https://slurm.example.test:6820",
            slurm_user="probe",
            controlled_failures=True,
        ),
        secrets={"jwt": "jwt-secret-9f3"},
        actor=None,
    )
    run = services.probe_run_start(cluster=cluster, actor=None)
    many = PARTITIONS.replace(
        "Nodes=g[01-02]", "Nodes=" + ",".join(f"gpu{n:03}" for n in range(60))
    )
    facts = slurm.facts_from_cli(
        {
            slurm.SCONTROL_NODES_COMMAND: SCONTROL,
            slurm.SCONTROL_PARTITIONS_COMMAND: many,
            slurm.SQUEUE_PENDING_COMMAND: "Resources\n",
            slurm.VERSION_COMMAND: "slurm 22.05.8\n",
        }
    )
    refusal = slurm.parse_over_quota_output(
        1,
        "",
        "sbatch: error: Batch job submission failed: Requested node configuration is not "
        "available;" + "x" * 300 + "\n",
        seconds=0.4,
    )
    kept = {k: v for k, v in facts.items() if k not in ("raw", "gpu_nodes")}
    kept["controlled_failures"] = {"scenarios": [refusal]}
    ProbeRun.objects.filter(pk=run.pk).update(status="done", cluster_facts=kept)
    page = logged_in_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/projects/alpha/probes/{run.pk}/")
    section = page.locator("#cluster-facts")
    expect(section).to_contain_text("What the cluster said")
    expect(section).to_contain_text("Requested node configuration is not available")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
