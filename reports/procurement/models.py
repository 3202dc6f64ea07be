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
