"""The shortlist: candidates in tiers, each with the step that decided it."""

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from evaluations.models.catalog import Solution
from evaluations.models.choices import FilterStep, Tier
from evaluations.models.projects import Project


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
