"""A probe run started from the browser is carried out by a real Celery worker on the probes
queue (Redis broker, PostgreSQL), against real SSH nodes."""

from typing import Any

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from poc.probes.models import (
    ProbeRun,
)
from poc.probes.services import clusters as services
from tests.conftest import TEST_CREDENTIALS_KEYS
from tests.workers import celery_worker, wait_until
from workbench.celery import app as celery_app


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_worker_probes_the_cluster_and_the_page_follows(
    gpu_suite: dict[str, Any], ssh_nodes: dict[str, Any], login: Any
) -> None:
    celery_app.control.purge()
    nodes = [ssh_nodes["gpu1"], ssh_nodes["gpu2"]]
    cluster = services.cluster_save(
        project=gpu_suite["alpha"],
        data=services.ClusterData(
            name="lab",
            kind="ssh",
            candidate=gpu_suite["volcano"],
            hosts="\n".join(f"127.0.0.1:{n.port}" for n in nodes),
            ssh_user="wbprobe",
        ),
        secrets={"ssh_private_key": nodes[0].client_key},
        actor=gpu_suite["alice"],
    )
    checks = services.cluster_test_connection(cluster=cluster, actor=None)
    services.cluster_confirm_host_keys(
        cluster=cluster, fingerprints={c.node: c.fingerprint for c in checks}, actor=None
    )
    db = django_settings.DATABASES["default"]
    database_url = (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )
    client = login(gpu_suite["alice"])
    env = {"DATABASE_URL": database_url, "WORKBENCH_CREDENTIALS_KEYS": TEST_CREDENTIALS_KEYS}
    with celery_worker(env, queues="probes") as worker:
        response = client.post(reverse("poc:cluster_run", args=["alpha", cluster.pk]))
        assert response.status_code == 302
        run = ProbeRun.objects.get(cluster=cluster)
        page = client.get(response["Location"]).content.decode()
        assert "hx-trigger" in page  # queued or running: the progress polls

        def finished() -> bool:
            run.refresh_from_db()
            return run.status not in ("queued", "running")

        try:
            wait_until(finished, seconds=60, what="the worker to probe the cluster")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
    assert run.status == "done", run.error
    assert (run.node_count, run.gpu_count, run.attempts) == (2, 2, 1)
    poll = client.get(
        reverse("poc:probe_run", args=["alpha", run.pk]) + "?part=progress",
        headers={"HX-Request": "true"},
    )
    assert poll.status_code == 204 and poll["HX-Refresh"] == "true"
    page = client.get(reverse("poc:cluster", args=["alpha", cluster.pk])).content.decode()
    assert 'hx-trigger="every 2s"' not in page
