from typing import Any

from django import forms
from django.conf import settings
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from evaluations.models import (
    OWNER_TEAMS,
    Dimension,
    ExistingBase,
    FilterStep,
    Importance,
    LayerNeeded,
    Scenario,
    Solution,
    SolutionKind,
    SupplierNeed,
    TeamRole,
    Tier,
    Workload,
)
from evaluations.selectors import person_named


class ProjectCreateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    slug = forms.SlugField(
        label=_("Short name in URLs"),
        max_length=80,
        required=False,
        help_text=_("Letters, digits and hyphens. Left empty, it is made from the name."),
    )
    description = forms.CharField(label=_("Description"), widget=forms.Textarea, required=False)
    role = forms.ChoiceField(label=_("Your team role"), choices=TeamRole.choices)


class FramingForm(forms.Form):
    """The four framing questions, the project's name and description, and whether it is
    archived (its phase otherwise follows its state)."""

    name = forms.CharField(label=_("Name"), max_length=200)
    description = forms.CharField(
        label=_("Description"), widget=forms.Textarea(attrs={"rows": 3}), required=False
    )
    workloads = forms.MultipleChoiceField(
        label=_("Which workloads dominate?"),
        choices=Workload.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    existing_base = forms.ChoiceField(
        label=_("What already runs?"),
        choices=[("", _("Not answered yet")), *ExistingBase.choices],
        required=False,
    )
    layer_needed = forms.ChoiceField(
        label=_("Which layer is needed?"),
        choices=[("", _("Not answered yet")), *LayerNeeded.choices],
        required=False,
    )
    supplier_needs = forms.MultipleChoiceField(
        label=_("What is needed from a supplier?"),
        choices=SupplierNeed.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    archived = forms.BooleanField(
        label=_("Archived"),
        required=False,
        help_text=_(
            "The evaluation is over or set aside: its phase stops following its state. "
            "Otherwise the phase moves on its own, from framing to decided."
        ),
    )


class CandidateAddForm(forms.Form):
    solution = forms.ModelChoiceField(label=_("Solution"), queryset=Solution.objects.none())
    version = forms.CharField(label=_("Version under test"), max_length=80, required=False)
    tier = forms.ChoiceField(label=_("Tier"), choices=Tier.choices)
    decided_by_step = forms.ChoiceField(label=_("Decided at step"), choices=FilterStep.choices)
    reason = forms.CharField(
        label=_("Reason"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["solution"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = Solution.objects.select_related("route").order_by(
            "kind", "position", "key"
        )
        field.label_from_instance = lambda s: (  # type: ignore[method-assign,assignment]
            f"{s.name} ({s.get_kind_display()})"
        )


class CandidateMoveForm(forms.Form):
    """A change to a shortlisted candidate: only the fields the request carries change (a tier
    button sends the tier alone; a tier it sends must be one)."""

    tier = forms.ChoiceField(choices=Tier.choices, required=False)
    reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    version = forms.CharField(max_length=80, required=False)
    decided_by_step = forms.ChoiceField(choices=FilterStep.choices, required=False)

    def __init__(self, data: QueryDict | None = None) -> None:
        super().__init__(data)
        self.fields["tier"].required = data is not None and "tier" in data
        self.fields["decided_by_step"].required = data is not None and "decided_by_step" in data

    def changes(self) -> dict[str, str]:
        return {name: self.cleaned_data[name] for name in self.fields if name in self.data}


class MoveForm(forms.Form):
    direction = forms.ChoiceField(
        choices=[("up", "up"), ("down", "down")],
        error_messages={
            "required": _("direction must be up or down"),
            "invalid_choice": _("direction must be up or down"),
        },
    )


class CandidateEditForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    version = forms.CharField(label=_("Version under test"), max_length=80, required=False)
    decided_by_step = forms.ChoiceField(label=_("Decided at step"), choices=FilterStep.choices)


class MemberAddForm(forms.Form):
    username = forms.CharField(
        label=_("Person"),
        max_length=254,
        help_text=_("A name, e-mail address or user name; type two letters for suggestions."),
        widget=forms.TextInput(attrs={"list": "people", "autocomplete": "off"}),
    )
    role = forms.ChoiceField(label=_("Team role"), choices=TeamRole.choices)
    is_admin = forms.BooleanField(label=_("Project admin"), required=False)

    def clean_username(self) -> object:
        text = self.cleaned_data["username"].strip()
        user, found = person_named(text)
        if user is not None:
            return user
        if not found:
            raise forms.ValidationError(
                _("No active person is called %(name)s, or has that address.") % {"name": text}
            )
        raise forms.ValidationError(
            _("Several people match %(name)s: %(who)s. Give the user name.")
            % {
                "name": text,
                "who": "; ".join(
                    f"{p.get_full_name() or p.username} ({p.username})" for p in found
                ),
            }
        )


# --- acceptance suite --------------------------------------------------------------------


class RequirementForm(forms.Form):
    feature = forms.CharField(label=_("Feature as named"), max_length=300)
    dimension = forms.ChoiceField(label=_("Dimension"), choices=Dimension.choices)
    owner_team = forms.ChoiceField(label=_("Owning team"), choices=OWNER_TEAMS)
    importance = forms.ChoiceField(label=_("Importance"), choices=Importance.choices)


class ClaimsForm(forms.Form):
    text = forms.CharField(
        label=_("Vendor claims, one per line"),
        widget=forms.Textarea(attrs={"rows": 10}),
        max_length=50_000,
        help_text=_("Bullets and numbering are removed; claims already listed are skipped."),
    )
    dimension = forms.ChoiceField(label=_("Dimension"), choices=Dimension.choices)
    owner_team = forms.ChoiceField(label=_("Owning team"), choices=OWNER_TEAMS)
    importance = forms.ChoiceField(label=_("Importance"), choices=Importance.choices)


class ActionForm(forms.Form):
    key = forms.SlugField(
        label=_("Key"),
        max_length=80,
        help_text=_("How CI pipelines and probes name this action. Lowercase, digits, hyphens."),
    )
    scenario = forms.ChoiceField(label=_("Scenario"), choices=Scenario.choices)
    question = forms.CharField(
        label=_("Business question"), widget=forms.Textarea(attrs={"rows": 2})
    )
    steps = forms.CharField(
        label=_("Steps"), widget=forms.Textarea(attrs={"rows": 3}), required=False
    )
    expected_evidence = forms.CharField(
        label=_("Expected evidence"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )
    pass_criterion = forms.CharField(
        label=_("Pass criterion"), widget=forms.Textarea(attrs={"rows": 2})
    )

    def clean_key(self) -> str:
        key = self.cleaned_data["key"]
        if key != key.lower() or "_" in key:
            raise forms.ValidationError(_("Use lowercase letters, digits and hyphens only."))
        return key


class SuiteFilterForm(forms.Form):
    dimension = forms.ChoiceField(
        label=_("Dimension"),
        choices=[("", _("All dimensions")), *Dimension.choices],
        required=False,
    )
    scenario = forms.ChoiceField(
        label=_("Scenario"), choices=[("", _("All scenarios")), *Scenario.choices], required=False
    )
    team = forms.ChoiceField(
        label=_("Owning team"), choices=[("", _("All teams")), *OWNER_TEAMS], required=False
    )


class HistoryFilterForm(forms.Form):
    """Which history entries to show: a kind of change, who made it, between two days."""

    kind = forms.ChoiceField(label=_("Kind of change"), required=False)
    actor = forms.CharField(label=_("By"), max_length=150, required=False)
    since = forms.DateField(
        label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label=_("Until"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args: Any, kinds: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kind = self.fields["kind"]
        assert isinstance(kind, forms.ChoiceField)
        kind.choices = [("", _("All kinds")), *kinds]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and since > until:
            raise forms.ValidationError(_("The first day comes after the last one."))
        return cleaned


class TemplateApplyForm(forms.Form):
    language = forms.ChoiceField(
        label=_("Language of the copied text"),
        choices=[("en", "English"), ("zh-hans", "简体中文")],
        help_text=_(
            "Copies keep the library's wording in both languages and each reader sees their "
            "own; this language is what stays once your team edits a text."
        ),
    )
    # The set's actions to copy, ticked in the preview beside each (not among the form's
    # fields as rendered: the page draws a box per planned action).
    actions = forms.MultipleChoiceField(
        required=True,
        error_messages={"required": _("Choose at least one action to add.")},
    )

    def __init__(self, *args: Any, offered: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["actions"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(key, key) for key in offered]
        self.initial.setdefault("actions", offered)


class SuiteImportForm(forms.Form):
    file = forms.FileField(
        label=_("YAML or CSV file"),
        help_text=_("A file exported from this page, or written by hand in the same shape."),
    )

    def clean_file(self) -> object:
        upload = self.cleaned_data["file"]
        name = upload.name.lower()
        if not name.endswith((".yaml", ".yml", ".csv")):
            raise forms.ValidationError(_("Upload a .yaml, .yml or .csv file."))
        if upload.size > settings.SUITE_IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                _("The file is larger than %(limit)s MB.")
                % {"limit": settings.SUITE_IMPORT_MAX_BYTES // (1024 * 1024)}
            )
        if upload.size == 0:
            raise forms.ValidationError(_("The file is empty."))
        try:
            upload.text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise forms.ValidationError(_("The file is not UTF-8 text.")) from None
        return upload


class TeamSolutionForm(forms.Form):
    """A team's own catalog entry: every text in English and Chinese (or neither)."""

    kind = forms.ChoiceField(label=_("Kind"), choices=SolutionKind.choices)
    route = forms.ModelChoiceField(
        label=_("Route (for a product)"),
        queryset=Solution.objects.none(),
        required=False,
    )
    vendor = forms.CharField(label=_("Vendor"), max_length=120, required=False)
    name_en = forms.CharField(label=_("Name (English)"), max_length=120, required=False)
    name_zh = forms.CharField(label=_("Name (Chinese)"), max_length=120, required=False)
    summary_en = forms.CharField(
        label=_("Summary (English)"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )
    summary_zh = forms.CharField(
        label=_("Summary (Chinese)"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )
    scale_en = forms.CharField(label=_("Applicable scale (English)"), required=False)
    scale_zh = forms.CharField(label=_("Applicable scale (Chinese)"), required=False)
    integration_cost_en = forms.CharField(label=_("Integration cost (English)"), required=False)
    integration_cost_zh = forms.CharField(label=_("Integration cost (Chinese)"), required=False)
    operations_owner_en = forms.CharField(
        label=_("Who carries operations (English)"), required=False
    )
    operations_owner_zh = forms.CharField(
        label=_("Who carries operations (Chinese)"), required=False
    )
    not_suitable_when_en = forms.CharField(
        label=_("Not suitable when (English)"),
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
    )
    not_suitable_when_zh = forms.CharField(
        label=_("Not suitable when (Chinese)"),
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
    )
    must_test_en = forms.CharField(
        label=_("Must test (English, one per line)"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
    )
    must_test_zh = forms.CharField(
        label=_("Must test (Chinese, one per line)"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
    )

    def __init__(self, *args: Any, editing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        route_field = self.fields["route"]
        assert isinstance(route_field, forms.ModelChoiceField)
        route_field.queryset = Solution.objects.filter(kind=SolutionKind.ROUTE).order_by(
            "position", "key"
        )
        if editing:  # an entry keeps its kind
            self.fields["kind"].disabled = True

    def texts(self) -> dict[str, str]:
        return {
            name: str(self.cleaned_data.get(name) or "")
            for name in self.fields
            if name.endswith(("_en", "_zh"))
        }
