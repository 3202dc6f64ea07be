"""One executor per kind of cluster: SSH nodes, Kubernetes, slurmrestd, Slurm
over SSH."""

import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.translation import gettext as _

from poc.probes.connectors import guard
from poc.probes.connectors import ssh as ssh_connector
from poc.probes.models import (
    Cluster,
    ProbeRun,
    ProbeStatus,
)
from poc.probes.selectors.clusters import failure_runs_to_sweep, probe_run_state
from poc.probes.selectors.plans import failure_label
from poc.probes.services.probes import (
    ProbeInputError,
    nodes_from_bundle,
)
from workbench.memory import release_free_memory
from workbench.typing import JSON, JSONObject

if TYPE_CHECKING:
    pass
from poc.probes.services.clusters.claims import Claim
from poc.probes.services.clusters.common import (
    ClusterUnreachable,
    RunFailed,
    checked_address,
    connector_error,
    resolver,
    slurm_target,
)
from poc.probes.services.clusters.storing import (
    Collected,
    command_failures,
    gpu_nodes_of,
    keep_facts,
    raw_outputs,
    store_failed_node,
    store_gpu_nodes,
    store_raw,
    store_read_node,
)


def _ssh_nodes(
    cluster: Cluster, secrets: dict[str, str], collected: Collected, run: ProbeRun
) -> Iterator[ssh_connector.SshNode]:
    for host, port in cluster.node_addresses():
        label = f"{host}:{port}"
        try:
            address = checked_address(host, port)
        except guard.GuardRefused as exc:
            store_failed_node(run, collected, label, str(exc), [])
            Claim(run).advance()
            continue
        yield ssh_connector.SshNode(
            host=host,
            port=port,
            address=address,
            username=cluster.ssh_user,
            host_key=cluster.host_keys.get(label, {}).get("key", ""),
            private_key=secrets.get("ssh_private_key", ""),
            passphrase=secrets.get("ssh_key_passphrase", ""),
            password=secrets.get("ssh_password", ""),
            command_timeout=float(settings.PROBE_COMMAND_TIMEOUT),
        )


CANCEL_POLL_SECONDS = 0.5
RELEASE_EVERY = 25  # nodes between returning freed memory to the system (long runs stay flat)


def _watch_cancel(claim: "Claim", cancel: threading.Event) -> None:
    """Set `cancel` as soon as a person cancels the run, its claim is lost or its deadline
    passes, so that no node is started after that; the nodes being read finish."""
    from django.db import connection

    try:
        while not cancel.wait(CANCEL_POLL_SECONDS):
            if claim.past_deadline():
                cancel.set()
                break
            row = probe_run_state(claim.run.pk)
            if row is None:  # not visible from here (or gone): the writer finds out itself
                continue
            status, started, cancelled = row
            if cancelled or status != ProbeStatus.RUNNING or started != claim.run.work_started_at:
                cancel.set()
    finally:
        connection.close()


def execute_ssh(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: Claim, collected: Collected
) -> None:
    nodes = list(_ssh_nodes(cluster, secrets, collected, run))
    cancel = threading.Event()
    watcher = threading.Thread(target=_watch_cancel, args=(claim, cancel), daemon=True)
    watcher.start()
    results = ssh_connector.probe_nodes(
        nodes, concurrency=settings.PROBE_CONCURRENCY, cancel=cancel
    )
    try:
        for result in results:
            label = result.node.label if result.node.port != 22 else result.node.host
            if result.error:
                store_failed_node(run, collected, label, result.error, raw_outputs(result.outputs))
                if result.failure in ("connect", "timeout"):
                    collected.unreachable += 1
            else:
                try:
                    (node,) = nodes_from_bundle(
                        result.bundle(expected_gpus=cluster.expected_gpus_per_node)
                    )
                except ProbeInputError as exc:
                    store_failed_node(
                        run,
                        collected,
                        label,
                        command_failures(result.outputs) or str(exc),
                        raw_outputs(result.outputs),
                    )
                else:
                    store_read_node(run, collected, node)
            if not claim.advance() or not claim.holds():
                break
            if collected.position % RELEASE_EVERY == 0:
                release_free_memory()
    finally:
        results.close()
        cancel.set()  # also ends the watcher
        watcher.join(5)
    if collected.position < len(cluster.node_addresses()):
        claim.check_deadline()  # nodes left out for the deadline: the run did not finish


def execute_kubernetes(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: Claim, collected: Collected
) -> None:
    from poc.probes.connectors import kubernetes as kube

    target = kube.KubeTarget(
        api_url=cluster.api_url,
        token=secrets.get("bearer_token", ""),
        ca_pem=secrets.get("ca_pem", ""),
        kubeconfig=secrets.get("kubeconfig", ""),
        timeout=float(settings.PROBE_COMMAND_TIMEOUT),
    )
    resolve = resolver(kube.ConnectorError)
    try:
        facts = kube.probe_kubernetes(target, resolve=resolve)
    except kube.ConnectorError as exc:
        raise connector_error(exc) from None
    store_raw(run, facts.get("raw", []))
    failures: JSONObject = {}
    if run.with_failures:
        claim.keep_before_deadline(cluster, collected, facts)
        namespace = cluster.failure_namespace or "default"
        # Leftovers of earlier runs that could not clean up (a lost worker) go first.
        swept: list[JSON] = []
        for pk in failure_runs_to_sweep(cluster, besides=run):
            try:
                swept += kube.sweep(
                    target, resolve=resolve, namespace=namespace, label_selector=failure_label(pk)
                )
            except kube.ConnectorError as exc:
                swept.append(f"run {pk}: {exc}")
        try:
            outcome = kube.over_quota(
                target,
                resolve=resolve,
                namespace=namespace,
                label=failure_label(run.pk),
                timeout=max(1.0, min(120.0, claim.deadline - time.monotonic())),
            )
        except kube.ConnectorError as exc:
            failures = {"error": str(exc), "scenarios": []}
        else:
            store_raw(run, outcome.pop("raw", []), prefix="controlled failure: ")
            failures = {**outcome, "swept": swept}
    keep_facts(run, facts, {"controlled_failures": failures} if run.with_failures else None)
    store_gpu_nodes(run, cluster, collected, gpu_nodes_of(facts))
    claim.advance()


def execute_slurm_rest(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: Claim, collected: Collected
) -> None:
    from poc.probes.connectors import slurm

    target = slurm_target(cluster, secrets)
    resolve = resolver(slurm.ConnectorError)
    try:
        facts = slurm.probe_slurm_rest(target, resolve=resolve)
    except slurm.ConnectorError as exc:
        raise connector_error(exc) from None
    store_raw(run, facts.get("raw", []))
    failures: JSONObject = {}
    if run.with_failures:
        claim.keep_before_deadline(cluster, collected, facts)
        try:
            outcome = slurm.over_quota_rest(target, resolve=resolve)
        except slurm.ConnectorError as exc:
            failures = {"error": str(exc), "scenarios": []}
        else:
            store_raw(run, outcome.pop("raw", []), prefix="controlled failure: ")
            failures = {"scenarios": [outcome]}
    keep_facts(run, facts, {"controlled_failures": failures} if run.with_failures else None)
    store_gpu_nodes(run, cluster, collected, gpu_nodes_of(facts))
    claim.advance()


def execute_slurm_ssh(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: Claim, collected: Collected
) -> None:
    """Slurm's commands on its login node (the first node listed), over SSH."""
    from poc.probes.connectors import slurm

    nodes = list(_ssh_nodes(cluster, secrets, collected, run))[:1]
    if not nodes:
        raise RunFailed(collected.failed[0] if collected.failed else _("no login node"))
    commands = [(command, command) for command in slurm.CLI_COMMANDS]
    (result,) = list(ssh_connector.probe_nodes(nodes, concurrency=1, commands=commands))
    if result.error:
        if result.failure in ("connect", "timeout"):
            raise ClusterUnreachable(result.error)
        raise RunFailed(result.error)
    outputs = {o["name"]: o.get("stdout") or "" for o in result.outputs if not o.get("error")}
    facts = slurm.facts_from_cli(outputs)
    raw = [
        {
            "name": o["name"],
            "status": o.get("exit_code"),
            "text": o.get("stdout") or o.get("stderr") or "",
        }
        for o in result.outputs
    ]
    store_raw(run, raw)
    failures: JSONObject = {}
    if run.with_failures:
        claim.keep_before_deadline(cluster, collected, facts)
        sized = slurm.oversized_request(facts.get("nodes", [])) or (1, None)
        command = slurm.over_quota_command(sized[0], gpu_type=sized[1])
        (submitted,) = list(
            ssh_connector.probe_nodes(nodes, concurrency=1, commands=[("over quota", command)])
        )
        if submitted.error or not submitted.outputs:
            failures = {"error": submitted.error or _("nothing ran"), "scenarios": []}
        else:
            out = submitted.outputs[0]
            exit_code = out.get("exit_code")
            outcome = slurm.parse_over_quota_output(
                exit_code if isinstance(exit_code, int) else -1,
                out.get("stdout") or "",
                out.get("stderr") or "",
                seconds=float(out.get("duration_s") or 0.0),
                command=command,
            )
            outcome["gpus_requested"] = sized[0]
            if outcome.get("cancel_command"):
                list(
                    ssh_connector.probe_nodes(
                        nodes, concurrency=1, commands=[("cancel", outcome["cancel_command"])]
                    )
                )
            store_raw(
                run,
                [
                    {
                        "name": command,
                        "status": out.get("exit_code"),
                        "text": (out.get("stdout") or "") + (out.get("stderr") or ""),
                    }
                ],
                prefix="controlled failure: ",
            )
            failures = {"scenarios": [outcome]}
    keep_facts(run, facts, {"controlled_failures": failures} if run.with_failures else None)
    store_gpu_nodes(run, cluster, collected, gpu_nodes_of(facts))
    claim.advance()
