"""GPU probe runs: the facts read from GPU nodes, the raw outputs they came from, and which
acceptance actions are judged by which check of the catalogue (poc/probes/rules/checks/)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from evaluations.models import AcceptanceAction, ApiToken, Candidate, Project
from poc.probes.models.clusters import Cluster


class ProbeSource(models.TextChoices):
    AGENT = "agent", _("Push agent")
    UPLOAD = "upload", _("Uploaded in the browser")
    SSH = "ssh", _("SSH probe")
    KUBERNETES = "kubernetes", _("Kubernetes probe")
    SLURM = "slurm", _("Slurm probe")
    DOCUMENTS = "documents", _("Cluster documents uploaded")


class ProbeStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    PARTIAL = "partial", _("Done, some nodes failed")
    FAILED = "failed", _("Failed")
    TIMED_OUT = "timed_out", _("Timed out")
    CANCELLED = "cancelled", _("Cancelled")


FINISHED_STATUSES = (
    ProbeStatus.DONE,
    ProbeStatus.PARTIAL,
    ProbeStatus.FAILED,
    ProbeStatus.TIMED_OUT,
    ProbeStatus.CANCELLED,
)


class Verdict(models.TextChoices):
    HEALTHY = "healthy", _("Healthy")
    DEGRADED = "degraded", _("Degraded")
    FAILED = "failed", _("Failed")


class ProbeRun(models.Model):
    """One probe of a candidate's GPU nodes: where it came from, what it found, and the CI run
    (`run`) its verdicts were recorded into as results with source "probe"."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="probe_runs")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="probe_runs")
    source = models.CharField(_("source"), max_length=20, choices=ProbeSource)
    status = models.CharField(_("status"), max_length=20, choices=ProbeStatus)
    verdict = models.CharField(_("verdict"), max_length=20, choices=Verdict, blank=True)
    node_count = models.PositiveIntegerField(default=0)
    gpu_count = models.PositiveIntegerField(default=0)
    parser_version = models.CharField(max_length=20)
    facts_format = models.CharField(max_length=60)
    error = models.TextField(_("error"), blank=True)
    run = models.ForeignKey(
        "poc.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="probe_runs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    token = models.ForeignKey(ApiToken, on_delete=models.SET_NULL, null=True, blank=True)
    # A cluster run is queued, taken up by a worker (work_started_at is its claim: a late or
    # duplicate delivery that does not hold it writes nothing) and finished.
    cluster = models.ForeignKey(
        Cluster, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    queued_at = models.DateTimeField(null=True, blank=True)
    # The row is the outbox: a run the broker could not take waits here, queued, and the beat
    # sends it again (probe_runs_resend) once the broker answers.
    unsent = models.BooleanField(default=False)
    work_started_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    with_failures = models.BooleanField(default=False)
    # What a cluster connector read beyond GPU nodes: scheduler queues, products found, the
    # controlled failures' outcomes, what could not be checked.
    cluster_facts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["candidate", "-created_at"]),
            models.Index(fields=["cluster", "-created_at"]),
            models.Index(fields=["status"]),
        ]
        verbose_name = _("probe run")

    def __str__(self) -> str:
        return f"probe {self.pk} of {self.candidate_id}"


class ProbeNode(models.Model):
    """One GPU node of a probe run: its normalized facts (poc/probes/facts.py) and health."""

    run = models.ForeignKey(ProbeRun, on_delete=models.CASCADE, related_name="nodes")
    host = models.CharField(_("host"), max_length=255, blank=True)
    position = models.PositiveIntegerField(default=0)
    facts = models.JSONField()
    health = models.JSONField()
    verdict = models.CharField(_("verdict"), max_length=20, choices=Verdict, blank=True)
    gpu_count = models.PositiveIntegerField(default=0)
    # A node a cluster probe could not read: why (unreachable, refused host key, timed out).
    error = models.TextField(_("error"), blank=True)

    class Meta:
        ordering = ["position", "pk"]

    def __str__(self) -> str:
        return self.host or f"node {self.position}"


def probe_output_upload_to(instance: "ProbeOutput", filename: str) -> str:
    # Content-addressed beside evidence files: the same bytes are stored once per project, and
    # the results that cite an output point at this very file.
    return f"evidence/{instance.run.project_id}/{instance.sha256[:2]}/{instance.sha256}"


class ProbeOutput(models.Model):
    """A raw output a probe read (a command's stdout, an uploaded file), kept as evidence."""

    run = models.ForeignKey(ProbeRun, on_delete=models.CASCADE, related_name="outputs")
    node = models.ForeignKey(
        ProbeNode, on_delete=models.CASCADE, null=True, blank=True, related_name="outputs"
    )
    name = models.CharField(_("name"), max_length=500)
    exit_code = models.IntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    file = models.FileField(upload_to=probe_output_upload_to, max_length=300, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "pk"]

    def __str__(self) -> str:
        return self.name


class ProbeBinding(models.Model):
    """Which check of the catalogue judges an acceptance action from probe facts. An action
    made from a template that names a check is bound to it without a row; a row with an empty
    `check` unbinds such an action explicitly."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    action = models.OneToOneField(
        AcceptanceAction, on_delete=models.CASCADE, related_name="probe_binding"
    )
    check_key = models.CharField(_("check"), max_length=60, blank=True)
    params = models.JSONField(default=dict, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("probe binding")

    def __str__(self) -> str:
        return f"{self.action_id}: {self.check_key or '-'}"
