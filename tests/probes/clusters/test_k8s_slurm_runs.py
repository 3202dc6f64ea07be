"""Kubernetes and Slurm clusters probed end to end: the run stores the GPU nodes and what the
scheduler said, the controlled failures run and clean up, and the bound actions get results.
Kubernetes is the fake API server replaying recorded objects; Slurm is real (tests/slurm_rig)."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from poc.models import (
    ResultCell,
)
from poc.probes import selectors
from poc.probes.connectors import kubernetes as kube
from poc.probes.models import (
    ProbeNode,
    ProbeOutput,
)
from poc.probes.services import clusters as services
from tests.fakes.k8s_api import FakeKubeApi, cluster_policy, gpu_quota, operand_daemonsets
from tests.fakes.web_page import html_page_server
from tests.slurm_rig import SlurmRig, missing_binaries, slurm_rig

pytestmark = pytest.mark.django_db
TOKEN = "probe-token-7c1d"
NS = "gpu-probe"


@pytest.fixture
def kube_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKubeApi]:
    monkeypatch.setattr(kube.failure, "POLL_SECONDS", 0.01)
    with FakeKubeApi(token=TOKEN) as api:
        yield api


@pytest.fixture(scope="module")
def rig() -> Iterator[SlurmRig]:
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)})")
    with slurm_rig() as running:
        yield running


def _cells(candidate: Any) -> dict[str, str]:
    return dict(
        ResultCell.objects.filter(candidate=candidate).values_list("action__key", "outcome")
    )


def _apply_cluster_templates(project: Any) -> None:
    from evaluations.catalog import load_templates
    from evaluations.models import TemplateSet
    from evaluations.services import template_catalog_seed, template_set_apply

    template_catalog_seed(sets=load_templates())
    template_set_apply(
        project=project,
        template_set=TemplateSet.objects.get(key="cluster-probe-evidence"),
        actor=None,
    )


def kube_cluster(suite: dict[str, Any], api: FakeKubeApi, **extra: Any) -> Any:
    """Candidate volcano's Kubernetes cluster at the fake API server, with controlled failures
    in NS unless `extra` says otherwise."""
    data = {"controlled_failures": True, "failure_namespace": NS, **extra}
    return services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(
            name="k8s",
            kind="kubernetes",
            candidate=suite["volcano"],
            api_url=api.url("127.0.0.1"),
            **data,
        ),
        secrets={"bearer_token": TOKEN},
        actor=None,
    )


def _run(cluster: Any) -> Any:
    run = services.probe_run_start(cluster=cluster, actor=None)
    services.probe_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_a_kubernetes_cluster_run_with_controlled_failures(gpu_suite, kube_api) -> None:
    _apply_cluster_templates(gpu_suite["alpha"])
    kube_api.add_fixture("node-2x-tesla-t4.yaml")
    kube_api.add(cluster_policy("ready"), *operand_daemonsets(), gpu_quota(NS, 8))
    cluster = kube_cluster(gpu_suite, kube_api)
    assert cluster.secret_summary == {"bearer_token": "set"}
    run = _run(cluster)
    assert run.status == "done", run.error
    assert (run.source, run.node_count, run.gpu_count) == ("kubernetes", 1, 2)
    (node,) = ProbeNode.objects.filter(run=run)
    assert node.facts["gpus"][0]["memory_total_mib"] is not None
    scenarios = {s["name"]: s for s in run.cluster_facts["controlled_failures"]["scenarios"]}
    assert scenarios["more_gpus_than_any_node"]["clean"] is True
    assert scenarios["over_resource_quota"]["clean"] is True
    assert "raw" not in run.cluster_facts and "gpu_nodes" not in run.cluster_facts
    names = set(ProbeOutput.objects.filter(run=run).values_list("name", flat=True))
    assert any(n.startswith("GET /api/v1/nodes") for n in names)
    assert any(n.startswith("controlled failure: ") for n in names)
    # Both scenarios created objects, and none of them is left on the cluster.
    assert len(kube_api.received("POST")) == 2
    leftovers = [
        o
        for objects in kube_api.store.values()
        for o in objects
        if "workbench.probe/run" in (o.get("metadata", {}).get("labels") or {})
    ]
    assert leftovers == []
    cells = _cells(gpu_suite["volcano"])
    assert cells["cluster-probe-more-gpus-than-any-node"] == "passed"
    assert cells["cluster-probe-over-quota"] == "passed"
    assert cells["cluster-probe-gpu-operator"] == "passed"
    assert cells["gpu-probe-count"] == "failed"  # two T4s where the template asks for eight
    assert TOKEN not in str(run.cluster_facts) and TOKEN not in run.error


def test_a_kubernetes_run_without_failures_leaves_those_actions_not_covered(
    gpu_suite, kube_api
) -> None:
    _apply_cluster_templates(gpu_suite["alpha"])
    kube_api.add_fixture("node-2x-tesla-t4.yaml")
    cluster = services.cluster_save(
        project=gpu_suite["alpha"],
        data=services.ClusterData(
            name="k8s",
            kind="kubernetes",
            candidate=gpu_suite["volcano"],
            api_url=kube_api.url("127.0.0.1"),
        ),
        secrets={"bearer_token": TOKEN},
        actor=None,
    )
    run = _run(cluster)
    assert run.status == "done"
    assert not kube_api.received("POST")  # nothing created without the opt-in
    cells = _cells(gpu_suite["volcano"])
    assert cells["cluster-probe-more-gpus-than-any-node"] == "not_covered"
    assert cells["cluster-probe-gpu-operator"] == "failed"  # no ClusterPolicy: not installed


def test_a_kubeconfig_with_an_exec_plugin_fails_the_run_and_runs_nothing(
    gpu_suite, kube_api, tmp_path
) -> None:
    from django.core.exceptions import ValidationError

    from poc.probes import credentials
    from poc.probes.models import Cluster

    marker = tmp_path / "ran"
    config = kube_api.kubeconfig("127.0.0.1", exec={"command": "touch", "args": [str(marker)]})
    data = services.ClusterData(name="k8s", kind="kubernetes", candidate=gpu_suite["volcano"])
    # Refused when saved, naming the plugin...
    with pytest.raises(ValidationError) as refused:
        services.cluster_save(
            project=gpu_suite["alpha"], data=data, secrets={"kubeconfig": config}, actor=None
        )
    assert "users.exec runs local commands" in str(refused.value.message_dict["kubeconfig"])
    # ...and by a run, should such a kubeconfig be stored all the same (an older row).
    cluster = services.cluster_save(
        project=gpu_suite["alpha"],
        data=data,
        secrets={"kubeconfig": kube_api.kubeconfig("127.0.0.1")},
        actor=None,
    )
    sealed = credentials.encrypt(
        {"kubeconfig": config}, table=Cluster.TABLE, pk=cluster.pk, field="secrets"
    )
    Cluster.objects.filter(pk=cluster.pk).update(secrets=sealed)
    run = _run(Cluster.objects.get(pk=cluster.pk))
    assert run.status == "failed" and "exec" in run.error
    assert not marker.exists() and not kube_api.requests


def test_a_kubernetes_api_at_a_metadata_address_is_refused(gpu_suite) -> None:
    from django.core.exceptions import ValidationError

    from poc.probes.models import Cluster

    def save(url: str) -> Any:
        return services.cluster_save(
            project=gpu_suite["alpha"],
            data=services.ClusterData(
                name="k8s", kind="kubernetes", candidate=gpu_suite["volcano"], api_url=url
            ),
            secrets={"bearer_token": TOKEN},
            actor=None,
        )

    with pytest.raises(ValidationError) as refused:
        save("http://169.254.169.254/")
    assert "never probed" in str(refused.value.message_dict["api_url"])
    # A row that names it all the same (saved before this check) is refused by the run.
    cluster = save("https://127.0.0.1:6443")
    Cluster.objects.filter(pk=cluster.pk).update(api_url="http://169.254.169.254/")
    run = _run(Cluster.objects.get(pk=cluster.pk))
    assert run.status == "failed" and "never probed" in run.error


def test_a_slurm_cluster_through_slurmrestd_refuses_the_oversized_job_for_real(
    gpu_suite, rig
) -> None:
    _apply_cluster_templates(gpu_suite["alpha"])
    cluster = services.cluster_save(
        project=gpu_suite["alpha"],
        data=services.ClusterData(
            name="slurm",
            kind="slurm_rest",
            candidate=gpu_suite["volcano"],
            api_url=rig.rest_url,
            slurm_user=rig.job_user,
            controlled_failures=True,
        ),
        secrets={"jwt": rig.token()},
        actor=None,
    )
    run = _run(cluster)
    assert run.status == "done", run.error
    assert (run.source, run.node_count, run.gpu_count) == ("slurm", 1, 8)
    (scenario,) = run.cluster_facts["controlled_failures"]["scenarios"]
    assert scenario["clean"] is True and scenario["state"] == "refused"
    assert "Requested node configuration is not available" in scenario["reason"]
    cells = _cells(gpu_suite["volcano"])
    assert cells["cluster-probe-more-gpus-than-any-node"] == "passed"
    assert cells["gpu-probe-count"] == "passed"  # eight declared GPUs
    assert cells["cluster-probe-over-quota"] == "not_covered"  # Slurm has no such scenario here


def test_a_slurmrestd_answering_html_fails_with_a_readable_reason(gpu_suite) -> None:
    with html_page_server() as url:
        cluster = services.cluster_save(
            project=gpu_suite["alpha"],
            data=services.ClusterData(
                name="slurm",
                kind="slurm_rest",
                candidate=gpu_suite["volcano"],
                api_url=url,
                slurm_user="ops",
            ),
            secrets={"jwt": "header.payload.signature"},
            actor=None,
        )
        run = _run(cluster)
    assert run.status == "failed"
    assert "text/html" in run.error and "header.payload.signature" not in run.error


def test_a_slurm_cluster_over_ssh_reads_the_commands_and_the_refusal(
    gpu_suite, rig, node_root
) -> None:
    from tests.sshd import start_node

    _apply_cluster_templates(gpu_suite["alpha"])
    login = start_node(node_root / "slurm-login", SLURM_CONF=str(rig.conf))
    try:
        cluster = services.cluster_save(
            project=gpu_suite["alpha"],
            data=services.ClusterData(
                name="slurm-ssh",
                kind="slurm_ssh",
                candidate=gpu_suite["volcano"],
                hosts=f"127.0.0.1:{login.port}",
                ssh_user="wbprobe",
                controlled_failures=True,
            ),
            secrets={"ssh_private_key": login.client_key},
            actor=None,
        )
        checks = services.cluster_test_connection(cluster=cluster, actor=None)
        services.cluster_confirm_host_keys(
            cluster=cluster, fingerprints={c.node: c.fingerprint for c in checks}, actor=None
        )
        run = _run(cluster)
    finally:
        login.stop()
    assert run.status == "done", run.error
    assert (run.source, run.node_count, run.gpu_count) == ("slurm", 1, 8)
    assert [n["name"] for n in run.cluster_facts["nodes"]] == [rig.node]
    (scenario,) = run.cluster_facts["controlled_failures"]["scenarios"]
    assert scenario["state"] == "refused" and scenario["clean"] is True
    assert scenario["gpus_requested"] == 9
    cells = _cells(gpu_suite["volcano"])
    assert cells["cluster-probe-more-gpus-than-any-node"] == "passed"


def test_the_page_shows_beforehand_exactly_what_the_next_run_creates(gpu_suite, kube_api) -> None:
    kube_api.add_fixture("node-2x-tesla-t4.yaml")
    kube_api.add(gpu_quota(NS, 8, used=3))
    cluster = kube_cluster(gpu_suite, kube_api, expected_gpus_per_node=4)
    before = selectors.planned_objects(cluster)
    job, pod = before.objects
    asked = job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert asked["nvidia.com/gpu"] == "5"  # four expected per node, plus one
    assert "No run has read the cluster yet" in before.note

    _run(cluster)  # reads two T4s and the quota (5 of 8 left), and runs both scenarios
    planned = selectors.planned_objects(cluster)
    assert "largest node allocates 2 GPUs" in planned.note
    kube_api.requests.clear()
    run = _run(cluster)
    assert run.status == "done", run.error
    posted = [r["body"] for r in kube_api.received("POST")]
    label = selectors.failure_label(run.pk).split("=")[1]
    shown = json.loads(json.dumps(planned.objects).replace('"RUN"', json.dumps(label)))
    assert [o["kind"] for o in posted] == ["Job", "Pod"]
    for made, seen in zip(posted, shown, strict=True):
        assert (
            made["spec"] == seen["spec"]
            and made["metadata"]["labels"] == seen["metadata"]["labels"]
        )


def test_a_quota_scoped_to_other_pods_is_left_out_of_the_plan_and_the_run(
    gpu_suite, kube_api
) -> None:
    """A GPU quota that selects only pods of a PriorityClass never weighs the probe's Pod (it
    names none): the page plans no Pod against it and the run creates none."""
    kube_api.add_fixture("node-2x-tesla-t4.yaml")
    scoped = gpu_quota(NS, 8, used=3, name="batch-high-gpus")
    scoped["spec"]["scopeSelector"] = {
        "matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["batch-high"]}
        ]
    }
    kube_api.add(scoped)
    cluster = kube_cluster(gpu_suite, kube_api)
    _run(cluster)  # reads the nodes and the scoped quota
    (quota,) = [q for q in _last_facts(cluster)["quotas"] if q["name"] == "batch-high-gpus"]
    assert quota["applies_to_probe_pod"] is False
    planned = selectors.planned_objects(cluster)
    assert [o["kind"] for o in planned.objects] == ["Job"]
    assert "No GPU ResourceQuota was seen" in planned.note
    kube_api.requests.clear()
    run = _run(cluster)
    assert run.status == "done", run.error
    assert [r["body"]["kind"] for r in kube_api.received("POST")] == ["Job"]


def _last_facts(cluster: Any) -> dict[str, Any]:
    from poc.probes.models import (
        ProbeRun,
    )

    return ProbeRun.objects.filter(cluster=cluster).latest("pk").cluster_facts
