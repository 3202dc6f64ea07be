"""Registered clusters and the probe runs workers make on them.

A cluster row holds where a candidate's GPUs are and, encrypted, how to get in. Starting a run
queues it (after the commit); a worker claims it (`work_started_at`, as sheets do: a late or
duplicate delivery that does not hold the claim writes nothing), reads every node through the
cluster's connector, stores each node as it comes (raw outputs as evidence, facts, health), and
finishes with the results of the bound acceptance actions. A node that cannot be read is that
node's outcome; the run finishes partially. A run whose worker was lost is taken up again, or
ends failed with the reason: none stays running.
"""

import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project
from evaluations.services import event_record
from poc import credentials
from poc.models import (
    FINISHED_STATUSES,
    SECRET_FIELDS,
    Cluster,
    ClusterKind,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
    ProbeSource,
    ProbeStatus,
)
from poc.probes import parsers
from poc.probes.connectors import guard
from poc.probes.connectors import ssh as ssh_connector
from poc.probes.facts import FACTS_FORMAT, NodeFacts, new_node
from poc.probes.rules import health
from poc.services.ingest import StoredFile
from poc.services.probes import (
    NodeInput,
    ProbeInputError,
    RawOutput,
    _store,
    _worst,
    nodes_from_bundle,
    record_run_results,
    store_nodes,
)
from workbench.memory import release_free_memory
from workbench.queue import send
from workbench.storage import files_removed_on_failure
from workbench.typing import JSON, JSONObject

if TYPE_CHECKING:
    from poc.probes.connectors import slurm

log = logging.getLogger(__name__)

PROBE_RUN_TASK = "poc.tasks.probe_run_task"
MAX_CITED = 12  # raw outputs a result cites; the run's page has them all
MAX_ATTEMPTS = 3
LOST_AFTER = timedelta(seconds=60)  # past the hard time limit: the worker is gone

SOURCE_OF_KIND: dict[str, str] = {
    ClusterKind.SSH: ProbeSource.SSH,
    ClusterKind.SLURM_SSH: ProbeSource.SLURM,
    ClusterKind.SLURM_REST: ProbeSource.SLURM,
    ClusterKind.KUBERNETES: ProbeSource.KUBERNETES,
}


class ClusterUnreachable(Exception):
    """No node or endpoint of the cluster answered: worth another try later."""


def hard_time_limit() -> int:
    return settings.PROBE_SOFT_TIME_LIMIT + 60


# --- registering -------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterData:
    """What a person (or the API) says about a cluster; secrets travel separately."""

    name: str
    kind: str
    candidate: Candidate
    hosts: str = ""
    ssh_user: str = ""
    ssh_port: int = 22
    api_url: str = ""
    slurm_user: str = ""
    expected_gpus_per_node: int | None = None
    controlled_failures: bool = False
    failure_namespace: str = ""
    schedule_minutes: int | None = None


def _masked(name: str, value: str) -> str:
    """What a page may say about a secret: that it is set, and for keys which one."""
    if name == "ssh_private_key":
        try:
            import asyncssh

            key = asyncssh.import_private_key(value)
            public = key.export_public_key("openssh").decode()
            return f"{key.get_algorithm()} {ssh_connector.fingerprint(public)}"
        except Exception:  # an encrypted key needs its passphrase: only say it is set
            return _("set (encrypted key)")
    return _("set, %(count)s characters") % {"count": len(value)}


def _validate(project: Project, data: ClusterData, cluster: Cluster | None) -> dict[str, str]:
    errors: dict[str, str] = {}
    if data.candidate.project_id != project.pk:
        errors["candidate"] = _("The candidate belongs to another project.")
    if data.kind not in ClusterKind.values:
        errors["kind"] = _("Unknown kind of cluster.")
    name = data.name.strip()
    if not name:
        errors["name"] = _("Give the cluster a name.")
    elif (
        Cluster.objects.filter(project=project, name=name)
        .exclude(pk__in=[cluster.pk] if cluster else [])
        .exists()
    ):
        errors["name"] = _("Another cluster of this project has that name.")
    if data.kind in (ClusterKind.SSH, ClusterKind.SLURM_SSH):
        probe = Cluster(hosts=data.hosts, ssh_port=data.ssh_port)
        nodes = probe.node_addresses()
        if not nodes:
            errors["hosts"] = _("List at least one node (host or host:port, one per line).")
        elif len(nodes) > 5000:
            errors["hosts"] = _("At most 5,000 nodes per cluster.")
        else:
            bad = [h for h, p in nodes if not h or any(c.isspace() for c in h) or not 0 < p < 65536]
            if bad:
                errors["hosts"] = _("Not a host name or address: %(host)s") % {"host": bad[0][:80]}
        if not data.ssh_user.strip():
            errors["ssh_user"] = _("Say which user the probe logs in as.")
    if data.kind in (ClusterKind.KUBERNETES, ClusterKind.SLURM_REST):
        url = data.api_url.strip()
        wanted = data.kind == ClusterKind.SLURM_REST or url
        if wanted and (not url.startswith(("https://", "http://")) or len(url) < 10):
            errors["api_url"] = _("Give the API address as an http(s):// URL.")
        if data.kind == ClusterKind.SLURM_REST and not data.slurm_user.strip():
            errors["slurm_user"] = _("Say which Slurm user the token belongs to.")
    namespace = data.failure_namespace.strip()
    if data.kind == ClusterKind.KUBERNETES and data.controlled_failures and not namespace:
        errors["failure_namespace"] = _(
            "Controlled failures create objects: say in which namespace."
        )
    if data.schedule_minutes is not None and not 5 <= data.schedule_minutes <= 7 * 24 * 60:
        errors["schedule_minutes"] = _("Probe between every 5 minutes and once a week.")
    return errors


def cluster_save(
    *,
    project: Project,
    data: ClusterData,
    secrets: dict[str, str],
    actor: User | None,
    cluster: Cluster | None = None,
    clear: tuple[str, ...] = (),
) -> Cluster:
    """Register a cluster, or change one. Secrets given replace the stored ones (an empty
    value keeps what is stored; `clear` names secrets to remove); they are encrypted under the
    current key with the row bound as associated data. Nothing secret reaches the history."""
    errors = _validate(project, data, cluster)
    allowed = SECRET_FIELDS.get(data.kind, ())
    given = {k: v for k, v in secrets.items() if v}
    for name in given:
        if name not in allowed:
            errors[name] = _("This kind of cluster takes no %(name)s.") % {"name": name}
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        if cluster is None:
            row = Cluster(
                project=project, created_by=actor if actor and actor.is_authenticated else None
            )
            current: dict[str, str] = {}
            verb = "cluster.registered"
        else:
            row = Cluster.objects.select_for_update().get(pk=cluster.pk, project=project)
            try:
                current = row.read_secrets()
            except credentials.CredentialsUnavailable:
                if not given and not clear:
                    raise
                current = {}  # the old ones cannot be read: what is given now replaces them
            verb = "cluster.changed"
        kind_changed = cluster is not None and row.kind != data.kind
        row.name = data.name.strip()
        row.kind = data.kind
        row.candidate = data.candidate
        row.hosts = data.hosts.strip()
        row.ssh_user = data.ssh_user.strip()
        row.ssh_port = data.ssh_port
        row.api_url = data.api_url.strip()
        row.slurm_user = data.slurm_user.strip()
        row.expected_gpus_per_node = data.expected_gpus_per_node
        row.controlled_failures = data.controlled_failures
        row.failure_namespace = data.failure_namespace.strip()
        row.schedule_minutes = data.schedule_minutes
        row.save()
        merged = {} if kind_changed else {k: v for k, v in current.items() if k in allowed}
        merged.update(given)
        for name in clear:
            merged.pop(name, None)
        row.secrets = (
            credentials.encrypt(merged, table=Cluster.TABLE, pk=row.pk, field="secrets")
            if merged
            else ""
        )
        row.secret_summary = {name: _masked(name, value) for name, value in merged.items()}
        known = {f"{h}:{p}" for h, p in row.node_addresses()}
        row.host_keys = {k: v for k, v in row.host_keys.items() if k in known}
        row.seen_host_keys = {k: v for k, v in row.seen_host_keys.items() if k in known}
        row.save(update_fields=["secrets", "secret_summary", "host_keys", "seen_host_keys"])
        event_record(
            project=project,
            actor=actor,
            verb=verb,
            subject=row.name,
            after={
                "kind": row.kind,
                "candidate": data.candidate.slug,
                "nodes": len(row.node_addresses()) if row.uses_ssh else None,
                "api_url": row.api_url or None,
                "secrets set": sorted(merged),  # names only, never values
                "controlled failures": row.controlled_failures,
            },
        )
    return row


def cluster_delete(*, cluster: Cluster, actor: User | None) -> None:
    """Remove a cluster; its probe runs stay, as evidence."""
    with transaction.atomic():
        event_record(
            project=cluster.project, actor=actor, verb="cluster.deleted", subject=cluster.name
        )
        cluster.delete()


# --- connection test and host keys -------------------------------------------------------


@dataclass(frozen=True)
class NodeCheck:
    """What "test connection" found for one node."""

    node: str  # host:port
    address: str
    fingerprint: str
    state: str  # "pinned", "new", "changed", "refused", "unreachable"
    message: str


def _address(host: str, port: int) -> str:
    return guard.checked_address(host, port, settings.PROBE_ALLOWED_NETWORKS)


def cluster_test_connection(*, cluster: Cluster, actor: User | None) -> list[NodeCheck]:
    """Reach each node (SSH kinds: read the host key it presents, for a person to confirm) and
    say what was found. Host keys seen are kept as seen, not trusted, until confirmed."""
    if not cluster.uses_ssh:
        return _endpoint_check(cluster)
    checks: list[NodeCheck] = []
    seen: dict[str, dict[str, str]] = {}
    for host, port in cluster.node_addresses()[:200]:
        label = f"{host}:{port}"
        try:
            address = _address(host, port)
        except guard.GuardRefused as exc:
            checks.append(NodeCheck(label, "", "", "refused", str(exc)))
            continue
        try:
            key = ssh_connector.host_key_of(address, port, timeout=10)
        except ssh_connector.ConnectorError as exc:
            checks.append(NodeCheck(label, address, "", "unreachable", str(exc)))
            continue
        print_ = ssh_connector.fingerprint(key)
        pinned = cluster.host_keys.get(label)
        if pinned and pinned["key"].split()[:2] == key.split()[:2]:
            state, message = "pinned", _("The host key matches the pinned one.")
        elif pinned:
            state = "changed"
            message = _(
                "The host key CHANGED since it was pinned (%(old)s): probes refuse this node "
                "until the new key is confirmed."
            ) % {"old": pinned["fingerprint"]}
        else:
            state, message = "new", _("Not pinned yet: compare the fingerprint, then confirm it.")
        if state != "pinned":
            seen[label] = {"key": key, "fingerprint": print_, "address": address}
        checks.append(NodeCheck(label, address, print_, state, message))
    with transaction.atomic():
        row = Cluster.objects.select_for_update().get(pk=cluster.pk)
        row.seen_host_keys = seen
        row.save(update_fields=["seen_host_keys"])
    cluster.seen_host_keys = seen
    return checks


def _endpoint_check(cluster: Cluster) -> list[NodeCheck]:
    """Ask the API (Kubernetes or slurmrestd) with the stored credentials: does it answer as
    what it should be, and does it accept them? Reads only; nothing is created."""
    from poc.probes.connectors import kubernetes as kube
    from poc.probes.connectors import slurm

    if cluster.kind == ClusterKind.AGENT:
        return []
    label = cluster.api_url or "kubeconfig"
    try:
        secrets = cluster.read_secrets()
    except credentials.CredentialsUnavailable as exc:
        return [
            NodeCheck(
                label, "", "", "refused", _("The credentials cannot be read: %(e)s") % {"e": exc}
            )
        ]
    seen: list[str] = []
    refusals: list[str] = []

    def resolve(error: type[Exception]) -> Callable[[str, int], str]:
        def checked(host: str, port: int) -> str:
            try:
                address = _address(host, port)
            except guard.GuardRefused as exc:
                refusals.append(str(exc))
                raise error(str(exc)) from None
            seen.append(address)
            return address

        return checked

    timeout = float(min(settings.PROBE_COMMAND_TIMEOUT, 15))
    try:
        if cluster.kind == ClusterKind.KUBERNETES:
            found = kube.check_kubernetes(
                kube.KubeTarget(
                    api_url=cluster.api_url,
                    token=secrets.get("bearer_token", ""),
                    ca_pem=secrets.get("ca_pem", ""),
                    kubeconfig=secrets.get("kubeconfig", ""),
                    timeout=timeout,
                ),
                resolve=resolve(kube.ConnectorError),
            )
            label = str(found["server"])
            ok = bool(found["nodes_readable"])
            answered = _("Kubernetes %(version)s answers and these credentials may read nodes.")
            denied = _(
                "Kubernetes %(version)s answers, but these credentials may not read nodes "
                "(%(reason)s): apply the read-only ClusterRole to the account."
            )
            version = found["version"] or _("(version not readable)")
        else:
            found = slurm.check_slurm_rest(
                dataclasses.replace(_slurm_target(cluster, secrets), timeout=timeout),
                resolve=resolve(slurm.ConnectorError),
            )
            label = str(found["server"])
            ok = bool(found["accepted"])
            answered = _("slurmrestd answers (API %(version)s) and accepts the user and token.")
            denied = _("slurmrestd answers (API %(version)s) but refuses: %(reason)s")
            version = found["api_version"]
    except (kube.ConnectorError, slurm.ConnectorError) as exc:
        text = str(exc)
        refused = bool(refusals) or "refused the credentials" in text
        state = "refused" if refused else "unreachable"
        return [NodeCheck(label, seen[0] if seen else "", "", state, text[:500])]
    address = seen[0] if seen else ""
    if ok:
        return [NodeCheck(label, address, "", "pinned", answered % {"version": version})]
    message = denied % {"version": version, "reason": str(found["reason"])[:300]}
    return [NodeCheck(label, address, "", "refused", message)]


def cluster_confirm_host_keys(
    *, cluster: Cluster, fingerprints: dict[str, str], actor: User | None
) -> list[str]:
    """Pin the host keys a person confirmed: `fingerprints` maps node to the fingerprint they
    compared, and only a key seen with exactly that fingerprint is pinned (a key that changed
    after the page was shown is not). Returns the nodes pinned."""
    pinned: list[str] = []
    with transaction.atomic():
        row = Cluster.objects.select_for_update().get(pk=cluster.pk)
        for node, confirmed in fingerprints.items():
            seen = row.seen_host_keys.get(node)
            if not seen or seen["fingerprint"] != confirmed:
                continue
            previous = row.host_keys.get(node)
            row.host_keys[node] = {
                "key": seen["key"],
                "fingerprint": seen["fingerprint"],
                "confirmed_by": actor.get_username() if actor else "",
                "confirmed_at": timezone.now().isoformat(),
            }
            row.seen_host_keys.pop(node)
            pinned.append(node)
            event_record(
                project=row.project,
                actor=actor,
                verb="cluster.host_key_pinned",
                subject=f"{row.name} · {node}",
                before={"fingerprint": previous["fingerprint"]} if previous else None,
                after={"fingerprint": seen["fingerprint"]},
            )
        if not pinned:
            raise ValidationError(
                _("No key was pinned: test the connection again and confirm what it shows.")
            )
        row.save(update_fields=["host_keys", "seen_host_keys"])
    cluster.host_keys, cluster.seen_host_keys = row.host_keys, row.seen_host_keys
    return pinned


# --- starting, cancelling, recovering ----------------------------------------------------


def _queue(run: ProbeRun) -> bool:
    """Send the run to the workers; when the broker cannot take it, the run waits, queued and
    marked unsent, and the beat sends it again once the broker answers. True when sent."""
    try:
        send(PROBE_RUN_TASK, run.pk)
    except Exception as exc:  # an unreachable broker is recorded, not an error page
        log.warning("could not queue probe run %s: %s: %s", run.pk, type(exc).__name__, exc)
        ProbeRun.objects.filter(pk=run.pk, status=ProbeStatus.QUEUED).update(
            unsent=True,
            error=_(
                "The worker queue could not be reached (%(error)s): the run waits and is sent "
                "as soon as it answers."
            )
            % {"error": type(exc).__name__},
        )
        return False
    ProbeRun.objects.filter(pk=run.pk, status=ProbeStatus.QUEUED, unsent=True).update(
        unsent=False, error=""
    )
    return True


def probe_runs_resend() -> list[int]:
    """Send again the runs the broker could not take (called by the beat each minute)."""
    sent = []
    for run in ProbeRun.objects.filter(status=ProbeStatus.QUEUED, unsent=True).order_by("pk"):
        if not _queue(run):
            break  # still unreachable: the next tick tries again
        sent.append(run.pk)
    return sent


def probe_run_start(
    *, cluster: Cluster, actor: User | None, with_failures: bool | None = None
) -> ProbeRun:
    """Queue a probe run of a cluster; the worker takes it up after the commit."""
    if cluster.kind == ClusterKind.AGENT:
        raise ValidationError(
            _("This cluster is reached by its push agent only: run workbench-probe on its nodes.")
        )
    failures = cluster.controlled_failures if with_failures is None else with_failures
    if failures and not cluster.controlled_failures:
        raise ValidationError(_("Controlled failures are not enabled for this cluster."))
    if failures and cluster.kind == ClusterKind.SSH:
        failures = False  # plain SSH nodes have no scheduler to refuse a job
    active = ProbeRun.objects.filter(
        cluster=cluster, status__in=[ProbeStatus.QUEUED, ProbeStatus.RUNNING]
    ).first()
    if active is not None:
        return active
    total = len(cluster.node_addresses()) if cluster.uses_ssh else 1
    with transaction.atomic():
        run = ProbeRun.objects.create(
            project=cluster.project,
            candidate=cluster.candidate,
            cluster=cluster,
            source=SOURCE_OF_KIND[cluster.kind],
            status=ProbeStatus.QUEUED,
            parser_version=parsers.PARSER_VERSION,
            facts_format=FACTS_FORMAT,
            created_by=actor if actor is not None and actor.is_authenticated else None,
            queued_at=timezone.now(),
            progress_total=total,
            with_failures=failures,
        )
        event_record(
            project=cluster.project,
            actor=actor,
            verb="probe.started",
            subject=f"{cluster.name} · probe {run.pk}",
            after={"controlled failures": failures},
        )
        transaction.on_commit(lambda: _queue(run))
    return run


def probe_run_cancel(*, run: ProbeRun, actor: User | None) -> ProbeRun:
    """Ask a queued or running probe to stop: a queued one ends at once, a running one after
    the node it is reading (objects it created are still cleaned up)."""
    with transaction.atomic():
        row = ProbeRun.objects.select_for_update().get(pk=run.pk)
        if row.status in FINISHED_STATUSES:
            return row
        if row.status == ProbeStatus.QUEUED:
            row.status = ProbeStatus.CANCELLED
            row.finished_at = timezone.now()
            row.error = _("Cancelled before a worker took it up.")
        row.cancel_requested = True
        row.save(update_fields=["status", "finished_at", "error", "cancel_requested"])
        event_record(
            project=row.project, actor=actor, verb="probe.cancelled", subject=f"probe {row.pk}"
        )
    return row


def probe_runs_recover(*, now: datetime | None = None) -> list[int]:
    """Runs whose worker was lost (running past the hard time limit, or queued and never
    taken up for as long): queued again while attempts remain, else failed with the reason."""
    now = now or timezone.now()
    limit = timedelta(seconds=hard_time_limit()) + LOST_AFTER
    stuck = ProbeRun.objects.filter(
        Q(status=ProbeStatus.RUNNING, work_started_at__lt=now - limit)
        | Q(status=ProbeStatus.QUEUED, unsent=False, queued_at__lt=now - limit)
    ).values_list("pk", flat=True)
    touched = []
    for pk in stuck:
        with transaction.atomic():
            row = ProbeRun.objects.select_for_update().filter(pk=pk).first()
            if row is None or row.status not in (ProbeStatus.QUEUED, ProbeStatus.RUNNING):
                continue
            if row.attempts >= MAX_ATTEMPTS or row.cancel_requested:
                row.status = ProbeStatus.FAILED
                row.error = _(
                    "The worker running this probe was lost %(count)s times: the run was given up."
                ) % {"count": row.attempts}
                row.finished_at = now
                row.work_started_at = None
                row.save(update_fields=["status", "error", "finished_at", "work_started_at"])
            else:
                row.status = ProbeStatus.QUEUED
                row.queued_at = now
                row.work_started_at = None
                row.save(update_fields=["status", "queued_at", "work_started_at"])
                transaction.on_commit(functools.partial(_queue, row))
            touched.append(pk)
    return touched


def probe_schedule_due(*, now: datetime | None = None) -> list[int]:
    """Start a run for every cluster whose schedule is due (called by Celery beat)."""
    now = now or timezone.now()
    started = []
    for cluster in Cluster.objects.filter(schedule_minutes__isnull=False).select_related(
        "project", "candidate"
    ):
        if cluster.kind == ClusterKind.AGENT:
            continue
        due = cluster.last_scheduled_at is None or cluster.last_scheduled_at <= now - timedelta(
            minutes=cluster.schedule_minutes or 0
        )
        if not due:
            continue
        updated = Cluster.objects.filter(
            pk=cluster.pk, last_scheduled_at=cluster.last_scheduled_at
        ).update(last_scheduled_at=now)
        if updated:  # another beat or worker did not take it first
            started.append(probe_run_start(cluster=cluster, actor=None).pk)
    return started


# --- executing ----------------------------------------------------------------------------


def _claim(run_id: int) -> ProbeRun | None:
    """Take up a queued run under a row lock; None when it is not waiting for a worker."""
    with transaction.atomic():
        run = (
            ProbeRun.objects.select_for_update(of=("self",))
            .select_related("cluster", "project", "candidate")
            .filter(pk=run_id)
            .first()
        )
        if run is None or run.status != ProbeStatus.QUEUED or run.work_started_at is not None:
            return None
        if run.cancel_requested:
            return None
        if run.attempts:
            # An earlier attempt's worker was lost part way: what it stored goes, so that the
            # run ends with each node once.
            ProbeNode.objects.filter(run=run).delete()
            ProbeOutput.objects.filter(run=run).delete()
            run.progress_done = 0
            run.cluster_facts = {}
        run.status = ProbeStatus.RUNNING
        run.work_started_at = timezone.now()
        run.attempts += 1
        run.error = ""
        run.unsent = False
        run.save(
            update_fields=[
                "unsent",
                "status",
                "work_started_at",
                "attempts",
                "error",
                "progress_done",
                "cluster_facts",
            ]
        )
        return run


class RunTimedOut(Exception):
    """The run went past PROBE_SOFT_TIME_LIMIT (its own clock, whatever the worker pool)."""


class _Claim:
    """The run's row, only while this worker's claim on it stands, and the run's deadline.

    Celery enforces time limits only in its prefork pool (not under `--pool=solo`, which
    `make run` uses, nor threads), so the run keeps its own: past PROBE_SOFT_TIME_LIMIT no
    further node or step is started and the run ends timed out with what it read.
    """

    def __init__(self, run: ProbeRun) -> None:
        self.run = run
        self.deadline = time.monotonic() + settings.PROBE_SOFT_TIME_LIMIT

    def past_deadline(self) -> bool:
        return time.monotonic() >= self.deadline

    def check_deadline(self) -> None:
        if self.past_deadline():
            raise RunTimedOut()

    def keep_before_deadline(
        self, cluster: Cluster, collected: "_Collected", facts: "ConnectorFacts"
    ) -> None:
        """Past the deadline, keep what the probe read and end the run timed out."""
        if self.past_deadline():
            _keep_facts(self.run, facts)
            _store_gpu_nodes(self.run, cluster, collected, _gpu_nodes(facts))
            raise RunTimedOut()

    def rows(self) -> QuerySet[ProbeRun]:
        return ProbeRun.objects.filter(
            pk=self.run.pk, status=ProbeStatus.RUNNING, work_started_at=self.run.work_started_at
        )

    def holds(self) -> bool:
        return self.rows().filter(cancel_requested=False).exists()

    def advance(self) -> bool:
        return bool(self.rows().update(progress_done=F("progress_done") + 1))


@dataclass
class _Collected:
    facts: list[NodeFacts]
    cited: list[StoredFile]
    verdicts: list[str]
    failed: list[str]
    unreachable: int = 0
    position: int = 0


def _store_failed_node(
    run: ProbeRun, collected: _Collected, host: str, error: str, outputs: list[RawOutput]
) -> None:
    with files_removed_on_failure() as created, transaction.atomic():
        node = ProbeNode.objects.create(
            run=run,
            host=host[:255],
            position=collected.position,
            facts=new_node(host=host),
            health={},
            verdict="",
            error=error[:2000],
        )
        _store_outputs(run, node, [o for o in outputs if o.text or o.error], created)
    collected.position += 1
    collected.failed.append(f"{host}: {error}")


def _store_read_node(run: ProbeRun, collected: _Collected, node: NodeInput) -> None:
    judged = health.judge_node(node.facts)
    with files_removed_on_failure() as created, transaction.atomic():
        cited = store_nodes(run, [(node, judged)], created, several=True, start=collected.position)
    collected.position += 1
    collected.facts.append(node.facts)
    collected.verdicts.append(judged["verdict"])
    room = MAX_CITED - len(collected.cited)
    if room > 0:
        collected.cited.extend(cited[:room])


def _int_or_none(value: JSON) -> int | None:
    return value if isinstance(value, int) else None


def _raw_outputs(outputs: list[JSONObject]) -> list[RawOutput]:
    """An SSH node's command outputs (bundle-shaped) as raw outputs to keep."""
    return [
        RawOutput(
            str(o.get("name") or "output")[:500],
            str(o.get("stdout") or ""),
            _int_or_none(o.get("exit_code")),
            str(o.get("error") or o.get("stderr") or "")[:2000]
            if not o.get("stdout")
            else str(o.get("error") or ""),
        )
        for o in outputs
    ]


def _command_failures(outputs: list[JSONObject]) -> str:
    """Why the GPU commands of a node gave nothing: their own errors, first ones first."""
    reasons = []
    for output in outputs:
        if not str(output.get("name", "")).startswith("nvidia-smi"):
            continue
        if output.get("error"):
            reasons.append(f"{str(output['name'])[:40]}: {output['error']}")
        elif output.get("exit_code") not in (0, None):
            detail = str(output.get("stderr") or output.get("stdout") or "").strip().splitlines()
            reasons.append(
                f"{str(output['name'])[:40]}: exit status {output['exit_code']}"
                + (f" ({detail[0][:160]})" if detail else "")
            )
    return "; ".join(reasons[:3])


def _ssh_nodes(
    cluster: Cluster, secrets: dict[str, str], collected: _Collected, run: ProbeRun
) -> Iterator[ssh_connector.SshNode]:
    for host, port in cluster.node_addresses():
        label = f"{host}:{port}"
        try:
            address = _address(host, port)
        except guard.GuardRefused as exc:
            _store_failed_node(run, collected, label, str(exc), [])
            _Claim(run).advance()
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


def _watch_cancel(claim: "_Claim", cancel: threading.Event) -> None:
    """Set `cancel` as soon as a person cancels the run, its claim is lost or its deadline
    passes, so that no node is started after that; the nodes being read finish."""
    from django.db import connection

    try:
        while not cancel.wait(CANCEL_POLL_SECONDS):
            if claim.past_deadline():
                cancel.set()
                break
            row = (
                ProbeRun.objects.filter(pk=claim.run.pk)
                .values_list("status", "work_started_at", "cancel_requested")
                .first()
            )
            if row is None:  # not visible from here (or gone): the writer finds out itself
                continue
            status, started, cancelled = row
            if cancelled or status != ProbeStatus.RUNNING or started != claim.run.work_started_at:
                cancel.set()
    finally:
        connection.close()


def _execute_ssh(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: _Claim, collected: _Collected
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
                _store_failed_node(
                    run, collected, label, result.error, _raw_outputs(result.outputs)
                )
                if result.failure in ("connect", "timeout"):
                    collected.unreachable += 1
            else:
                try:
                    (node,) = nodes_from_bundle(
                        result.bundle(expected_gpus=cluster.expected_gpus_per_node)
                    )
                except ProbeInputError as exc:
                    _store_failed_node(
                        run,
                        collected,
                        label,
                        _command_failures(result.outputs) or str(exc),
                        _raw_outputs(result.outputs),
                    )
                else:
                    _store_read_node(run, collected, node)
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


UNREACHABLE_WORDS = ("cannot connect", "connection refused", "timed out", "unreachable", "no route")


def _connector_error(exc: Exception) -> Exception:
    """A connector's failure as the run reports it: unreachable (worth a retry) or final."""
    text = str(exc)
    if any(word in text.lower() for word in UNREACHABLE_WORDS):
        return ClusterUnreachable(text)
    return RunFailed(text)


class RunFailed(Exception):
    """The cluster answered, but the probe cannot go on; the message says why."""


def _resolver(error: type[Exception]) -> Callable[[str, int], str]:
    def resolve(host: str, port: int) -> str:
        try:
            return _address(host, port)
        except guard.GuardRefused as exc:
            raise error(str(exc)) from None

    return resolve


def _store_outputs(
    run: ProbeRun, node: ProbeNode | None, outputs: list[RawOutput], created: list[str]
) -> None:
    """Raw outputs kept as evidence of the run (of one node, or of the run as a whole), after
    the ones it already has."""
    base = ProbeOutput.objects.filter(run=run).count()
    rows = []
    for offset, output in enumerate(outputs):
        stored = _store(run.project, output.text, created) if output.text else None
        rows.append(
            ProbeOutput(
                run=run,
                node=node,
                name=output.name[:500],
                exit_code=output.exit_code,
                error=output.error[:2000],
                file=stored[0] if stored else "",
                sha256=stored[1] if stored else "",
                size=stored[2] if stored else 0,
                position=base + offset,
            )
        )
    ProbeOutput.objects.bulk_create(rows)


def _store_raw(run: ProbeRun, raw: list[JSONObject], prefix: str = "") -> None:
    """A connector's raw responses, kept as evidence of the run (no node of their own)."""
    outputs = [
        RawOutput(
            f"{prefix}{item.get('name') or 'response'}",
            str(item.get("text") or ""),
            _int_or_none(item.get("status")),
            str(item.get("note") or ""),
        )
        for item in raw
    ]
    with files_removed_on_failure() as created, transaction.atomic():
        _store_outputs(run, None, outputs, created)


# What the Kubernetes and Slurm connectors read: a JSON document, except its "gpu_nodes", the
# GPU nodes found, which are NodeFacts documents.
type ConnectorFacts = dict[str, JSON | list[NodeFacts]]


def _gpu_nodes(facts: ConnectorFacts) -> list[NodeFacts]:
    return cast("list[NodeFacts]", facts.get("gpu_nodes", []))


def _keep_facts(run: ProbeRun, facts: ConnectorFacts, extra: JSONObject | None = None) -> None:
    kept = {k: v for k, v in facts.items() if k not in ("raw", "gpu_nodes")}
    if extra:
        kept.update(extra)
    ProbeRun.objects.filter(pk=run.pk, work_started_at=run.work_started_at).update(
        cluster_facts=kept
    )
    run.cluster_facts = kept


def _store_gpu_nodes(
    run: ProbeRun, cluster: Cluster, collected: _Collected, gpu_nodes: list[NodeFacts]
) -> None:
    ProbeRun.objects.filter(pk=run.pk).update(progress_total=max(len(gpu_nodes), 1))
    for facts in gpu_nodes:
        if cluster.expected_gpus_per_node and facts.get("expected_gpu_count") is None:
            facts["expected_gpu_count"] = cluster.expected_gpus_per_node
        _store_read_node(run, collected, NodeInput(facts, []))


def _execute_kubernetes(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: _Claim, collected: _Collected
) -> None:
    from poc.probes.connectors import kubernetes as kube

    target = kube.KubeTarget(
        api_url=cluster.api_url,
        token=secrets.get("bearer_token", ""),
        ca_pem=secrets.get("ca_pem", ""),
        kubeconfig=secrets.get("kubeconfig", ""),
        timeout=float(settings.PROBE_COMMAND_TIMEOUT),
    )
    resolve = _resolver(kube.ConnectorError)
    try:
        facts = kube.probe_kubernetes(target, resolve=resolve)
    except kube.ConnectorError as exc:
        raise _connector_error(exc) from None
    _store_raw(run, facts.get("raw", []))
    failures: JSONObject = {}
    if run.with_failures:
        claim.keep_before_deadline(cluster, collected, facts)
        namespace = cluster.failure_namespace or "default"
        # Leftovers of earlier runs that could not clean up (a lost worker) go first.
        swept: list[JSON] = []
        earlier = (
            ProbeRun.objects.filter(cluster=cluster, with_failures=True)
            .exclude(pk=run.pk)
            .exclude(status=ProbeStatus.DONE)
            .order_by("-pk")
            .values_list("pk", flat=True)[:10]
        )
        for pk in earlier:
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
            _store_raw(run, outcome.pop("raw", []), prefix="controlled failure: ")
            failures = {**outcome, "swept": swept}
    _keep_facts(run, facts, {"controlled_failures": failures} if run.with_failures else None)
    _store_gpu_nodes(run, cluster, collected, _gpu_nodes(facts))
    claim.advance()


def _slurm_target(cluster: Cluster, secrets: dict[str, str]) -> "slurm.SlurmRestTarget":
    from poc.probes.connectors import slurm

    return slurm.SlurmRestTarget(
        url=cluster.api_url,
        user=cluster.slurm_user,
        token=secrets.get("jwt", ""),
        timeout=float(settings.PROBE_COMMAND_TIMEOUT),
    )


def _execute_slurm_rest(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: _Claim, collected: _Collected
) -> None:
    from poc.probes.connectors import slurm

    target = _slurm_target(cluster, secrets)
    resolve = _resolver(slurm.ConnectorError)
    try:
        facts = slurm.probe_slurm_rest(target, resolve=resolve)
    except slurm.ConnectorError as exc:
        raise _connector_error(exc) from None
    _store_raw(run, facts.get("raw", []))
    failures: JSONObject = {}
    if run.with_failures:
        claim.keep_before_deadline(cluster, collected, facts)
        try:
            outcome = slurm.over_quota_rest(target, resolve=resolve)
        except slurm.ConnectorError as exc:
            failures = {"error": str(exc), "scenarios": []}
        else:
            _store_raw(run, outcome.pop("raw", []), prefix="controlled failure: ")
            failures = {"scenarios": [outcome]}
    _keep_facts(run, facts, {"controlled_failures": failures} if run.with_failures else None)
    _store_gpu_nodes(run, cluster, collected, _gpu_nodes(facts))
    claim.advance()


def _execute_slurm_ssh(
    run: ProbeRun, cluster: Cluster, secrets: dict[str, str], claim: _Claim, collected: _Collected
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
    _store_raw(run, raw)
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
            _store_raw(
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
    _keep_facts(run, facts, {"controlled_failures": failures} if run.with_failures else None)
    _store_gpu_nodes(run, cluster, collected, _gpu_nodes(facts))
    claim.advance()


type Executor = Callable[[ProbeRun, Cluster, dict[str, str], _Claim, _Collected], None]

EXECUTORS: dict[str, Executor] = {
    ClusterKind.SSH: _execute_ssh,
    ClusterKind.KUBERNETES: _execute_kubernetes,
    ClusterKind.SLURM_REST: _execute_slurm_rest,
    ClusterKind.SLURM_SSH: _execute_slurm_ssh,
}


def _finish(
    run: ProbeRun, claim: _Claim, status: str, error: str = "", collected: _Collected | None = None
) -> None:
    with transaction.atomic():
        row = ProbeRun.objects.select_for_update().filter(pk=run.pk).first()
        if (
            row is None
            or row.status != ProbeStatus.RUNNING
            or row.work_started_at != run.work_started_at
        ):
            return  # the claim was taken over: write nothing
        row.status = status
        row.error = error[:4000]
        row.finished_at = timezone.now()
        row.work_started_at = None
        if collected is not None:
            row.node_count = collected.position
            row.gpu_count = sum(len(f["gpus"]) for f in collected.facts)
            row.verdict = _worst(collected.verdicts) if collected.verdicts else ""
        row.save()
        if collected is not None and (collected.facts or row.cluster_facts):
            record_run_results(
                row,
                collected.facts,
                collected.cited,
                actor=run.created_by,
                cluster_facts=row.cluster_facts or None,
            )
        event_record(
            project=row.project,
            actor=None,
            verb="probe.finished",
            subject=f"{row.cluster.name if row.cluster else row.candidate.slug} · probe {row.pk}",
            after={"status": status, "nodes": row.node_count, "gpus": row.gpu_count},
        )


def run_has_facts(run: ProbeRun) -> bool:
    return ProbeRun.objects.filter(pk=run.pk).exclude(cluster_facts={}).exists()


def probe_run_execute(*, run_id: int, final_attempt: bool = True) -> ProbeRun | None:
    """Run a queued probe (called by the worker). Raises ClusterUnreachable when nothing
    answered and another attempt may follow; every other failure ends the run with its reason."""
    run = _claim(run_id)
    if run is None:
        return ProbeRun.objects.filter(pk=run_id).first()
    claim = _Claim(run)
    collected = _Collected(facts=[], cited=[], verdicts=[], failed=[])
    cluster = run.cluster
    if cluster is None:
        _finish(run, claim, ProbeStatus.FAILED, _("The cluster was removed."))
        return run
    try:
        secrets = cluster.read_secrets()
    except credentials.CredentialsUnavailable as exc:
        _finish(
            run, claim, ProbeStatus.FAILED, _("The credentials cannot be read: %(e)s") % {"e": exc}
        )
        return run
    executor = EXECUTORS.get(cluster.kind)
    if executor is None:
        _finish(run, claim, ProbeStatus.FAILED, _("This kind of cluster cannot be probed yet."))
        return run
    try:
        executor(run, cluster, secrets, claim, collected)
    except ClusterUnreachable as exc:
        if not final_attempt:
            ProbeRun.objects.filter(pk=run.pk, work_started_at=run.work_started_at).update(
                status=ProbeStatus.QUEUED,
                work_started_at=None,
                error=str(exc)[:4000],
                progress_done=0,
                queued_at=timezone.now(),
            )
            ProbeNode.objects.filter(run=run).delete()
            ProbeOutput.objects.filter(run=run).delete()
            raise
        _finish(run, claim, ProbeStatus.FAILED, str(exc), collected)
        return run
    except RunFailed as exc:
        _finish(run, claim, ProbeStatus.FAILED, str(exc), collected)
        return run
    except Exception as exc:
        from celery.exceptions import SoftTimeLimitExceeded

        if isinstance(exc, RunTimedOut | SoftTimeLimitExceeded):
            _finish(
                run,
                claim,
                ProbeStatus.TIMED_OUT,
                _("The probe ran past its time limit (%(s)s s); the nodes read so far are kept.")
                % {"s": settings.PROBE_SOFT_TIME_LIMIT},
                collected,
            )
            return run
        log.exception("probe run %s failed", run.pk)
        _finish(run, claim, ProbeStatus.FAILED, f"{type(exc).__name__}: {exc}"[:500], collected)
        return run
    cancelled = ProbeRun.objects.filter(pk=run.pk, cancel_requested=True).exists()
    if cancelled:
        _finish(
            run,
            claim,
            ProbeStatus.CANCELLED,
            _("Cancelled; the nodes read so far are kept."),
            collected,
        )
    elif not collected.facts and (cluster.uses_ssh or not run_has_facts(run)):
        reasons = "; ".join(collected.failed[:3]) or _("no node was read")
        if collected.unreachable == collected.position and collected.position and not final_attempt:
            ProbeRun.objects.filter(pk=run.pk, work_started_at=run.work_started_at).update(
                status=ProbeStatus.QUEUED,
                work_started_at=None,
                error=reasons[:4000],
                progress_done=0,
                queued_at=timezone.now(),
            )
            ProbeNode.objects.filter(run=run).delete()
            raise ClusterUnreachable(reasons)
        _finish(
            run,
            claim,
            ProbeStatus.FAILED,
            _("No node could be read: %(r)s") % {"r": reasons},
            collected,
        )
    elif collected.failed:
        _finish(
            run,
            claim,
            ProbeStatus.PARTIAL,
            _("%(count)s of %(total)s nodes could not be read: %(r)s")
            % {
                "count": len(collected.failed),
                "total": collected.position,
                "r": "; ".join(collected.failed[:3]),
            },
            collected,
        )
    else:
        _finish(run, claim, ProbeStatus.DONE, "", collected)
    return run


# --- controlled failures ------------------------------------------------------------------


FAILURE_LABEL_KEY = "workbench.probe/run"


def failure_label(run_id: int | str) -> str:
    """The label on everything a controlled failure creates (the sweeper looks for it)."""
    return f"{FAILURE_LABEL_KEY}={run_id}"


def _last_cluster_facts(cluster: Cluster) -> JSONObject:
    """What the cluster's latest run that read it said (its cluster facts), or {}."""
    facts = (
        ProbeRun.objects.filter(cluster=cluster, status__in=(ProbeStatus.DONE, ProbeStatus.PARTIAL))
        .exclude(cluster_facts={})
        .order_by("-pk")
        .values_list("cluster_facts", flat=True)
        .first()
    )
    return facts if isinstance(facts, dict) else {}


def _list(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []


def _object(value: JSON) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _kubernetes_sizes(cluster: Cluster) -> tuple[int, int | None, str]:
    """(GPUs the Job asks for, GPUs the quota Pod asks for or None, where they come from).

    A run sizes both from the cluster as it is then (largest node's allocatable GPUs plus one;
    the namespace's GPU quota left plus one); the page uses the latest run's reading of it, or
    the GPUs a node should have before any run."""
    namespace = cluster.failure_namespace or "default"
    facts = _last_cluster_facts(cluster)
    counts = [
        _object(node.get("gpu")).get("allocatable")
        for node in _list(facts.get("nodes"))
        if isinstance(node, dict)
    ]
    known = [count for count in counts if isinstance(count, int)]
    quota_left = None
    for quota in _list(facts.get("quotas")):
        if not isinstance(quota, dict) or quota.get("namespace") != namespace:
            continue
        if quota.get("applies_to_probe_pod") is False:
            continue  # scoped to other pods: the run creates no Pod against it
        hard = _object(quota.get("hard")).get("requests.nvidia.com/gpu")
        used = _object(quota.get("used")).get("requests.nvidia.com/gpu") or 0
        if isinstance(hard, int) and isinstance(used, int):
            left = hard - used
            quota_left = left if quota_left is None else min(quota_left, left)
    quota_gpus = None if quota_left is None else max(1, quota_left + 1)
    if known:
        note = _(
            "Sized from the latest run: the largest node allocates %(largest)s GPUs, so the Job "
            "asks for %(asked)s."
        ) % {"largest": max(known), "asked": max(known) + 1}
        if quota_gpus is None:
            note += " " + _(
                "No GPU ResourceQuota was seen in %(namespace)s, so no Pod is created against "
                "one; if one exists at run time, a Pod asking for what it leaves plus one is."
            ) % {"namespace": namespace}
        return max(known) + 1, quota_gpus, note
    expected = cluster.expected_gpus_per_node or 8
    note = _(
        "No run has read the cluster yet: shown with the GPUs a node should have (%(expected)s) "
        "plus one. A run asks for one GPU more than the largest node allocates, and, where "
        "%(namespace)s has a GPU ResourceQuota, creates a Pod asking for what the quota leaves "
        "plus one (shown here as if one GPU were left)."
    ) % {"expected": expected, "namespace": namespace}
    return expected + 1, 2, note


@dataclass(frozen=True)
class Planned:
    """What a run with controlled failures creates, and how its sizes were chosen."""

    objects: list[JSONObject]
    note: str = ""


def planned_objects(cluster: Cluster) -> Planned:
    """Exactly what a run with controlled failures creates on this cluster, for the page to
    show before the first run: manifests for Kubernetes, the job for Slurm."""
    if not cluster.controlled_failures:
        return Planned([])
    if cluster.kind == ClusterKind.KUBERNETES:
        from poc.probes.connectors import kubernetes as kube

        gpus, quota_gpus, note = _kubernetes_sizes(cluster)
        try:
            objects = kube.planned_objects(
                cluster.failure_namespace or "default", failure_label("RUN"), gpus, quota_gpus
            )
        except kube.ConnectorError:
            return Planned([])
        return Planned(objects, note)
    if cluster.kind in (ClusterKind.SLURM_REST, ClusterKind.SLURM_SSH):
        return Planned(
            [
                {
                    "kind": "Slurm job",
                    "what": _(
                        "one batch job asking for one GPU more than the largest node has "
                        "(expected to be refused at submit); cancelled at once if it is accepted"
                    ),
                }
            ]
        )
    return Planned([])
