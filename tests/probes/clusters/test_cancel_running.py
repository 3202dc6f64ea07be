"""A running probe stops when a person cancels it: the node being read finishes, the nodes
not started are never contacted, and what was read is kept."""

import threading
import time
from typing import Any

import pytest
from django.db import connection

from poc.probes.models import (
    ProbeNode,
    ProbeRun,
)
from poc.probes.services import clusters as services

pytestmark = pytest.mark.django_db(transaction=True)


def test_cancelling_a_running_probe_stops_it_after_the_current_node(
    gpu_suite: dict[str, Any], ssh_nodes: dict[str, Any], settings: Any
) -> None:
    settings.PROBE_CONCURRENCY = 1
    settings.PROBE_COMMAND_TIMEOUT = 1
    order = [ssh_nodes["gpu1"], ssh_nodes["hang"], ssh_nodes["gpu2"]]
    cluster = services.cluster_save(
        project=gpu_suite["alpha"],
        data=services.ClusterData(
            name="lab",
            kind="ssh",
            candidate=gpu_suite["volcano"],
            hosts="\n".join(f"127.0.0.1:{n.port}" for n in order),
            ssh_user="wbprobe",
        ),
        secrets={"ssh_private_key": order[0].client_key},
        actor=None,
    )
    checks = services.cluster_test_connection(cluster=cluster, actor=None)
    services.cluster_confirm_host_keys(
        cluster=cluster, fingerprints={c.node: c.fingerprint for c in checks}, actor=None
    )
    run = services.probe_run_start(cluster=cluster, actor=None)
    last_log = order[2].log

    def work() -> None:
        try:
            services.probe_run_execute(run_id=run.pk)
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        current = ProbeRun.objects.get(pk=run.pk)
        if current.status == "running" and current.progress_done >= 1:
            break
        time.sleep(0.05)
    services.probe_run_cancel(run=run, actor=gpu_suite["alice"])
    worker.join(60)
    run.refresh_from_db()
    assert run.status == "cancelled", run.error
    assert run.node_count == 2 and ProbeNode.objects.filter(run=run).count() == 2
    assert "the nodes read so far are kept" in run.error
    assert order[2].log == last_log  # the third node was never contacted
