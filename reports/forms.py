from django import forms
from django.utils.translation import gettext_lazy as _

from evaluations.models import SIGNING_ROLE_CHOICES
from reports.models import Decision


class SheetGenerateForm(forms.Form):
    language = forms.ChoiceField(
        label=_("Language"), choices=[("zh-hans", "简体中文"), ("en", "English")]
    )
    candidates = forms.MultipleChoiceField(
        label=_("Candidates"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("None chosen: every shortlisted candidate (not the not-applicable tier)."),
    )
    acknowledgement = forms.CharField(
        label=_("If the review is not ready: why generate it anyway?"),
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_(
            "Actions with no result, unassigned responsibility areas, incomplete costs or open "
            "“to be confirmed” items are frozen with the revision and printed on its first "
            "page; your reason is printed with them and shown to every signer."
        ),
    )
    print_every_result = forms.BooleanField(
        label=_("Print every result"),
        required=False,
        help_text=_(
            "The PDF then lists every result and evidence item instead of the decision "
            "document; the full record is attached to the PDF either way."
        ),
    )

    def __init__(self, *args: object, candidates: list[tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["candidates"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = candidates


class AcknowledgeForm(forms.Form):
    reason = forms.CharField(
        label=_("Why may this revision go to sign-off as it is?"),
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class SignOffForm(forms.Form):
    role = forms.CharField(widget=forms.HiddenInput)
    sheet_sha256 = forms.CharField(widget=forms.HiddenInput, max_length=64)
    decision = forms.ChoiceField(
        label=_("Decision"), choices=Decision.choices, widget=forms.RadioSelect
    )
    comment = forms.CharField(
        label=_("Comment"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=5000,
    )


class VerifyForm(forms.Form):
    file = forms.FileField(label=_("Signed PDF"))


class SigningRolesForm(forms.Form):
    signing_roles = forms.MultipleChoiceField(
        label=_("Team roles that sign"),
        choices=SIGNING_ROLE_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Choose at least one team role.")},
        help_text=_("Applies to revisions generated from now on."),
    )
    one_signer_many_roles = forms.BooleanField(
        label=_("One person may sign for several roles"),
        required=False,
        help_text=_(
            "Off (the default): a person decides for one role of a revision, whatever roles "
            "they hold. On: the sheet's sign-off page says that this project allowed it."
        ),
    )


class ReviewFreezeForm(forms.Form):
    frozen = forms.BooleanField(
        label=_("Freeze for sign-off"),
        required=False,
        help_text=_(
            "While a revision is open, edits to what it froze (framing, shortlist, acceptance "
            "suite, responsibilities, boundaries) are refused; results are still recorded, after "
            "the freeze. Lifted by hand, or held no longer once the revision is sealed, rejected "
            "or withdrawn."
        ),
    )


class WithdrawForm(forms.Form):
    reason = forms.CharField(
        label=_("Why withdraw this revision?"),
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": _("Say why the revision is withdrawn.")},
    )


class RecommendationForm(forms.Form):
    candidates = forms.MultipleChoiceField(
        label=_("Recommended candidates"), required=False, widget=forms.CheckboxSelectMultiple
    )
    reason = forms.CharField(
        label=_("Why"), required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3})
    )
    conditions = forms.CharField(
        label=_("On these conditions"),
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Frozen with each revision; the sheet's first page opens with it."),
    )
    review_by = forms.DateField(
        label=_("Review the decision by"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_("When the sealed decision is due for another look; its signers are told."),
    )
    reopen_when = forms.CharField(
        label=_("Also reopened when"),
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_(
            "One condition a line (a new scheduler release, a workload that changes). The "
            "workbench watches on its own for other GPU models, drivers or versions in probe "
            "runs, expired quotes and versions changed by a person."
        ),
    )

    def __init__(self, *args: object, candidates: list[tuple[str, str]], **kwargs: object) -> None:
        # Its own element ids: the sheets page holds the generation form too, whose candidate
        # boxes would otherwise share ids (and labels) with these.
        kwargs.setdefault("auto_id", "id_recommendation_%s")
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["candidates"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = candidates
