"""The acceptance suite: requirements and their acceptance actions."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from evaluations.models.catalog import LibraryTextMixin
from evaluations.models.choices import (
    OWNER_TEAMS,
    Dimension,
    Importance,
    RequirementSource,
    Scenario,
)
from evaluations.models.projects import Project


class Requirement(LibraryTextMixin, models.Model):
    """A feature as teams or vendors name it; proven only through its acceptance actions."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="requirements")
    feature = models.CharField(_("feature as named"), max_length=300)
    dimension = models.CharField(_("dimension"), max_length=20, choices=Dimension)
    owner_team = models.CharField(_("owning team"), max_length=20, choices=OWNER_TEAMS)
    importance = models.CharField(
        _("importance"), max_length=10, choices=Importance, default=Importance.MUST
    )
    source = models.CharField(max_length=20, choices=RequirementSource, default="manual")
    template_key = models.SlugField(max_length=80, blank=True)
    translations = models.JSONField(default=dict, blank=True)  # see LibraryTextMixin
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "template_key"],
                condition=~Q(template_key=""),
                name="requirement_unique_template_key",
            )
        ]
        verbose_name = _("requirement")

    def __str__(self) -> str:
        return self.feature

    @property
    def feature_text(self) -> str:
        return self.shown("feature")


class AcceptanceAction(LibraryTextMixin, models.Model):
    """A business question and the action that answers it; every candidate runs it identically.

    `key` is how CI pipelines and probes address the action: unique in the project and stable.
    Results point at the row, not the key, so a rename keeps their history (see ActionKeyRename).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="actions")
    requirement = models.ForeignKey(Requirement, on_delete=models.CASCADE, related_name="actions")
    key = models.SlugField(_("key"), max_length=80)
    question = models.TextField(_("business question"))
    steps = models.TextField(_("steps"), blank=True)
    expected_evidence = models.TextField(_("expected evidence"), blank=True)
    pass_criterion = models.TextField(_("pass criterion"))
    scenario = models.CharField(_("scenario"), max_length=30, choices=Scenario)
    template_key = models.SlugField(max_length=80, blank=True)
    translations = models.JSONField(default=dict, blank=True)  # see LibraryTextMixin
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "key"], name="action_unique_key"),
            models.UniqueConstraint(
                fields=["project", "template_key"],
                condition=~Q(template_key=""),
                name="action_unique_template_key",
            ),
        ]
        verbose_name = _("acceptance action")

    def __str__(self) -> str:
        return self.key

    @property
    def question_text(self) -> str:
        return self.shown("question")

    @property
    def steps_text(self) -> str:
        return self.shown("steps")

    @property
    def expected_evidence_text(self) -> str:
        return self.shown("expected_evidence")

    @property
    def pass_criterion_text(self) -> str:
        return self.shown("pass_criterion")

    def clean(self) -> None:
        same_project = self.requirement.project_id == self.project_id
        if self.requirement_id and self.project_id and not same_project:
            raise ValidationError({"requirement": _("The requirement belongs to another project.")})


class ActionKeyRename(models.Model):
    """A past key of an action, so that old CI jobs and links still find it."""

    action = models.ForeignKey(AcceptanceAction, on_delete=models.CASCADE, related_name="renames")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    old_key = models.SlugField(max_length=80)
    new_key = models.SlugField(max_length=80)
    renamed_at = models.DateTimeField(auto_now_add=True)
    renamed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )

    class Meta:
        ordering = ["-renamed_at", "-pk"]
        indexes = [models.Index(fields=["project", "old_key"])]

    def __str__(self) -> str:
        return f"{self.old_key} -> {self.new_key}"
