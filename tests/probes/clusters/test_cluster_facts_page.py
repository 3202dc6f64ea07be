"""The run page shows what a cluster run read about the cluster itself: the products found,
partitions, node states, pending reasons, GPU quotas, the controlled failures with the refusal
each one met, and what could not be checked; in English and in Chinese."""

import json
from typing import Any

import pytest
from django.urls import reverse

from poc.probes import present
from poc.probes.connectors import kubernetes as kube
from poc.probes.connectors import slurm
from poc.probes.services import clusters as services
from tests.fakes.k8s_api import FakeKubeApi, cluster_policy, gpu_quota, operand_daemonsets
from tests.poc.api_helpers import token_client
from tests.probes.clusters.test_k8s_slurm_runs import NS, TOKEN, kube_cluster

pytestmark = pytest.mark.django_db


def _page(client: Any, run: Any, language: str = "en") -> str:
    response = client.get(
        reverse("poc:probe_run", args=["alpha", run.pk]), HTTP_ACCEPT_LANGUAGE=language
    )
    assert response.status_code == 200
    return response.content.decode()


def _section(page: str) -> str:
    start = page.index('id="cluster-facts"')
    return page[start : page.index("</section>", start)]


def test_a_kubernetes_run_shows_products_quotas_refusals_and_what_it_could_not_read(
    gpu_suite, login, monkeypatch
) -> None:
    monkeypatch.setattr(kube.failure, "POLL_SECONDS", 0.01)
    with FakeKubeApi(token=TOKEN) as api:
        api.add_fixture("node-2x-tesla-t4.yaml")
        api.add(cluster_policy("ready"), *operand_daemonsets(), gpu_quota(NS, 8))
        api.forbid("/apis/nvidia.com/v1/clusterpolicies")
        cluster = kube_cluster(gpu_suite, api)
        run = services.probe_run_start(cluster=cluster, actor=None)
        services.probe_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    section = _section(_page(login(gpu_suite["bob"]), run))
    assert "What the cluster said" in section
    # The operator's ClusterPolicy answered 403: the product is "could not check", never "no".
    row = section[section.index("NVIDIA GPU Operator") :]
    row = row[: row.index("</tr>")]
    assert "could not check" in row and "403" in row
    assert "Volcano" in section  # looked for, not installed
    # The namespace's quota, and both scenarios refused as they should be, with the words the
    # scheduler and the quota admission used.
    assert "gpu-quota" in section and "requests.nvidia.com/gpu" in section
    assert section.count("refused cleanly") == 2 and "not refused cleanly" not in section
    assert "Insufficient nvidia.com/gpu" in section
    assert "exceeded quota" in section
    assert "Could not check" in section and "clusterpolicies" in section
    assert TOKEN not in section
    # The same facts, as data, for a pipeline that reads the run through the API.
    reader, _token, _raw = token_client(gpu_suite["alpha"], scopes=("read",))
    body = reader.get(f"/api/v1/probes/{run.pk}/").json()
    assert body["cluster"] == run.cluster_facts
    scenarios = body["cluster"]["controlled_failures"]["scenarios"]
    assert [s["clean"] for s in scenarios] == [True, True]
    assert TOKEN not in json.dumps(body)
    chinese = _section(_page(login(gpu_suite["bob"]), run, "zh-hans"))
    assert "What the cluster said" not in chinese and "Controlled failures" not in chinese


SCONTROL = (
    # `scontrol -d show node -o` of Slurm 22.05, one node draining with a reason, one idle.
    "NodeName=g01 Arch=x86_64 CPUTot=64 Gres=gpu:h200:8(S:0-1) GresUsed=gpu:h200:2(IDX:0-1) "
    "RealMemory=1000000 State=MIXED+DRAIN Partitions=gpu Reason=fan replaced [root@2026-12-01]\n"
    "NodeName=g02 Arch=x86_64 CPUTot=64 Gres=gpu:h200:8(S:0-1) GresUsed=gpu:h200:0(IDX:N/A) "
    "RealMemory=1000000 State=IDLE Partitions=gpu\n"
)
PARTITIONS = (
    "PartitionName=gpu AllowGroups=ALL Default=YES Nodes=g[01-02] State=UP TotalCPUs=128 "
    "TotalNodes=2 TRES=cpu=128,mem=2000000M,node=2,billing=128,gres/gpu=16\n"
)


def slurm_run(
    suite: dict[str, Any], *, partitions: str = PARTITIONS, pending: str = "", refusal: str = ""
) -> Any:
    """A finished slurmrestd run of candidate volcano holding the cluster facts read from these
    outputs and one refused over-quota job (9 GPUs asked, as slurmrestd's submit reports)."""
    cluster = services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(
            name="hpc",
            kind="slurm_rest",
            candidate=suite["volcano"],
            api_url="https://slurm.example.test:6820",
            slurm_user="probe",
            controlled_failures=True,
        ),
        secrets={"jwt": "jwt-secret-9f3"},
        actor=None,
    )
    run = services.probe_run_start(cluster=cluster, actor=None)
    facts = slurm.facts_from_cli(
        {
            slurm.SCONTROL_NODES_COMMAND: SCONTROL,
            slurm.SCONTROL_PARTITIONS_COMMAND: partitions,
            slurm.SQUEUE_PENDING_COMMAND: pending,
            slurm.VERSION_COMMAND: "slurm 22.05.8\n",
        }
    )
    outcome = slurm.parse_over_quota_output(
        1,
        "",
        "sbatch: error: Batch job submission failed: Requested node configuration is not "
        "available" + refusal + "\n",
        seconds=0.4,
    )
    outcome["gpus_requested"] = 9
    kept = {k: v for k, v in facts.items() if k not in ("raw", "gpu_nodes")}
    kept["controlled_failures"] = {"scenarios": [outcome]}
    type(run).objects.filter(pk=run.pk).update(status="done", cluster_facts=kept)
    run.refresh_from_db()
    return run


def test_a_slurm_run_shows_partitions_node_states_pending_reasons_and_the_refusal(
    gpu_suite, login
) -> None:
    run = slurm_run(gpu_suite, pending="Resources\nResources\nPriority\n")
    section = _section(_page(login(gpu_suite["bob"]), run))
    assert "Slurm version" in section and "22.05.8" in section
    assert "idle 1 · mixed 1 (DRAIN 1)" in section
    assert "Resources 2 · Priority 1" in section
    assert "g[01-02]" in section and ">16<" in section and "(default)" in section
    assert "refused cleanly" in section and "Requested node configuration is not" in section
    assert "9 GPUs asked" in section
    # sinfo was not run: said, not hidden.
    assert "sinfo" in section


def test_a_run_that_read_no_cluster_shows_no_cluster_section() -> None:
    assert present.cluster_summary({}) is None
    assert present.cluster_summary(None) is None
    # Facts stored by an earlier version, with keys missing or of another type, still show.
    summary = present.cluster_summary({"server_version": "v1.29.3", "products": "?"})
    assert summary is not None
    assert (summary["version"], summary["products"], summary["scenarios"]) == ("v1.29.3", [], [])


def test_the_cluster_s_own_warnings_are_shown(gpu_suite, login) -> None:
    """A Slurm cluster whose nodes run another version than its controller says so on the run
    page, not only in the stored facts."""
    from poc.probes.models import ProbeRun

    warning = "gpu02 runs slurmd 23.02.7, the controller 23.11.4"
    run = ProbeRun.objects.create(
        project=gpu_suite["alpha"],
        candidate=gpu_suite["alpha"].candidates.get(slug="volcano"),
        source="slurm",
        status="done",
        parser_version="4",
        facts_format="test",
        cluster_facts={
            "slurm_version": "23.11.4",
            "warnings": [warning],
            "nodes": [],
            "controlled_failures": {
                "scenarios": [
                    {"name": "more_gpus_than_any_node", "clean": True, "gpus_requested": 1}
                ]
            },
        },
    )
    section = _section(_page(login(gpu_suite["bob"]), run))
    assert "Warnings" in section and warning in section
    assert "1 GPU asked" in section and "1 GPUs" not in section
    assert "警告" in _section(_page(login(gpu_suite["bob"]), run, "zh-hans"))
    chinese = _section(_page(login(gpu_suite["bob"]), run, "zh-hans"))
    assert warning in chinese
