"""Registered clusters: where a candidate's GPUs are, how to reach them, and the credentials for
it, encrypted at rest (poc/probes/credentials.py). Workers probe them
(poc.probes.services.clusters)."""

from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from evaluations.models import Candidate, Project
from poc.probes import credentials


class ClusterKind(models.TextChoices):
    SSH = "ssh", _("SSH nodes")
    KUBERNETES = "kubernetes", _("Kubernetes")
    SLURM_REST = "slurm_rest", _("Slurm (slurmrestd)")
    SLURM_SSH = "slurm_ssh", _("Slurm (commands over SSH)")
    AGENT = "agent", _("Push agent only")


# Which secrets each kind takes; the form offers these and the service refuses others.
SECRET_FIELDS: dict[str, tuple[str, ...]] = {
    ClusterKind.SSH: ("ssh_private_key", "ssh_password", "ssh_key_passphrase"),
    ClusterKind.SLURM_SSH: ("ssh_private_key", "ssh_password", "ssh_key_passphrase"),
    ClusterKind.KUBERNETES: ("kubeconfig", "bearer_token", "ca_pem"),
    ClusterKind.SLURM_REST: ("jwt",),
    ClusterKind.AGENT: (),
}


class Cluster(models.Model):
    """A candidate's cluster as the workbench reaches it. `secrets` is ciphertext only: the
    secrets are read by the worker that connects, and never leave it (not in the API, a page,
    a log, a task message, a sheet or a history entry); `secret_summary` says what is set,
    masked, for pages."""

    TABLE = "poc_cluster"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="clusters")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="clusters")
    name = models.CharField(_("name"), max_length=100)
    kind = models.CharField(_("kind"), max_length=20, choices=ClusterKind)
    # ssh, slurm_ssh: one node per line, "host" or "host:port"
    hosts = models.TextField(_("nodes"), blank=True)
    ssh_user = models.CharField(_("SSH user"), max_length=64, blank=True)
    ssh_port = models.PositiveIntegerField(_("SSH port"), default=22)
    # kubernetes, slurm_rest
    api_url = models.CharField(_("API URL"), max_length=500, blank=True)
    slurm_user = models.CharField(_("Slurm user"), max_length=64, blank=True)
    expected_gpus_per_node = models.PositiveIntegerField(
        _("GPUs each node should have"), null=True, blank=True
    )
    controlled_failures = models.BooleanField(_("run controlled failures"), default=False)
    failure_namespace = models.CharField(
        _("namespace for controlled failures"), max_length=63, blank=True
    )
    schedule_minutes = models.PositiveIntegerField(
        _("probe every (minutes)"), null=True, blank=True
    )
    secrets = models.TextField(blank=True)  # ciphertext of a JSON object
    secret_summary = models.JSONField(default=dict, blank=True)
    # "host:port" -> {"key": "ssh-ed25519 AAAA...", "fingerprint": "SHA256:...", ...}
    host_keys = models.JSONField(default=dict, blank=True)
    # host keys seen by "test connection" and not yet confirmed by a person
    seen_host_keys = models.JSONField(default=dict, blank=True)
    last_scheduled_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="cluster_name_unique"),
        ]
        verbose_name = _("cluster")

    def __str__(self) -> str:
        return self.name

    def read_secrets(self) -> dict[str, Any]:
        """The decrypted secrets (CredentialsUnavailable when the key is missing or wrong)."""
        return credentials.decrypt(self.secrets, table=self.TABLE, pk=self.pk, field="secrets")

    def node_addresses(self) -> list[tuple[str, int]]:
        """(host, port) of each node line."""
        nodes = []
        for line in self.hosts.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            host, port = line, self.ssh_port
            if line.startswith("["):  # [v6]:port
                end = line.find("]")
                host, rest = line[1:end], line[end + 1 :]
                if rest.startswith(":") and rest[1:].isdigit():
                    port = int(rest[1:])
            elif line.count(":") == 1:
                name, _sep, number = line.partition(":")
                if number.isdigit():
                    host, port = name, int(number)
            nodes.append((host, port))
        return nodes

    @property
    def uses_ssh(self) -> bool:
        return self.kind in (ClusterKind.SSH, ClusterKind.SLURM_SSH)
