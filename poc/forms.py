from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from evaluations.models import OWNER_TEAMS, Candidate, Dimension, Scenario, TokenScope
from poc.models import (
    Delivery,
    Outcome,
    Party,
    ResponsibilityArea,
)

DELIVERY_CHOICES = [("", "—"), *Delivery.choices]


class ResultForm(forms.Form):
    outcome = forms.ChoiceField(
        label=_("Outcome"),
        choices=Outcome.choices,
        widget=forms.RadioSelect,
        error_messages={
            "invalid_choice": _("Choose one of: passed, failed, not covered, needs integration.")
        },
    )
    failure_cause = forms.CharField(
        label=_("Failure cause"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    integration_what = forms.CharField(
        label=_("What must be integrated"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    integration_owner_team = forms.ChoiceField(
        label=_("Owning team"), required=False, choices=[("", "—"), *OWNER_TEAMS]
    )
    integration_effort_days = forms.DecimalField(
        label=_("Effort (person-days)"),
        required=False,
        min_value=Decimal("0"),
        max_digits=7,
        decimal_places=1,
    )
    integration_delivery = forms.ChoiceField(
        label=_("Kind of delivery"),
        required=False,
        choices=DELIVERY_CHOICES,
        help_text=_("Left empty, the cell's previous integration need gives it."),
    )
    integration_delivered_by = forms.CharField(
        label=_("Delivered by (the vendor, our team, a named third party)"),
        required=False,
        max_length=200,
    )
    note = forms.CharField(
        label=_("Note (Markdown)"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    change_reason = forms.CharField(
        label=_("Reason for the change"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Needed when the cell already has a different outcome."),
    )
    # Evidence in the same step (optional): a file, or a link.
    evidence_file = forms.FileField(label=_("Evidence file"), required=False, allow_empty_file=True)
    evidence_url = forms.URLField(
        label=_("or an evidence link"), required=False, max_length=2000, assume_scheme="https"
    )

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        if cleaned.get("evidence_file") and cleaned.get("evidence_url"):
            self.add_error("evidence_url", _("Attach a file or a link, not both."))
        return cleaned


class EvidenceForm(forms.Form):
    file = forms.FileField(label=_("File"), required=False, allow_empty_file=True)
    url = forms.URLField(
        label=_("or a link"), required=False, max_length=2000, assume_scheme="https"
    )
    name = forms.CharField(label=_("Link title"), required=False, max_length=255)

    def clean(self) -> dict:
        data = super().clean() or {}
        if not data.get("file") and not data.get("url") and not self.errors:
            raise forms.ValidationError(_("Choose a file or give a link."))
        return data


class MatrixFilterForm(forms.Form):
    dimension = forms.ChoiceField(
        label=_("Dimension"),
        required=False,
        choices=[("", _("All dimensions")), *Dimension.choices],
    )
    scenario = forms.ChoiceField(
        label=_("Scenario"), required=False, choices=[("", _("All scenarios")), *Scenario.choices]
    )
    outcome = forms.ChoiceField(
        label=_("Outcome"), required=False, choices=[("", _("All outcomes")), *Outcome.choices]
    )
    team = forms.ChoiceField(
        label=_("Owning team"), required=False, choices=[("", _("All teams")), *OWNER_TEAMS]
    )
    all_candidates = forms.BooleanField(
        label=_("Include not-applicable candidates"), required=False
    )


class ResponsibilityBulkForm(forms.Form):
    """Who carries an area: what the one-cell editor and a bulk assignment both give a cell
    (a bulk assignment gives no note: each cell keeps its own)."""

    party = forms.ChoiceField(label=_("Party"), choices=Party.choices)
    delivery = forms.ChoiceField(
        label=_("Kind of delivery"), choices=DELIVERY_CHOICES, required=False
    )
    person = forms.CharField(label=_("Named person"), max_length=200)
    escalation = forms.CharField(label=_("Escalation"), max_length=300, required=False)


class ResponsibilityForm(ResponsibilityBulkForm):
    note = forms.CharField(
        label=_("Note"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )


class CellSelectionForm(forms.Form):
    """The cells of the responsibility grid a bulk assignment covers: cells ticked one by one
    ("candidate-slug:area"), whole rows (areas) and whole columns (candidates). A ticked row or
    column stands for all its cells, so that choosing one works without JavaScript too."""

    cell = forms.MultipleChoiceField(
        required=False,
        error_messages={
            "invalid_choice": _(
                "“%(value)s” is not a cell of this grid: reload the page and choose again."
            )
        },
    )
    row = forms.MultipleChoiceField(
        required=False,
        choices=ResponsibilityArea.choices,
        error_messages={"invalid_choice": _("“%(value)s” is not an area of responsibility.")},
    )
    column = forms.MultipleChoiceField(
        required=False,
        error_messages={
            "invalid_choice": _(
                "“%(value)s” is not a candidate of this grid: reload the page and choose again."
            )
        },
    )

    def __init__(self, *args: Any, candidates: list[Candidate], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.candidates = candidates
        column, cell = self.fields["column"], self.fields["cell"]
        assert isinstance(column, forms.MultipleChoiceField)
        assert isinstance(cell, forms.MultipleChoiceField)
        column.choices = [(c.slug, c.slug) for c in candidates]
        keys = [cell_key(c, area) for c in candidates for area in ResponsibilityArea.values]
        cell.choices = [(key, key) for key in keys]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not (data.get("cell") or data.get("row") or data.get("column")) and not self.errors:
            raise forms.ValidationError(
                _("Choose at least one cell, a whole row or a whole column to assign."),
                code="nothing_chosen",
            )
        return data

    def cells(self) -> list[tuple[Candidate, str]]:
        """The chosen cells in grid order (area by area, candidates in shortlist order)."""
        data = self.cleaned_data
        ticked, rows, columns = set(data["cell"]), set(data["row"]), set(data["column"])
        return [
            (candidate, area)
            for area in ResponsibilityArea.values
            for candidate in self.candidates
            if area in rows or candidate.slug in columns or cell_key(candidate, area) in ticked
        ]


def cell_key(candidate: Candidate, area: str) -> str:
    """How a form names one cell of the responsibility grid."""
    return f"{candidate.slug}:{area}"


class ApiTokenForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100, help_text=_("e.g. gitlab-poc-volcano"))
    scopes = forms.MultipleChoiceField(
        label=_("Scopes"),
        choices=TokenScope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[TokenScope.READ, TokenScope.RESULTS_WRITE],
    )
    expires_days = forms.IntegerField(
        label=_("Expires after (days)"),
        min_value=1,
        max_value=365,
        initial=90,
        help_text=_(
            "Every token expires (at most a year), and stops working when the person who "
            "made it leaves the project."
        ),
    )


class SearchForm(forms.Form):
    q = forms.CharField(
        label=_("Search"),
        min_length=2,
        max_length=200,
        strip=True,
        error_messages={"min_length": _("Type at least two characters.")},
    )
