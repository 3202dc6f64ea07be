"""PoC results and their evidence, responsibility assignments and CI runs."""

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from evaluations.models import OWNER_TEAMS, AcceptanceAction, ApiToken, Candidate, Project


class Outcome(models.TextChoices):
    PASSED = "passed", _("Passed")
    FAILED = "failed", _("Failed")
    NOT_COVERED = "not_covered", _("Not covered")
    NEEDS_INTEGRATION = "needs_integration", _("Needs integration")


class Source(models.TextChoices):
    MANUAL = "manual", _("Recorded by hand")
    CI = "ci", _("CI pipeline")
    PROBE = "probe", _("Probe")


class Change(models.TextChoices):
    """What a CI post's result did to its cell, against the cell's result before the post."""

    NEW = "new", _("New")
    UNCHANGED = "unchanged", _("Unchanged")
    CHANGED = "changed", _("Changed")
    REGRESSED = "regressed", _("Regressed")
    RECOVERED = "recovered", _("Recovered")


class AppendOnlyError(Exception):
    """Results are never changed or deleted: record a new one instead."""


class Delivery(models.TextChoices):
    """What kind of work delivers an integration need or a responsibility area, as procurement
    documents separate them."""

    PRODUCT = "product", _("product capability")
    CUSTOM = "custom", _("custom development")
    SERVICE = "service", _("implementation service")
    THIRD_PARTY = "third_party", _("third-party component")


def delivery_field() -> models.CharField:
    """The kind of delivery of an integration need or a responsibility area (blank: not said)."""
    return models.CharField(
        _("kind of delivery"),
        max_length=20,
        choices=Delivery,
        blank=True,
        default="",
        db_default="",
    )


class Result(models.Model):
    """One recorded outcome of one acceptance action on one candidate. Rows are never changed:
    a new recording adds a row, and ResultCell points at the latest one of each cell."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="results")
    # PROTECT: removing a candidate or an action must never take recorded evidence with it.
    # Indexed through the (candidate, action, -recorded_at) index below; every extra index
    # slows the bulk inserts from CI, so rarely filtered keys carry none.
    candidate = models.ForeignKey(
        Candidate, on_delete=models.PROTECT, related_name="results", db_index=False
    )
    action = models.ForeignKey(AcceptanceAction, on_delete=models.PROTECT, related_name="results")
    outcome = models.CharField(_("outcome"), max_length=20, choices=Outcome)
    failure_cause = models.TextField(_("failure cause"), blank=True)
    integration_what = models.TextField(_("what must be integrated"), blank=True)
    integration_owner_team = models.CharField(
        _("owning team"), max_length=20, choices=OWNER_TEAMS, blank=True
    )
    integration_effort_days = models.DecimalField(
        _("effort (person-days)"),
        max_digits=7,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
    )
    # Who delivers the integration: the kind of work, and the party by name (the vendor, our
    # team, a named third party). Carried to the cell's next result unless it changes them.
    integration_delivery = delivery_field()
    integration_delivered_by = models.CharField(
        _("delivered by"), max_length=200, blank=True, default="", db_default=""
    )
    note = models.TextField(_("note (Markdown)"), blank=True)
    change_reason = models.TextField(_("reason for the change"), blank=True)
    source = models.CharField(max_length=10, choices=Source, default=Source.MANUAL)
    run = models.ForeignKey(
        "Run",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="results",
        db_index=False,
    )
    run_reference = models.CharField(_("run reference"), max_length=300, blank=True)
    # The post of a CI run that brought this result, and what it did to the cell (blank for
    # results recorded by hand).
    run_import = models.ForeignKey(
        "RunImport",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="results",
    )
    change = models.CharField(max_length=10, choices=Change, blank=True)
    previous = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        db_index=False,
    )
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-recorded_at", "-pk"]
        indexes = [models.Index(fields=["candidate", "action", "-recorded_at"])]
        verbose_name = _("result")

    def __str__(self) -> str:
        return f"{self.candidate_id}/{self.action_id}: {self.outcome}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None and not self._state.adding:
            raise AppendOnlyError("results are append-only; record a new result instead")
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("results are append-only and cannot be deleted")

    def clean(self) -> None:
        errors = outcome_detail_problems(
            outcome=self.outcome,
            failure_cause=self.failure_cause,
            integration_what=self.integration_what,
            integration_owner_team=self.integration_owner_team,
            integration_effort_days=self.integration_effort_days,
        )
        both = self.candidate_id and self.action_id
        if both and self.candidate.project_id != self.action.project_id:
            errors["action"] = str(_("The action belongs to another project."))
        if errors:
            raise ValidationError(errors)


def outcome_detail_problems(
    *,
    outcome: str,
    failure_cause: str,
    integration_what: str,
    integration_owner_team: str,
    integration_effort_days: Decimal | None,
) -> dict[str, str]:
    """What a result of this outcome still lacks, by field: a failure needs its cause; a
    needed integration, what to integrate, the owning team and the effort. The one home of
    this rule: the model's clean, and bulk ingest from CI (which skips full_clean), call it."""
    problems: dict[str, str] = {}
    if outcome == Outcome.FAILED and not failure_cause.strip():
        problems["failure_cause"] = str(_("A failed result needs its failure cause."))
    if outcome == Outcome.NEEDS_INTEGRATION:
        if not integration_what.strip():
            problems["integration_what"] = str(_("Say what must be integrated."))
        if not integration_owner_team:
            problems["integration_owner_team"] = str(_("Name the team that owns the integration."))
        if integration_effort_days is None:
            problems["integration_effort_days"] = str(_("Estimate the effort in person-days."))
    return problems


class ResultCell(models.Model):
    """The latest result of one candidate x action cell (a pointer, rewritten on each record)."""

    # The unique (candidate, action) and the (project, candidate) indexes serve every lookup;
    # single-column indexes would only slow the upserts from CI.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    candidate = models.ForeignKey(
        Candidate, on_delete=models.CASCADE, related_name="cells", db_index=False
    )
    action = models.ForeignKey(AcceptanceAction, on_delete=models.CASCADE, related_name="cells")
    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="+", db_index=False)
    outcome = models.CharField(max_length=20, choices=Outcome)
    # The latest result's integration effort (a copy, so that pages sum a candidate's effort
    # without reading its results).
    integration_effort_days = models.DecimalField(
        max_digits=7, decimal_places=1, null=True, blank=True
    )
    result_count = models.PositiveIntegerField(default=1)
    evidence_count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["candidate", "action"], name="cell_unique")]
        indexes = [models.Index(fields=["project", "candidate"])]

    def __str__(self) -> str:
        return f"{self.candidate_id}/{self.action_id}: {self.outcome}"


class EvidenceKind(models.TextChoices):
    FILE = "file", _("File")
    LINK = "link", _("Link")


def evidence_upload_to(instance: "Evidence", filename: str) -> str:
    # The stored name is the content hash: no user-supplied path part ever reaches the storage.
    return f"evidence/{instance.project_id}/{instance.sha256[:2]}/{instance.sha256}"


class Evidence(models.Model):
    """A file or link attached to a result; files are served to project members only."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="evidence")
    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="evidence")
    kind = models.CharField(max_length=10, choices=EvidenceKind)
    file = models.FileField(upload_to=evidence_upload_to, max_length=300, blank=True)
    url = models.URLField(max_length=2000, blank=True)
    name = models.CharField(_("name"), max_length=255)
    sha256 = models.CharField(max_length=64, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    content_type = models.CharField(max_length=120, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)
    # Evidence a person recorded, repeated on a later automated result of the same cell so
    # that a CI post does not drop it (poc.services.carry): the original item, whose result
    # and uploader say where it came from. `superseded`: the post said its result replaces
    # this evidence; it is kept on the record and listed as such, not counted as evidence.
    carried_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False
    )
    superseded = models.BooleanField(default=False, db_default=False)  # bulk inserts omit it

    class Meta:
        ordering = ["uploaded_at", "pk"]
        verbose_name = _("evidence")
        verbose_name_plural = _("evidence")

    def __str__(self) -> str:
        return self.name


class ResponsibilityArea(models.TextChoices):
    DEPLOYMENT = "deployment", _("Deployment")
    UPGRADE = "upgrade_rollback", _("Upgrade and rollback")
    DRIVERS = "drivers_runtime", _("Drivers and runtime")
    INCIDENTS = "incident_handling", _("Incident handling")
    TRAINING = "training", pgettext_lazy("responsibility area", "Training")
    SUPPORT = "support_sla", _("Support and SLA")
    EXIT = "exit_migration", _("Exit and migration")
    BACKUP = "backup_dr", _("Backup and DR")
    CAPACITY = "capacity", _("Capacity expansion")
    OBSERVABILITY = "observability", _("Observability integration")
    IDENTITY = "identity", _("Identity integration")


class Party(models.TextChoices):
    PLATFORM_TEAM = "platform_team", _("Internal platform team")
    OPS_TEAM = "ops_team", _("Ops team")
    VENDOR = "vendor", _("Vendor")
    CLOUD = "cloud_provider", _("Cloud provider")
    INTEGRATOR = "integrator", _("Integrator")


class Responsibility(models.Model):
    """Who carries one area of long-term responsibility for one candidate."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    candidate = models.ForeignKey(
        Candidate, on_delete=models.CASCADE, related_name="responsibilities"
    )
    area = models.CharField(_("area"), max_length=30, choices=ResponsibilityArea)
    party = models.CharField(_("party"), max_length=20, choices=Party)
    delivery = delivery_field()
    person = models.CharField(_("named person"), max_length=200)
    escalation = models.CharField(_("escalation"), max_length=300, blank=True)
    note = models.TextField(_("note"), blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["candidate", "area"], name="responsibility_unique")
        ]
        verbose_name = _("responsibility")
        verbose_name_plural = _("responsibilities")

    def __str__(self) -> str:
        return f"{self.candidate}: {self.get_area_display()} -> {self.get_party_display()}"


# --- CI integration ----------------------------------------------------------------------


class Run(models.Model):
    """One CI run (or a probe run) that posts results; its external id is unique per project,
    so posting again for the same run appends to it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    external_id = models.CharField(_("external id"), max_length=200)
    name = models.CharField(_("name"), max_length=300, blank=True)
    url = models.URLField(_("URL"), max_length=2000, blank=True)
    commit = models.CharField(_("commit"), max_length=100, blank=True)
    candidate = models.ForeignKey(
        Candidate, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="run_unique_external_id"
            )
        ]

    def __str__(self) -> str:
        return self.name or self.external_id


class RunImport(models.Model):
    """One post into a run: what it changed against the previous results of its cells."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="imports")
    token = models.ForeignKey(ApiToken, on_delete=models.SET_NULL, null=True, blank=True)
    posted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    posted_at = models.DateTimeField(auto_now_add=True)
    kind = models.CharField(max_length=10, default="json")  # json | junit
    result_count = models.PositiveIntegerField(default=0)
    new = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    regressed = models.PositiveIntegerField(default=0)
    recovered = models.PositiveIntegerField(default=0)
    unmapped = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-posted_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.run_id}: {self.result_count} results ({self.kind})"
