"""Probing SSH clusters for real: OpenSSH servers on 127.0.0.1 stand in for GPU nodes (the fake
nvidia-smi replays the real H200 captures); connector, pinning, runs, rules and results end to
end, with a changed host key, a wrong key, a hanging command, a node whose driver is gone."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from evaluations.models import ProjectEvent
from poc.models import (
    ResultCell,
)
from poc.probes.connectors import ssh as ssh_connector
from poc.probes.models import (
    Cluster,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
)
from poc.probes.services import clusters as services
from tests.sshd import SshNode

pytestmark = pytest.mark.django_db


def register(
    suite: dict[str, Any], nodes: list[SshNode], *, key: str | None = None, **extra: Any
) -> Cluster:
    hosts = "\n".join(f"127.0.0.1:{n.port}" for n in nodes)
    return services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(
            name=extra.pop("name", "lab"),
            kind="ssh",
            candidate=suite["volcano"],
            hosts=hosts,
            ssh_user="wbprobe",
            **extra,
        ),
        secrets={"ssh_private_key": key if key is not None else nodes[0].client_key},
        actor=suite["alice"],
    )


def pin_all(cluster: Cluster, actor: Any) -> list[services.NodeCheck]:
    checks = services.cluster_test_connection(cluster=cluster, actor=actor)
    services.cluster_confirm_host_keys(
        cluster=cluster,
        fingerprints={c.node: c.fingerprint for c in checks if c.state in ("new", "changed")},
        actor=actor,
    )
    return checks


def run_now(cluster: Cluster, actor: Any = None) -> ProbeRun:
    run = services.probe_run_start(cluster=cluster, actor=actor)
    services.probe_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_connection_test_shows_each_host_key_and_pins_only_what_was_confirmed(
    gpu_suite, ssh_nodes
) -> None:
    gpu1, gpu2 = ssh_nodes["gpu1"], ssh_nodes["gpu2"]
    cluster = register(gpu_suite, [gpu1, gpu2])
    checks = services.cluster_test_connection(cluster=cluster, actor=gpu_suite["alice"])
    assert [c.state for c in checks] == ["new", "new"]
    assert checks[0].fingerprint == ssh_connector.fingerprint(gpu1.host_key)
    assert checks[1].fingerprint == ssh_connector.fingerprint(gpu2.host_key)
    cluster.refresh_from_db()
    assert cluster.host_keys == {}  # seen is not trusted
    # Confirming a fingerprint other than the one seen pins nothing.
    with pytest.raises(Exception, match="No key was pinned"):
        services.cluster_confirm_host_keys(
            cluster=cluster, fingerprints={checks[0].node: "SHA256:forged"}, actor=None
        )
    pinned = services.cluster_confirm_host_keys(
        cluster=cluster, fingerprints={checks[0].node: checks[0].fingerprint}, actor=None
    )
    assert pinned == [checks[0].node]
    again = services.cluster_test_connection(cluster=cluster, actor=None)
    assert [c.state for c in again] == ["pinned", "new"]


def test_a_run_reads_every_node_judges_it_and_records_results(gpu_suite, ssh_nodes) -> None:
    cluster = register(gpu_suite, [ssh_nodes["gpu1"], ssh_nodes["gpu2"]], expected_gpus_per_node=1)
    pin_all(cluster, gpu_suite["alice"])
    run = run_now(cluster, gpu_suite["alice"])
    assert run.status == "done", run.error
    assert (run.node_count, run.gpu_count, run.verdict) == (2, 2, "healthy")
    assert run.progress_done == run.progress_total == 2
    assert run.source == "ssh" and run.cluster == cluster and run.attempts == 1
    nodes = list(ProbeNode.objects.filter(run=run))
    assert all(n.facts["gpus"][0]["name"] == "NVIDIA H200" for n in nodes)
    assert all(n.facts["driver_version"] == "580.159.04" for n in nodes)
    assert all(n.facts["expected_gpu_count"] == 1 for n in nodes)
    names = set(ProbeOutput.objects.filter(run=run).values_list("name", flat=True))
    assert {"nvidia-smi -q -x", "nvidia-smi -L", "bundle.json"} <= names
    # The bound GPU actions got results with source probe, through the ingest service.
    cells = dict(
        ResultCell.objects.filter(candidate=gpu_suite["volcano"]).values_list(
            "action__key", "outcome"
        )
    )
    # The template asks for 8 GPUs; the two nodes have one each, and the cause says so.
    assert cells["gpu-probe-count"] == "failed"
    count_cell = ResultCell.objects.get(
        candidate=gpu_suite["volcano"], action__key="gpu-probe-count"
    )
    assert "2" in count_cell.result.failure_cause
    assert cells["gpu-probe-health"] in ("passed", "failed")
    assert cells["gpu-probe-driver"] == "passed"
    assert cells["gpu-probe-xid"] == "not_covered"  # the kernel log could not be read
    assert run.run is not None and run.run.results.filter(source="probe").count() == len(cells)


def test_a_changed_host_key_is_refused_before_any_credential_is_sent(gpu_suite, fresh_node) -> None:
    cluster = register(gpu_suite, [fresh_node])
    pin_all(cluster, gpu_suite["alice"])
    assert run_now(cluster).status == "done"
    old_log = fresh_node.log
    fresh_node.new_host_key()
    run = run_now(cluster)
    assert run.status == "failed"
    assert "not the pinned one" in run.error
    (node,) = ProbeNode.objects.filter(run=run)
    assert "not the pinned one" in node.error
    assert "Accepted publickey" not in fresh_node.log.replace(old_log, "")
    checks = services.cluster_test_connection(cluster=cluster, actor=None)
    assert checks[0].state == "changed" and "CHANGED" in checks[0].message


def test_a_node_without_a_pinned_key_is_not_contacted_with_credentials(
    gpu_suite, fresh_node
) -> None:
    cluster = register(gpu_suite, [fresh_node])
    run = run_now(cluster)
    assert run.status == "failed"
    assert "no host key is pinned" in run.error
    assert "Accepted publickey" not in fresh_node.log


def test_a_wrong_key_fails_with_a_reason_and_no_secret_in_it(
    gpu_suite, ssh_nodes, fresh_node
) -> None:
    other = fresh_node.client_key  # a real key, not the one the cluster's nodes accept
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]], key=other)
    pin_all(cluster, gpu_suite["alice"])
    run = run_now(cluster)
    assert run.status == "failed"
    assert "authentication failed" in run.error
    assert "PRIVATE KEY" not in run.error


def test_a_hanging_command_times_out_and_the_run_finishes_partially(
    gpu_suite, ssh_nodes, settings
) -> None:
    settings.PROBE_COMMAND_TIMEOUT = 1
    cluster = register(gpu_suite, [ssh_nodes["gpu1"], ssh_nodes["hang"], ssh_nodes["gone"]])
    pin_all(cluster, gpu_suite["alice"])
    run = run_now(cluster)
    assert run.status == "partial", run.error
    assert (run.node_count, run.gpu_count) == (3, 1)
    assert "2 of 3 nodes could not be read" in run.error
    failed = {n.host: n.error for n in ProbeNode.objects.filter(run=run) if n.error}
    hang = f"127.0.0.1:{ssh_nodes['hang'].port}"
    gone = f"127.0.0.1:{ssh_nodes['gone'].port}"
    assert set(failed) == {hang, gone}
    assert "timed out after 1 s" in failed[hang]
    assert "exit status 9" in failed[gone] or "NVIDIA driver" in failed[gone]
    # What the failing nodes printed is kept as evidence too.
    gone_outputs = ProbeOutput.objects.filter(run=run, node__host=gone)
    assert gone_outputs.filter(exit_code=9).exists()
    # A procurement sheet freezes the nodes that could not be read with their reason.
    from poc.probes.present import sheet_probe_facts

    frozen = sheet_probe_facts(run)["nodes"]
    by_host = {n["host"]: n for n in frozen}
    assert by_host[hang]["problems"] == [failed[hang]] and by_host[hang]["verdict"] == ""
    assert [n["gpu_count"] for n in frozen if n["verdict"]] == [1]


def test_a_duplicate_or_late_delivery_writes_nothing(gpu_suite, ssh_nodes) -> None:
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]])
    pin_all(cluster, gpu_suite["alice"])
    run = run_now(cluster)
    nodes = ProbeNode.objects.filter(run=run).count()
    services.probe_run_execute(run_id=run.pk)  # delivered again after it finished
    run.refresh_from_db()
    assert run.attempts == 1 and ProbeNode.objects.filter(run=run).count() == nodes


def test_a_lost_worker_is_taken_up_again_then_given_up(gpu_suite, ssh_nodes) -> None:
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]])
    run = services.probe_run_start(cluster=cluster, actor=None)
    long_ago = timezone.now() - timedelta(hours=2)
    ProbeRun.objects.filter(pk=run.pk).update(
        status="running", work_started_at=long_ago, attempts=1
    )
    assert services.probe_runs_recover() == [run.pk]
    run.refresh_from_db()
    assert (run.status, run.work_started_at) == ("queued", None)
    ProbeRun.objects.filter(pk=run.pk).update(
        status="running", work_started_at=long_ago, attempts=services.MAX_ATTEMPTS
    )
    services.probe_runs_recover()
    run.refresh_from_db()
    assert run.status == "failed" and "lost" in run.error


def test_a_queued_run_can_be_cancelled_and_is_then_not_taken_up(gpu_suite, ssh_nodes) -> None:
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]])
    pin_all(cluster, None)
    run = services.probe_run_start(cluster=cluster, actor=None)
    services.probe_run_cancel(run=run, actor=gpu_suite["alice"])
    services.probe_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "cancelled" and not ProbeNode.objects.filter(run=run).exists()


def test_a_second_start_while_one_is_active_returns_the_active_run(gpu_suite, ssh_nodes) -> None:
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]])
    first = services.probe_run_start(cluster=cluster, actor=None)
    assert services.probe_run_start(cluster=cluster, actor=None).pk == first.pk


def test_metadata_and_unlisted_addresses_are_refused_without_connecting(
    gpu_suite, settings
) -> None:
    from django.core.exceptions import ValidationError

    settings.PROBE_ALLOWED_NETWORKS = ["0.0.0.0/0", "10.1.0.0/16"]
    forbidden = "169.254.169.254\nmetadata.google.internal\n[fe80::1]:22"

    def save(hosts: str) -> Any:
        return services.cluster_save(
            project=gpu_suite["alpha"],
            data=services.ClusterData(
                name="cloud", kind="ssh", candidate=gpu_suite["volcano"], hosts=hosts, ssh_user="x"
            ),
            secrets={"ssh_password": "pw-not-used"},
            actor=None,
        )

    # Refused when saved, whatever the list says...
    for host in forbidden.splitlines():
        with pytest.raises(ValidationError) as refused:
            save(host)
        assert "never probed" in str(refused.value.message_dict["hosts"])
    # ...and by connection tests and runs, for a row that names them all the same.
    cluster = save("10.1.0.1")
    cluster.__class__.objects.filter(pk=cluster.pk).update(hosts=forbidden)
    cluster = cluster.__class__.objects.get(pk=cluster.pk)
    checks = services.cluster_test_connection(cluster=cluster, actor=None)
    assert [c.state for c in checks] == ["refused"] * 3
    run = run_now(cluster)
    assert run.status == "failed"
    errors = list(ProbeNode.objects.filter(run=run).values_list("error", flat=True))
    assert len(errors) == 3 and all("never probed" in e for e in errors)
    settings.PROBE_ALLOWED_NETWORKS = ["10.1.0.0/16"]
    checks = services.cluster_test_connection(
        cluster=cluster.__class__.objects.get(pk=cluster.pk), actor=None
    )
    assert all(c.state == "refused" for c in checks)


def test_secrets_stay_out_of_history_pages_and_the_task_message(
    gpu_suite, ssh_nodes, login
) -> None:
    key = ssh_nodes["gpu1"].client_key
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]])
    assert "PRIVATE KEY" not in cluster.secrets  # ciphertext only
    assert cluster.secret_summary["ssh_private_key"].startswith("ssh-ed25519 SHA256:")
    events = ProjectEvent.objects.filter(project=gpu_suite["alpha"])
    assert events.filter(verb="cluster.registered").exists()
    assert not any(key[40:80] in str(e.before) + str(e.after) for e in events)
    client = login(gpu_suite["alice"])
    for name in ("poc:cluster", "poc:cluster_edit"):
        from django.urls import reverse

        page = client.get(reverse(name, args=["alpha", cluster.pk])).content.decode()
        assert key[40:80] not in page and "SHA256:" in page
    import inspect

    from poc.probes.tasks import probe_run_task

    assert list(inspect.signature(probe_run_task.run).parameters) == ["run_id"]


def test_a_schedule_starts_a_run_when_due_and_not_before(gpu_suite, ssh_nodes) -> None:
    cluster = register(gpu_suite, [ssh_nodes["gpu1"]], schedule_minutes=30)
    unscheduled = register(gpu_suite, [ssh_nodes["gpu2"]], name="manual")
    now = timezone.now()
    (first,) = services.probe_schedule_due(now=now)
    assert ProbeRun.objects.get(pk=first).cluster == cluster
    assert not ProbeRun.objects.filter(cluster=unscheduled).exists()
    ProbeRun.objects.filter(pk=first).update(status="done")
    assert services.probe_schedule_due(now=now + timedelta(minutes=29)) == []
    (second,) = services.probe_schedule_due(now=now + timedelta(minutes=31))
    assert second != first
