"""A worker killed in the middle of a probe (SIGKILL: no clean-up of its own) loses nothing
and leaves nothing half done: the run is taken up again and finishes exactly once, without the
nodes the dead attempt had stored twice. Real worker processes, Redis, PostgreSQL, OpenSSH."""

import os
import signal
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from evaluations.models import ProjectEvent
from poc.probes.models import (
    ProbeNode,
)
from poc.probes.services import clusters as services
from tests.conftest import TEST_CREDENTIALS_KEYS
from tests.probes.clusters.test_ssh_runs import pin_all, register
from tests.workers import celery_worker, wait_until, worker_database_url
from workbench.celery import app as celery_app


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_probe_whose_worker_is_killed_is_finished_once_by_another(
    gpu_suite: dict[str, Any], ssh_nodes: dict[str, Any]
) -> None:
    celery_app.control.purge()
    order = [ssh_nodes["gpu1"], ssh_nodes["hang"], ssh_nodes["gpu2"]]
    cluster = register(gpu_suite, order)
    pin_all(cluster, gpu_suite["alice"])
    env = {
        "DATABASE_URL": worker_database_url(),
        "WORKBENCH_CREDENTIALS_KEYS": TEST_CREDENTIALS_KEYS,
        "PROBE_CONCURRENCY": "1",
    }
    with celery_worker({**env, "PROBE_COMMAND_TIMEOUT": "60"}, queues="probes") as doomed:
        run = services.probe_run_start(cluster=cluster, actor=None)

        def reading_the_hanging_node() -> bool:
            run.refresh_from_db()
            return run.status == "running" and run.progress_done >= 1

        wait_until(reading_the_hanging_node, seconds=60, what="the first node to be stored")
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=15)
    run.refresh_from_db()
    assert run.status == "running" and run.attempts == 1  # lost, as a dead worker leaves it
    assert ProbeNode.objects.filter(run=run).count() == 1

    # The beat's recovery, an hour later than the worker's limits: queued again.
    assert services.probe_runs_recover(now=timezone.now() + timedelta(hours=1)) == [run.pk]
    with celery_worker({**env, "PROBE_COMMAND_TIMEOUT": "1"}, queues="probes") as worker:

        def finished() -> bool:
            run.refresh_from_db()
            return run.status not in ("queued", "running")

        try:
            wait_until(finished, seconds=90, what="the second worker to finish the run")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
    assert run.status == "partial", run.error  # the hanging node timed out this time
    assert run.attempts == 2 and run.node_count == 3
    positions = list(ProbeNode.objects.filter(run=run).values_list("position", flat=True))
    assert sorted(positions) == [0, 1, 2]  # every node once: the dead attempt's node is gone
    finished_events = ProjectEvent.objects.filter(
        project=gpu_suite["alpha"], verb="probe.finished", subject__endswith=f"probe run #{run.pk}"
    )
    assert finished_events.count() == 1
