"""A run keeps its own time limit, whatever the worker pool (Celery enforces time limits only
in its prefork pool; `make run` uses the solo pool): past PROBE_SOFT_TIME_LIMIT no further node
or step starts, the run ends timed out and what it read is kept."""

from typing import Any

import pytest

from poc.probes.connectors import kubernetes as kube
from poc.probes.models import (
    ProbeNode,
)
from poc.probes.services import clusters as services
from tests.fakes.k8s_api import FakeKubeApi, cluster_policy, gpu_quota, operand_daemonsets
from tests.probes.clusters.test_ssh_runs import pin_all, register, run_now

pytestmark = pytest.mark.django_db
TOKEN = "probe-token-limits"


def test_an_ssh_run_past_its_limit_stops_starting_nodes_and_keeps_what_it_read(
    gpu_suite: dict[str, Any], ssh_nodes: dict[str, Any], settings: Any
) -> None:
    settings.PROBE_CONCURRENCY = 1
    # Wide enough for the healthy node's read on a loaded machine (SSH's handshake included);
    # the hanging node alone takes longer.
    settings.PROBE_COMMAND_TIMEOUT = 4
    settings.PROBE_SOFT_TIME_LIMIT = 4
    order = [ssh_nodes["gpu1"], ssh_nodes["hang"], ssh_nodes["gpu2"]]
    cluster = register(gpu_suite, order)
    pin_all(cluster, gpu_suite["alice"])
    untouched = order[2].log
    run = run_now(cluster)
    assert run.status == "timed_out", (run.status, run.error)
    assert "time limit (4 s)" in run.error and "the nodes read so far are kept" in run.error
    nodes = list(ProbeNode.objects.filter(run=run).order_by("position"))
    assert [bool(n.error) for n in nodes] == [False, True]  # the first read, the hanging one not
    assert nodes[1].host == f"127.0.0.1:{order[1].port}"
    assert (run.node_count, run.gpu_count) == (2, 1)
    assert order[2].log == untouched  # the node after the deadline was never contacted


def test_an_ssh_run_that_reads_every_node_in_time_is_done(
    gpu_suite: dict[str, Any], ssh_nodes: dict[str, Any], settings: Any
) -> None:
    settings.PROBE_SOFT_TIME_LIMIT = 60
    cluster = register(gpu_suite, [ssh_nodes["gpu1"], ssh_nodes["gpu2"]])
    pin_all(cluster, gpu_suite["alice"])
    run = run_now(cluster)
    assert run.status == "done", run.error


def test_a_kubernetes_run_past_its_limit_keeps_the_facts_and_creates_nothing(
    gpu_suite: dict[str, Any], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kube.failure, "POLL_SECONDS", 0.01)
    settings.PROBE_SOFT_TIME_LIMIT = 0  # past the limit as soon as the cluster has been read
    with FakeKubeApi(token=TOKEN) as api:
        api.add_fixture("node-2x-tesla-t4.yaml")
        api.add(cluster_policy("ready"), *operand_daemonsets(), gpu_quota("gpu-probe", 8))
        cluster = services.cluster_save(
            project=gpu_suite["alpha"],
            data=services.ClusterData(
                name="k8s",
                kind="kubernetes",
                candidate=gpu_suite["volcano"],
                api_url=api.url("127.0.0.1"),
                controlled_failures=True,
                failure_namespace="gpu-probe",
            ),
            secrets={"bearer_token": TOKEN},
            actor=None,
        )
        run = run_now(cluster)
        assert run.status == "timed_out", (run.status, run.error)
        assert not api.received("POST")  # the controlled failures never started
    assert (run.node_count, run.gpu_count) == (1, 2)
    assert run.cluster_facts.get("gpu_operator")  # what the cluster said is kept
