"""Cluster pages: register, change, test and pin, start and cancel, as members and others."""

from typing import Any

import pytest
from django.urls import reverse

from poc.probes.models import (
    Cluster,
    ProbeRun,
)
from tests.sshd import SshNode

pytestmark = pytest.mark.django_db


def form(node: SshNode | None = None, **extra: Any) -> dict[str, Any]:
    data = {
        "name": "lab",
        "candidate": "volcano",
        "kind": "ssh",
        "hosts": f"127.0.0.1:{node.port}" if node else "127.0.0.2",
        "ssh_user": "wbprobe",
        "ssh_port": "22",
        "ssh_private_key": node.client_key if node else "",
        "ssh_password": "" if node else "pw-123456",
    }
    data.update(extra)
    return data


def test_register_test_pin_and_probe_from_the_browser(gpu_suite, ssh_nodes, login) -> None:
    client = login(gpu_suite["bob"])
    node = ssh_nodes["gpu1"]
    response = client.post(reverse("poc:cluster_new", args=["alpha"]), form(node))
    assert response.status_code == 302, response.content.decode()[:2000]
    cluster = Cluster.objects.get()
    assert cluster.read_secrets()["ssh_private_key"] == node.client_key
    page = client.post(reverse("poc:cluster_test", args=["alpha", cluster.pk])).content.decode()
    from poc.probes.connectors.ssh import fingerprint

    label = f"127.0.0.1:{node.port}"
    assert fingerprint(node.host_key) in page and "Pin the checked keys" in page
    pinned = client.post(
        reverse("poc:cluster_pin", args=["alpha", cluster.pk]),
        {"node": [label], f"fingerprint:{label}": fingerprint(node.host_key)},
    )
    assert pinned.status_code == 302
    cluster.refresh_from_db()
    assert cluster.host_keys[label]["confirmed_by"] == "bob"
    started = client.post(reverse("poc:cluster_run", args=["alpha", cluster.pk]))
    run = ProbeRun.objects.get(cluster=cluster)
    assert started["Location"] == reverse("poc:probe_run", args=["alpha", run.pk])
    assert run.status in ("queued", "failed")  # failed only if the queue was unreachable
    listing = client.get(reverse("poc:clusters", args=["alpha"])).content.decode()
    assert "lab" in listing and f"#{run.pk}" in listing


def test_bad_input_names_the_field_and_stores_nothing(gpu_suite, login) -> None:
    client = login(gpu_suite["alice"])
    cases = [
        ({"hosts": ""}, "at least one node"),
        ({"ssh_user": ""}, "which user"),
        ({"kind": "kubernetes", "api_url": "ftp://x", "ssh_password": ""}, "http(s)://"),
        (
            {"kind": "slurm_rest", "api_url": "https://slurm.lab:6820", "ssh_password": ""},
            "Slurm user",
        ),
        ({"hosts": "a b c"}, "Not a host name"),
        ({"schedule_minutes": "1"}, "5"),
    ]
    for change, message in cases:
        response = client.post(reverse("poc:cluster_new", args=["alpha"]), form(**change))
        assert response.status_code == 422, change
        assert message in response.content.decode(), change
    assert not Cluster.objects.exists()


def test_secrets_are_never_filled_back_into_the_form(gpu_suite, login) -> None:
    client = login(gpu_suite["alice"])
    client.post(reverse("poc:cluster_new", args=["alpha"]), form(ssh_password="hunter2-secret"))
    cluster = Cluster.objects.get()
    page = client.get(reverse("poc:cluster_edit", args=["alpha", cluster.pk])).content.decode()
    assert "hunter2-secret" not in page and "Stored: set." in page and "characters" not in page
    # Saving with the secret left empty keeps it.
    client.post(
        reverse("poc:cluster_edit", args=["alpha", cluster.pk]), form(ssh_password="", name="lab2")
    )
    cluster.refresh_from_db()
    assert cluster.name == "lab2" and cluster.read_secrets() == {"ssh_password": "hunter2-secret"}


def test_observers_read_but_cannot_register_test_or_start(gpu_suite, login) -> None:
    login(gpu_suite["alice"]).post(reverse("poc:cluster_new", args=["alpha"]), form())
    cluster = Cluster.objects.get()
    observer = login(gpu_suite["dave"])
    assert observer.get(reverse("poc:cluster", args=["alpha", cluster.pk])).status_code == 200
    for name in ("poc:cluster_test", "poc:cluster_run", "poc:cluster_delete", "poc:cluster_edit"):
        assert observer.post(reverse(name, args=["alpha", cluster.pk]), form()).status_code == 403
    assert (
        observer.post(reverse("poc:cluster_new", args=["alpha"]), form(name="x")).status_code == 403
    )
    assert Cluster.objects.count() == 1 and not ProbeRun.objects.exists()


def test_a_queued_run_can_be_cancelled_from_its_page(gpu_suite, login) -> None:
    client = login(gpu_suite["alice"])
    client.post(reverse("poc:cluster_new", args=["alpha"]), form())
    cluster = Cluster.objects.get()
    from poc.probes.services import clusters as services

    run = services.probe_run_start(cluster=cluster, actor=None)
    page = client.get(reverse("poc:probe_run", args=["alpha", run.pk])).content.decode()
    assert "Cancel the run" in page
    client.post(reverse("poc:probe_cancel", args=["alpha", run.pk]))
    run.refresh_from_db()
    assert run.status == "cancelled"
