from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from evaluations.models import (
    ExistingBase,
    FilterStep,
    LayerNeeded,
    Phase,
    Solution,
    SupplierNeed,
    TeamRole,
    Tier,
    Workload,
)


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
    """The four framing questions, plus the project's phase and description."""

    name = forms.CharField(label=_("Name"), max_length=200)
    description = forms.CharField(
        label=_("Description"), widget=forms.Textarea(attrs={"rows": 3}), required=False
    )
    phase = forms.ChoiceField(label=_("Phase"), choices=Phase.choices)
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
    tier = forms.ChoiceField(choices=Tier.choices)
    reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class CandidateEditForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    version = forms.CharField(label=_("Version under test"), max_length=80, required=False)
    decided_by_step = forms.ChoiceField(label=_("Decided at step"), choices=FilterStep.choices)


class MemberAddForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = forms.ChoiceField(label=_("Team role"), choices=TeamRole.choices)
    is_admin = forms.BooleanField(label=_("Project admin"), required=False)

    def clean_username(self) -> object:
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError(
                _("No active user is called %(name)s.") % {"name": username}
            )
        return user
