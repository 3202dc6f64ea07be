"""Registering clusters: validation, encrypted secrets (kept when a form leaves
them blank), history."""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project
from evaluations.services import event_record
from poc.probes import credentials, present
from poc.probes.connectors import ssh as ssh_connector
from poc.probes.models import (
    SECRET_FIELDS,
    Cluster,
    ClusterKind,
)
from poc.probes.services.clusters.common import plain_http_token_refused

if TYPE_CHECKING:
    pass


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
    """What a page may say about a secret: that it is set, and for keys which one (stored as
    words the page translates: poc.probes.present.secret_summary_shown)."""
    if name == "ssh_private_key":
        try:
            import asyncssh

            key = asyncssh.import_private_key(value)
            public = key.export_public_key("openssh").decode()
            return f"{key.get_algorithm()} {ssh_connector.fingerprint(public)}"
        except Exception:  # an encrypted key needs its passphrase: only say it is set
            return present.SECRET_SET_ENCRYPTED_KEY
    return present.SECRET_SET  # never its length: that tells a reader about the secret


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
        elif data.kind == ClusterKind.SLURM_REST and (refused := plain_http_token_refused(url)):
            errors["api_url"] = refused
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


def _reachable_as_written(data: ClusterData, given: dict[str, str]) -> dict[str, str]:
    """What the settings name that no probe may reach, found without connecting: a metadata
    name or a refused address literal (a name is judged when a probe resolves it), a kubeconfig
    that would run a plugin or read a local file. Runs check all of it again."""
    from poc.probes.connectors import guard
    from poc.probes.connectors import kubernetes as kube

    def refused(host: str) -> str | None:
        reason = guard.refused_as_written(host, settings.PROBE_ALLOWED_NETWORKS)
        return _("No probe may connect there: %(reason)s.") % {"reason": reason} if reason else None

    if data.kind in (ClusterKind.SSH, ClusterKind.SLURM_SSH):
        probe = Cluster(hosts=data.hosts, ssh_port=data.ssh_port)
        found = next(filter(None, (refused(host) for host, _port in probe.node_addresses())), None)
        return {"hosts": found} if found else {}
    if data.kind == ClusterKind.KUBERNETES:
        target = kube.KubeTarget(api_url=data.api_url, kubeconfig=given.get("kubeconfig", ""))
        if not (target.api_url.strip() or target.kubeconfig.strip()):
            return {}  # a kubeconfig already stored was checked when it was saved
        try:
            host = kube.target_host(target)
        except kube.ConnectorError as exc:
            return {"kubeconfig" if target.kubeconfig.strip() else "api_url": str(exc)}
        found = refused(host)
        return {"api_url": found} if found else {}
    if data.kind == ClusterKind.SLURM_REST and (named := urlsplit(data.api_url.strip()).hostname):
        found = refused(named)
        return {"api_url": found} if found else {}
    return {}


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
    if not errors:
        errors.update(_reachable_as_written(data, given))
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


@dataclass
class KeyRotation:
    """What re-encrypting the stored credentials did, under which key."""

    key_id: str
    moved: int = 0
    kept: int = 0
    failed: list[str] = field(default_factory=list)  # "cluster 3 (name): reason"


def cluster_credentials_rotate() -> KeyRotation:
    """Re-encrypt every cluster's credentials under the first key of WORKBENCH_CREDENTIALS_KEYS,
    each row in its own transaction; a row that cannot be decrypted is named and left as it
    was. Raises CredentialsUnavailable when no key is configured."""
    report = KeyRotation(key_id=credentials.current_key_id())
    for pk in Cluster.objects.exclude(secrets="").values_list("pk", flat=True):
        with transaction.atomic():
            row = Cluster.objects.select_for_update().get(pk=pk)
            if credentials.key_id_of(row.secrets) == report.key_id:
                report.kept += 1
                continue
            try:
                value = row.read_secrets()
            except credentials.CredentialsUnavailable as exc:
                report.failed.append(f"cluster {row.pk} ({row.name}): {exc}")
                continue
            row.secrets = credentials.encrypt(
                value, table=Cluster.TABLE, pk=row.pk, field="secrets"
            )
            row.save(update_fields=["secrets"])
            report.moved += 1
    return report
