"""Evaluation projects: framing, team membership, the solution catalog and the shortlist."""

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _


class Workload(models.TextChoices):
    TRAINING = "training", _("Training")
    INFERENCE = "inference", _("Inference")
    BATCH = "batch", _("Batch jobs")
    EXPERIMENT = "experiment", _("Experiments and evaluation")


class ExistingBase(models.TextChoices):
    KUBERNETES = "kubernetes", _("Kubernetes")
    SLURM_HPC = "slurm-hpc", _("Slurm / HPC")
    BOTH = "both", _("Both Kubernetes and Slurm")
    NONE = "none", _("Neither yet")


class LayerNeeded(models.TextChoices):
    DEVICE = "device-scheduling", _("Device scheduling")
    QUEUES = "queues-quotas", _("Job queues and quotas")
    GOVERNANCE = "tenancy-governance", _("Full tenancy, governance and operations")


class SupplierNeed(models.TextChoices):
    DELIVERY = "delivery", _("On-site delivery")
    LONG_TERM_SUPPORT = "long-term-support", _("Long-term support")
    DOMESTIC_HARDWARE = "domestic-hardware", _("Domestic accelerator hardware")
    MULTI_CLUSTER = "multi-cluster", _("Multi-cluster management")


class Phase(models.TextChoices):
    FRAMING = "framing", _("Framing")
    SHORTLISTING = "shortlisting", _("Shortlisting")
    POC = "poc", _("Proof of concept")
    REVIEW = "review", _("Review")
    SIGNED = "signed", _("Signed")
    ARCHIVED = "archived", _("Archived")


class TeamRole(models.TextChoices):
    PLATFORM = "platform", _("Platform")
    OPS = "ops", _("Operations")
    PROCUREMENT = "procurement", _("Procurement")
    BUSINESS = "business", _("Business")
    ARCHITECTURE = "architecture", _("Architecture")
    OBSERVER = "observer", _("Observer")


def _check_choice_list(value: Any, choices: type[models.TextChoices], field: str) -> None:
    if not isinstance(value, list):
        raise ValidationError({field: _("Must be a list.")})
    unknown = [item for item in value if item not in choices.values]
    if unknown:
        raise ValidationError(
            {field: _("Unknown values: %(values)s.") % {"values": ", ".join(map(str, unknown))}}
        )
    if len(set(value)) != len(value):
        raise ValidationError({field: _("A value is listed twice.")})


RESERVED_PROJECT_SLUGS = frozenset({"new"})


class Project(models.Model):
    """One evaluation: the organisation's framing of its need and everything proven against it."""

    name = models.CharField(_("name"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    description = models.TextField(_("description"), blank=True)
    phase = models.CharField(_("phase"), max_length=20, choices=Phase, default=Phase.FRAMING)
    workloads = models.JSONField(_("dominant workloads"), default=list, blank=True)
    existing_base = models.CharField(
        _("existing base"), max_length=20, choices=ExistingBase, blank=True
    )
    layer_needed = models.CharField(
        _("layer needed"), max_length=30, choices=LayerNeeded, blank=True
    )
    supplier_needs = models.JSONField(_("supplier needs"), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("project")
        verbose_name_plural = _("projects")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.slug in RESERVED_PROJECT_SLUGS:
            raise ValidationError({"slug": _("This short name is reserved; choose another.")})
        _check_choice_list(self.workloads, Workload, "workloads")
        _check_choice_list(self.supplier_needs, SupplierNeed, "supplier_needs")

    def get_workloads_display(self) -> list[str]:
        labels = dict(Workload.choices)
        return [str(labels[w]) for w in self.workloads if w in labels]

    def get_supplier_needs_display(self) -> list[str]:
        labels = dict(SupplierNeed.choices)
        return [str(labels[n]) for n in self.supplier_needs if n in labels]

    @property
    def framing_complete(self) -> bool:
        return bool(self.workloads and self.existing_base and self.layer_needed)


class Membership(models.Model):
    """A person's team role in one project; a person may hold several roles, one row each."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(_("team role"), max_length=20, choices=TeamRole)
    is_admin = models.BooleanField(_("project admin"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "user__username", "role"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user", "role"], name="membership_unique_role"
            )
        ]
        verbose_name = _("membership")

    def __str__(self) -> str:
        return f"{self.user} · {self.get_role_display()} · {self.project}"


class LocalizedTextMixin:
    """Catalog rows keep each text in English (`*_en`) and Simplified Chinese (`*_zh`)."""

    def localized(self, field: str) -> str:
        language = (get_language() or "en").lower()
        suffix = "zh" if language.startswith("zh") else "en"
        value = getattr(self, f"{field}_{suffix}")
        return value or getattr(self, f"{field}_en")


class SolutionKind(models.TextChoices):
    ROUTE = "route", _("Route")
    PRODUCT = "product", _("Product")


class Solution(LocalizedTextMixin, models.Model):
    """A catalog entry: a software route or a concrete product, described for shortlisting."""

    key = models.SlugField(max_length=60, unique=True)
    kind = models.CharField(max_length=10, choices=SolutionKind)
    route = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="products",
        limit_choices_to={"kind": SolutionKind.ROUTE},
    )
    vendor = models.CharField(max_length=120, blank=True)
    position = models.PositiveIntegerField(default=0)
    name_en = models.CharField(max_length=120)
    name_zh = models.CharField(max_length=120)
    summary_en = models.TextField(blank=True)
    summary_zh = models.TextField(blank=True)
    scale_en = models.TextField(_("applicable scale (en)"), blank=True)
    scale_zh = models.TextField(_("applicable scale (zh)"), blank=True)
    integration_cost_en = models.TextField(blank=True)
    integration_cost_zh = models.TextField(blank=True)
    operations_owner_en = models.TextField(blank=True)
    operations_owner_zh = models.TextField(blank=True)
    not_suitable_when_en = models.TextField(blank=True)
    not_suitable_when_zh = models.TextField(blank=True)
    must_test_en = models.TextField(blank=True, help_text=_("One item per line."))
    must_test_zh = models.TextField(blank=True, help_text=_("One item per line."))

    class Meta:
        ordering = ["kind", "position", "key"]
        verbose_name = _("solution")
        verbose_name_plural = _("solution catalog")

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return self.localized("name")

    def must_test_items(self) -> list[str]:
        return [line.strip() for line in self.localized("must_test").splitlines() if line.strip()]


class Tier(models.TextChoices):
    FIRST = "validate_first", _("Validate first")
    ALTERNATIVE = "alternative", _("Validate as alternative")
    NOT_APPLICABLE = "not_applicable", _("Not applicable for now")


class FilterStep(models.TextChoices):
    INFRASTRUCTURE = "infrastructure", _("Infrastructure fit")
    WORKLOAD = "workload", _("Workload fit")
    RESPONSIBILITY_COST = "responsibility_cost", _("Responsibility and cost")


class Candidate(models.Model):
    """A solution on a project's shortlist, in one tier, with the reason that put it there."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="candidates")
    solution = models.ForeignKey(Solution, on_delete=models.PROTECT, related_name="candidacies")
    slug = models.SlugField(_("slug"), max_length=60)
    version = models.CharField(_("version under test"), max_length=80, blank=True)
    tier = models.CharField(_("tier"), max_length=20, choices=Tier, default=Tier.FIRST)
    decided_by_step = models.CharField(
        _("decided at step"), max_length=30, choices=FilterStep, default=FilterStep.INFRASTRUCTURE
    )
    reason = models.TextField(_("reason"), blank=True)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="candidate_unique_slug"),
            models.CheckConstraint(
                condition=~Q(tier="not_applicable") | ~Q(reason=""),
                name="candidate_not_applicable_needs_reason",
                violation_error_message=_(
                    "A candidate that is not applicable for now needs a reason."
                ),
            ),
        ]
        verbose_name = _("candidate")

    def __str__(self) -> str:
        label = self.solution.name
        return f"{label} {self.version}".strip()

    def clean(self) -> None:
        if self.tier == Tier.NOT_APPLICABLE and not self.reason.strip():
            raise ValidationError(
                {"reason": _("A candidate that is not applicable for now needs a reason.")}
            )


class ProjectEvent(models.Model):
    """An entry in a project's history: who changed what, when, with the values before/after."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    verb = models.CharField(max_length=60)
    subject = models.CharField(max_length=255, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name = _("project event")

    def __str__(self) -> str:
        return f"{self.project}: {self.verb} {self.subject}"
