import json
from decimal import Decimal

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.forms.utils import ErrorDict
from django.utils.translation import gettext_lazy as _

from evaluations.models import OWNER_TEAMS, Dimension, Scenario
from poc.models import Outcome, Party, TokenScope


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
    note = forms.CharField(
        label=_("Note (Markdown)"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    change_reason = forms.CharField(
        label=_("Reason for the change"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Needed when the cell already has a different outcome."),
    )


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


class ResponsibilityForm(forms.Form):
    party = forms.ChoiceField(label=_("Party"), choices=Party.choices)
    person = forms.CharField(label=_("Named person"), max_length=200)
    escalation = forms.CharField(label=_("Escalation"), max_length=300, required=False)
    note = forms.CharField(
        label=_("Note"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )


class BoundaryForm(forms.Form):
    license_model = forms.CharField(
        label=_("License model"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    support_terms = forms.CharField(
        label=_("Support terms"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    upgrade_cadence = forms.CharField(
        label=_("Upgrade cadence"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    exit_plan = forms.CharField(
        label=_("Exit and migration plan"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )


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
        max_value=3650,
        required=False,
        initial=90,
        help_text=_("Leave empty for a token that never expires."),
    )


# --- probes ------------------------------------------------------------------------------


class ProbeUploadForm(forms.Form):
    """Probe output from a node the workbench cannot reach: the agent's bundle, or nvidia-smi
    output in any format the parsers read, as a file or pasted."""

    candidate = forms.ChoiceField(label=_("Candidate"))
    file = forms.FileField(
        label=_("File"),
        required=False,
        help_text=_(
            "workbench-probe's bundle (.json), or nvidia-smi -q -x / -q / --query-gpu "
            "output, a capture of several commands, or a kernel log."
        ),
    )
    text = forms.CharField(
        label=_("Or paste the output"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "mono"}),
    )
    host = forms.CharField(label=_("Node name"), max_length=255, required=False)
    expected_gpus = forms.IntegerField(
        label=_("GPUs the node should have"),
        min_value=1,
        max_value=1024,
        required=False,
        help_text=_("Fewer GPUs found than this makes the node fail its health check."),
    )

    def __init__(self, *args: object, candidates: list[tuple[str, str]], **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["candidate"].choices = candidates  # type: ignore[attr-defined]

    @classmethod
    def refused(cls, message: str, *, candidates: list[tuple[str, str]]) -> "ProbeUploadForm":
        """An empty form that carries why an upload was refused before it was read (too big):
        nothing of the request is bound, so nothing of it is echoed back."""
        form = cls(candidates=candidates)
        form._errors = ErrorDict(  # type: ignore[attr-defined]
            {NON_FIELD_ERRORS: form.error_class([message])}
        )
        return form

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        if not cleaned.get("file") and not (cleaned.get("text") or "").strip():
            raise forms.ValidationError(_("Choose a file or paste the output."))
        if cleaned.get("file") and (cleaned.get("text") or "").strip():
            raise forms.ValidationError(_("Choose a file or paste the output, not both."))
        return cleaned


class ProbeBindingForm(forms.Form):
    """Which check of the catalogue judges an action, and its parameters as JSON."""

    check = forms.ChoiceField(label=_("Check"), required=False)
    params = forms.CharField(
        label=_("Parameters (JSON)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false", "class": "mono"}),
    )

    def __init__(self, *args: object, checks: list[tuple[str, str]], **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["check"].choices = [("", _("— not checked by probes —")), *checks]  # type: ignore[attr-defined]

    def clean_params(self) -> dict[str, object]:
        raw = (self.cleaned_data.get("params") or "").strip()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise forms.ValidationError(
                _("The parameters are not valid JSON: %(error)s") % {"error": exc}
            ) from None
        if not isinstance(value, dict):
            raise forms.ValidationError(_("The parameters must be a JSON object, e.g. {}."))
        return value
