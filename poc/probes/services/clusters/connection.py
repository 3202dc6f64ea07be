"""Testing a cluster's connection (each SSH node's host key, or the API
endpoint) and pinning the host keys a person confirmed."""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from evaluations.services import event_record
from poc.probes import credentials
from poc.probes.connectors import guard
from poc.probes.connectors import ssh as ssh_connector
from poc.probes.models import (
    Cluster,
    ClusterKind,
)

if TYPE_CHECKING:
    pass
from poc.probes.services.clusters.common import RunFailed, checked_address, slurm_target


@dataclass(frozen=True)
class NodeCheck:
    """What "test connection" found for one node."""

    node: str  # host:port
    address: str
    fingerprint: str
    state: str  # "pinned", "new", "changed", "refused", "unreachable"
    message: str

    @property
    def hint(self) -> str:
        """What to do about a failure, in the reader's language (the message stays as the
        connector said it, for whoever looks further)."""
        return failure_hint(self.message) if self.state in ("refused", "unreachable") else ""


# (words in a connector's message, what to do), the first that matches; lower case.
HINTS = (
    (
        ("never probed", "not in probe_allowed_networks"),
        gettext_lazy(
            "The address may not be probed from here: an administrator lists the cluster's "
            "network in PROBE_ALLOWED_NETWORKS (metadata and link-local addresses never are)."
        ),
    ),
    (
        ("does not resolve", "name or service not known", "nodename nor servname"),
        gettext_lazy(
            "The name does not resolve from the workbench: check the spelling, or use an address."
        ),
    ),
    (
        ("certificate", "ssl", "tls"),
        gettext_lazy(
            "The TLS check failed: give the API server's CA certificate (or the kubeconfig's "
            "certificate-authority-data), and the name the certificate is issued for."
        ),
    ),
    (
        ("401", "unauthorized", "refused the credentials", "authentication"),
        gettext_lazy(
            "The server does not accept these credentials: give a valid token (or password, or "
            "key) again."
        ),
    ),
    (
        ("403", "forbidden", "may not"),
        gettext_lazy(
            "The credentials are accepted but may not read what the probe needs: give the account "
            "the read-only role the documentation names."
        ),
    ),
    (
        ("timed out", "timeout"),
        gettext_lazy(
            "No answer in time: a firewall may drop the connection, or the port is wrong."
        ),
    ),
    (
        ("connection refused", "unreachable", "no route", "cannot connect"),
        gettext_lazy(
            "Nothing answers at that address and port: check the port, and that the service runs "
            "and is reachable from the workbench's network."
        ),
    ),
    (
        ("clear text", "http://"),
        gettext_lazy(
            "Use an https:// address, or allow plain http for a trusted link "
            "(SLURM_TOKEN_OVER_HTTP)."
        ),
    ),
)


def failure_hint(message: str) -> str:
    text = message.lower()
    for words, hint in HINTS:
        if any(word in text for word in words):
            return str(hint)
    return ""


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
            address = checked_address(host, port)
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
                address = checked_address(host, port)
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
                dataclasses.replace(slurm_target(cluster, secrets), timeout=timeout),
                resolve=resolve(slurm.ConnectorError),
            )
            label = str(found["server"])
            ok = bool(found["accepted"])
            answered = _("slurmrestd answers (API %(version)s) and accepts the user and token.")
            denied = _("slurmrestd answers (API %(version)s) but refuses: %(reason)s")
            version = found["api_version"]
    except RunFailed as exc:  # refused before anything was sent (a JWT over plain http)
        return [NodeCheck(label, "", "", "refused", str(exc)[:500])]
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
