"""The solution catalog and the template library, both languages in each entry."""

from django.conf import settings
from django.db import models
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from evaluations.models.choices import (
    OWNER_TEAMS,
    Dimension,
    Importance,
    Scenario,
    SolutionKind,
    TemplateSetKind,
)
from workbench.languages import is_chinese


class LocalizedTextMixin:
    """Catalog rows keep each text in English (`*_en`) and Simplified Chinese (`*_zh`)."""

    def localized(self, field: str) -> str:
        value = getattr(self, f"{field}_{language_suffix()}")
        return value or getattr(self, f"{field}_en")


def language_suffix() -> str:
    """`zh` when the active language is Chinese, else `en`: the suffix of catalog text fields."""
    return "zh" if is_chinese(get_language()) else "en"


class LibraryTextMixin:
    """Rows copied from the template library keep the library's wording in both languages.

    `translations` maps a text field to {"en": ..., "zh": ...} while the field still holds the
    library's wording; the reader then sees their own language. Editing a field drops its
    entry, so text a team wrote stays exactly as written, in every language.
    """

    translations: dict[str, dict[str, str]]

    def shown(self, field: str) -> str:
        stored: str = getattr(self, field)
        texts = (self.translations or {}).get(field)
        if not texts or stored not in texts.values():
            return stored
        return texts.get(language_suffix()) or stored

    def is_library_text(self, field: str, value: str) -> bool:
        """Whether `value` is the library's wording of `field` in one of the languages."""
        texts = (self.translations or {}).get(field) or {}
        return bool(texts) and value in texts.values()


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
    # Entries a team added (their own control plane, a product the shipped catalog lacks) carry
    # who added them and keys starting TEAM_KEY_PREFIX; the shipped ones come from catalog/
    # through seed_catalog, which never touches a team's entry.
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    added_at = models.DateTimeField(null=True, blank=True)

    TEAM_KEY_PREFIX = "team-"

    class Meta:
        ordering = ["kind", "position", "key"]
        verbose_name = _("solution")
        verbose_name_plural = _("solution catalog")

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return self.localized("name")

    @property
    def is_team_entry(self) -> bool:
        return self.key.startswith(self.TEAM_KEY_PREFIX)

    def must_test_items(self) -> list[str]:
        return [line.strip() for line in self.localized("must_test").splitlines() if line.strip()]


class TemplateSet(LocalizedTextMixin, models.Model):
    """A named group of template requirements and actions that can be applied to a project."""

    key = models.SlugField(max_length=80, unique=True)
    kind = models.CharField(max_length=30, choices=TemplateSetKind)
    route = models.ForeignKey(
        Solution, on_delete=models.PROTECT, null=True, blank=True, related_name="template_sets"
    )
    name_en = models.CharField(max_length=200)
    name_zh = models.CharField(max_length=200)
    description_en = models.TextField(blank=True)
    description_zh = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]
        verbose_name = _("template set")

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return self.localized("name")


class TemplateRequirement(LocalizedTextMixin, models.Model):
    template_set = models.ForeignKey(
        TemplateSet, on_delete=models.CASCADE, related_name="requirements"
    )
    key = models.SlugField(max_length=80, unique=True)
    feature_en = models.CharField(max_length=300)
    feature_zh = models.CharField(max_length=300)
    dimension = models.CharField(max_length=20, choices=Dimension)
    owner_team = models.CharField(max_length=20, choices=OWNER_TEAMS)
    importance = models.CharField(max_length=10, choices=Importance)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]

    def __str__(self) -> str:
        return self.key


class TemplateAction(LocalizedTextMixin, models.Model):
    requirement = models.ForeignKey(
        TemplateRequirement, on_delete=models.CASCADE, related_name="actions"
    )
    key = models.SlugField(max_length=80, unique=True)
    scenario = models.CharField(max_length=30, choices=Scenario)
    question_en = models.TextField()
    question_zh = models.TextField()
    steps_en = models.TextField(blank=True)
    steps_zh = models.TextField(blank=True)
    evidence_en = models.TextField(blank=True)
    evidence_zh = models.TextField(blank=True)
    pass_criterion_en = models.TextField()
    pass_criterion_zh = models.TextField()
    # The probe check that judges this action by default: {"check": KEY, "params": {...}} with
    # a key of the PoC app's check catalogue, or {} for an action checked by people.
    probe_check = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]

    def __str__(self) -> str:
        return self.key
