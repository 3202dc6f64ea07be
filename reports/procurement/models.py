"""Terms kept like results: every change is a new row (who, when, why, on what basis), the
latest of each candidate's term is marked current, and nothing is edited in place. What is still
to be confirmed carries who chases it, by when, what was asked and what closed it."""

from datetime import date

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from evaluations.models import Candidate, Project, TeamRole


class Basis(models.TextChoices):
    """Where a figure or a term comes from. "To be confirmed" is the default: nothing is
    taken into the support promise or the cost on trust."""

    QUOTE = "quote", _("vendor quote")
    LIST_PRICE = "list_price", _("published: list price or public terms")
    ESTIMATE = "estimate", _("our estimate")
    # A figure the PoC measured (a utilisation, a migration effort), with the run or evidence
    # it was read from as its reference.
    MEASURED = "measured", _("measured in the PoC")
    TBC = "tbc", _("to be confirmed")


class AppendOnlyError(Exception):
    """Term entries are never changed or deleted: record a new one instead."""


class TermEntry(models.Model):
    """One recorded value of one term of a candidate (reports/procurement/terms.py lists the
    terms), with its basis."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="terms")
    key = models.CharField(_("term"), max_length=40)
    value = models.JSONField(null=True, blank=True)
    basis = models.CharField(_("basis"), max_length=20, choices=Basis, default=Basis.TBC)
    # A quote's reference number, or the document a claim or price was read in.
    reference = models.CharField(_("reference"), max_length=300, blank=True)
    source = models.CharField(_("where it was read"), max_length=500, blank=True)
    valid_until = models.DateField(_("valid until"), null=True, blank=True)
    reason = models.TextField(_("why"), blank=True)
    current = models.BooleanField(default=True)
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["-recorded_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["candidate", "key"], condition=Q(current=True), name="term_one_current"
            )
        ]
        indexes = [models.Index(fields=["project", "current"], name="term_project_current")]
        verbose_name = _("term entry")

    def __str__(self) -> str:
        return f"{self.candidate_id} {self.key}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None and kwargs.get("update_fields") != ["current"]:
            raise AppendOnlyError("term entries are append-only; record a new one instead")
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def quote_expired(self, today: date) -> bool:
        return (
            self.basis == Basis.QUOTE and self.valid_until is not None and self.valid_until < today
        )


class Confirmation(models.Model):
    """The chase of one open item: a term of a candidate still to be confirmed (subject
    `term:<key>`). Closed when the item gets a basis, or by hand with the closing reference."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="confirmations")
    subject = models.CharField(max_length=80)
    owner_team = models.CharField(_("owning team"), max_length=20, choices=TeamRole, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("owner"),
    )
    due = models.DateField(_("due"), null=True, blank=True)
    request = models.TextField(_("request sent"), blank=True)
    requested_at = models.DateField(_("sent on"), null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closing_reference = models.CharField(_("closed by"), max_length=300, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["due", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["candidate", "subject"],
                condition=Q(closed_at__isnull=True),
                name="confirmation_one_open",
            )
        ]
        verbose_name = _("confirmation")

    def __str__(self) -> str:
        return f"{self.candidate_id} {self.subject}"


class CostCategory(models.TextChoices):
    LICENCE = "licence", _("licence or subscription")
    SUPPORT = "support", _("support")
    CAPACITY = "capacity", _("hardware or cloud capacity")
    IMPLEMENTATION = "implementation", _("implementation")
    TRAINING = "training", _("training")
    OPERATIONS = "operations", _("operations")
    EXIT = "exit", _("exit and migration")
    OTHER = "other", _("other")


class LineKind(models.TextChoices):
    PER_UNIT = "per_unit", _("per pricing unit and year")
    PER_YEAR = "per_year", _("flat, each year")
    ONE_OFF = "one_off", _("once")
    FTE = "fte", _("people (FTE) each year")
    DAYS = "days", _("person-days, once")


class ChargeCategory(models.TextChoices):
    """The FinOps FOCUS specification's ChargeCategory values, for exports."""

    PURCHASE = "Purchase", _("purchase")
    USAGE = "Usage", _("usage")
    ADJUSTMENT = "Adjustment", _("adjustment")
    TAX = "Tax", _("tax")
    CREDIT = "Credit", _("credit")


class Capacity(models.TextChoices):
    """How the GPUs a candidate needs are paid for (docs/costs.md, capacity)."""

    NONE = "", _("not counted")
    OWNED = "owned", _("owned GPUs, depreciated")
    CLOUD = "cloud", _("cloud GPU-hours")


class CostModel(models.Model):
    """A project's frame for costs: currency and exchange rates, horizon, discount rate, the
    fleet and its growth, what people cost (docs/costs.md)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="cost_model")
    currency = models.CharField(_("currency"), max_length=3, default="USD")
    horizon_years = models.PositiveSmallIntegerField(_("horizon (years)"), default=5)
    discount_rate_percent = models.DecimalField(
        _("discount rate (%)"), max_digits=7, decimal_places=4, null=True, blank=True
    )
    gpus = models.DecimalField(_("GPUs"), default=0, max_digits=18, decimal_places=4)
    nodes = models.DecimalField(_("nodes"), default=0, max_digits=18, decimal_places=4)
    cores_per_node = models.DecimalField(
        _("cores per node"), default=0, max_digits=18, decimal_places=4
    )
    sockets_per_node = models.DecimalField(
        _("sockets per node"), default=0, max_digits=18, decimal_places=4
    )
    named_users = models.DecimalField(_("named users"), default=0, max_digits=18, decimal_places=4)
    gpu_hours_per_year = models.DecimalField(
        _("GPU-hours demanded a year"), default=0, max_digits=18, decimal_places=4
    )
    growth_percent = models.DecimalField(
        _("growth a year (%)"), max_digits=7, decimal_places=4, default=0
    )
    fte_cost = models.DecimalField(
        _("loaded cost of one FTE a year"), null=True, blank=True, max_digits=18, decimal_places=4
    )
    # Capacity: demand / a candidate's utilisation gives the GPUs it needs, and their cost.
    capacity = models.CharField(
        _("capacity"), max_length=10, choices=Capacity, blank=True, default="", db_default=""
    )
    gpu_price = models.DecimalField(
        _("price of one GPU (owned)"), null=True, blank=True, max_digits=18, decimal_places=4
    )
    depreciation_years = models.PositiveSmallIntegerField(
        _("depreciation (years)"), null=True, blank=True
    )
    gpu_hour_price = models.DecimalField(
        _("price of one GPU-hour (cloud)"), null=True, blank=True, max_digits=18, decimal_places=4
    )
    # The baseline: what runs today (or doing nothing), costed by lines without a candidate.
    baseline_label = models.CharField(
        _("baseline"), max_length=200, blank=True, default="", db_default=""
    )
    baseline_utilisation_percent = models.DecimalField(
        _("utilisation today (%)"), null=True, blank=True, max_digits=7, decimal_places=4
    )
    # team -> day rate (a decimal string); currency -> {"rate", "date", "source"}
    day_rates = models.JSONField(default=dict, blank=True)
    exchange_rates = models.JSONField(default=dict, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("cost model")

    def __str__(self) -> str:
        return f"cost model of {self.project_id}"


class CostLine(models.Model):
    """One cost of a candidate, with low / expected / high figures and its basis; a line
    without a candidate costs the baseline."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    candidate = models.ForeignKey(
        Candidate, on_delete=models.CASCADE, related_name="cost_lines", null=True, blank=True
    )
    category = models.CharField(_("category"), max_length=20, choices=CostCategory)
    kind = models.CharField(_("how it runs"), max_length=20, choices=LineKind)
    label = models.CharField(_("what"), max_length=200)
    unit = models.CharField(_("pricing unit"), max_length=20, blank=True)
    team = models.CharField(_("team"), max_length=20, blank=True)
    currency = models.CharField(_("currency"), max_length=3, blank=True)
    low = models.DecimalField(_("low"), max_digits=18, decimal_places=4)
    expected = models.DecimalField(_("expected"), max_digits=18, decimal_places=4)
    high = models.DecimalField(_("high"), max_digits=18, decimal_places=4)
    discount_percent = models.DecimalField(
        _("discount (%)"), max_digits=7, decimal_places=4, default=0
    )
    first_year = models.PositiveSmallIntegerField(_("from year"), default=1)
    last_year = models.PositiveSmallIntegerField(_("to year"), null=True, blank=True)
    charge_category = models.CharField(
        _("charge category"), max_length=20, choices=ChargeCategory, default=ChargeCategory.PURCHASE
    )
    basis = models.CharField(_("basis"), max_length=20, choices=Basis, default=Basis.TBC)
    reference = models.CharField(_("reference"), max_length=300, blank=True)
    source = models.CharField(_("where it was read"), max_length=500, blank=True)
    valid_until = models.DateField(_("valid until"), null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["candidate", "category", "pk"]
        indexes = [models.Index(fields=["project", "candidate"], name="costline_candidate")]
        verbose_name = _("cost line")

    def __str__(self) -> str:
        return f"{self.candidate_id} {self.label}"

    def quote_expired(self, today: date) -> bool:
        return (
            self.basis == Basis.QUOTE and self.valid_until is not None and self.valid_until < today
        )

    def unconfirmed(self, today: date) -> bool:
        """Still to be confirmed: no basis yet, or a quote that has expired."""
        return self.basis == Basis.TBC or self.quote_expired(today)

    @property
    def unit_label(self) -> str:
        from reports.procurement.terms import PricingUnit

        return str(PricingUnit(self.unit).label) if self.unit in PricingUnit.values else ""

    @property
    def team_label(self) -> str:
        return str(TeamRole(self.team).label) if self.team in TeamRole.values else ""


class Support(models.TextChoices):
    """How far a combination is known to work, strongest first where claims disagree."""

    FAILED = "failed", _("failed")
    VERIFIED = "verified", _("verified in the PoC")
    VENDOR = "vendor", _("vendor claim")
    TBC = "tbc", _("to be confirmed")


# The order in which one claim outweighs another (docs/costs.md, compatibility).
SUPPORT_STRENGTH: list[str] = [Support.FAILED, Support.VERIFIED, Support.VENDOR, Support.TBC]


class Combination(models.Model):
    """A stack a candidate must run on: each part as written (blank: not part of it)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="combinations")
    gpu_model = models.CharField(_("GPU model"), max_length=120, blank=True)
    driver = models.CharField(_("driver"), max_length=120, blank=True)
    cuda = models.CharField(_("CUDA"), max_length=120, blank=True)
    runtime = models.CharField(_("container runtime"), max_length=120, blank=True)
    platform = models.CharField(_("Kubernetes or OS version"), max_length=120, blank=True)
    scheduler = models.CharField(_("scheduler version"), max_length=120, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["candidate", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["candidate", "gpu_model", "driver", "cuda", "runtime", "platform",
                        "scheduler"],
                name="combination_unique",
            )
        ]  # fmt: skip
        verbose_name = _("combination")

    def __str__(self) -> str:
        return " · ".join(p for p in (self.gpu_model, self.driver, self.cuda) if p)


class CompatibilityClaim(models.Model):
    """One statement about a combination, kept with every other one: a vendor's document, a
    failure seen outside the probes, or the question still open. What probe runs saw is read
    from the runs themselves (poc/probes/combinations.py), never typed."""

    combination = models.ForeignKey(Combination, on_delete=models.CASCADE, related_name="claims")
    status = models.CharField(_("status"), max_length=20, choices=Support)
    reference = models.CharField(_("document or reference"), max_length=300, blank=True)
    note = models.TextField(_("note"), blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-recorded_at", "-pk"]
        verbose_name = _("compatibility claim")

    def __str__(self) -> str:
        return f"{self.combination_id} {self.status}"
