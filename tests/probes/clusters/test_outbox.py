"""A probe run started while the broker is down is not lost and not failed: it waits in its row
(the outbox), and the beat sends it once the broker answers again, exactly once. A real Redis
server of the test's own is the broker here, stopped and started again."""

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.utils import timezone

from poc.probes.models import (
    ProbeRun,
)
from poc.probes.services import clusters as services
from tests.probes.clusters.test_ssh_runs import pin_all, register
from workbench.celery import app as celery_app

pytestmark = pytest.mark.django_db


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Broker:
    """A redis-server of this test's own, on a port of its own."""

    def __init__(self, directory: Path) -> None:
        self.port = _free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def queued(self, queue: str) -> int:
        return int(redis.Redis.from_url(self.url).llen(queue))


def _new_connections() -> None:
    """Drop the app's cached broker connections, so that the next send uses the URL set now."""
    from kombu import pools

    pools.reset()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is needed (the README's system packages install it)")
    own = Broker(tmp_path)
    own.start()
    saved = celery_app.conf.broker_url, dict(celery_app.conf.broker_transport_options or {})
    celery_app.conf.broker_url = own.url
    # Fail fast while it is down instead of retrying a publish for seconds.
    celery_app.conf.broker_transport_options = {"max_retries": 1, "socket_connect_timeout": 1}
    celery_app.conf.task_publish_retry = False
    _new_connections()
    try:
        yield own
    finally:
        own.stop()
        celery_app.conf.broker_url = saved[0]
        celery_app.conf.broker_transport_options = saved[1]
        celery_app.conf.task_publish_retry = True
        _new_connections()


def test_a_run_started_while_the_broker_is_down_is_sent_when_it_is_back(
    gpu_suite: dict[str, Any],
    ssh_nodes: dict[str, Any],
    broker: Broker,
    django_capture_on_commit_callbacks: Any,
) -> None:
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]])
    pin_all(cluster, gpu_suite["alice"])
    broker.stop()
    with django_capture_on_commit_callbacks(execute=True):
        run = services.probe_run_start(cluster=cluster, actor=None)
    run.refresh_from_db()
    assert (run.status, run.unsent) == ("queued", True)
    assert "waits and is sent as soon as it answers" in run.error
    assert "OperationalError" in run.error  # the broker's own refusal, not a stand-in
    # Still down: the beat's tick leaves it waiting; the lost-worker recovery leaves it alone.
    assert services.probe_runs_resend() == []
    assert services.probe_runs_recover(now=timezone.now() + timedelta(hours=2)) == []
    run.refresh_from_db()
    assert (run.status, run.unsent, run.attempts) == ("queued", True, 0)

    broker.start()  # the same address: the worker-side connections find it again by themselves
    assert services.probe_runs_resend() == [run.pk]
    run.refresh_from_db()
    assert (run.status, run.unsent, run.error) == ("queued", False, "")
    assert broker.queued("probes") == 1  # one message for the run
    assert services.probe_runs_resend() == []  # and never a second one
    assert broker.queued("probes") == 1
    # A worker taking it up runs it as usual.
    services.probe_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert ProbeRun.objects.filter(cluster=cluster).count() == 1
