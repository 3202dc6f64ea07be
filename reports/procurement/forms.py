"""Forms of procurement: a candidate's terms one group at a time (each term with its value and
its basis), and the chase of an open item. Values are checked by the term list
(reports/procurement/terms.py) in the service, so the form and the API refuse the same things."""

from dataclasses import dataclass

from django import forms
from django.contrib.auth.models import User
from django.forms import BoundField
from django.utils.translation import gettext_lazy as _

from evaluations.models import OWNER_TEAMS
from reports.procurement.models import (
    Basis,
    Capacity,
    ChargeCategory,
    CostCategory,
    LineKind,
    Support,
    TermEntry,
)
from reports.procurement.services import MAX_REASON, TermChange
from reports.procurement.terms import SUPPORT_LAYERS, Kind, PricingUnit, Term
from workbench.typing import JSON

DATE_INPUT = forms.DateInput(attrs={"type": "date"})


@dataclass
class TermFields:
    term: Term
    value: list[BoundField]
    basis: list[BoundField]


class TermsForm(forms.Form):
    """The terms of one group for one candidate, filled with their current entries."""

    reason = forms.CharField(
        label=_("Why (kept in the history)"),
        required=False,
        max_length=MAX_REASON,
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def __init__(
        self, *args: object, terms: list[Term], current: dict[str, TermEntry], **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.terms = terms
        for term in terms:
            entry = current.get(term.key)
            self._value_fields(term, entry.value if entry else None)
            self._basis_fields(term, entry)

    def _value_fields(self, term: Term, value: JSON) -> None:
        key = term.key
        if term.kind == Kind.MONEY:
            money = value if isinstance(value, dict) else {}
            self.fields[f"{key}__amount"] = forms.CharField(
                label=term.label, required=False, initial=money.get("amount", "")
            )
            self.fields[f"{key}__currency"] = forms.CharField(
                label=_("Currency"), required=False, max_length=3,
                initial=money.get("currency", ""),
            )  # fmt: skip
        elif term.kind == Kind.LAYERS:
            layers = value if isinstance(value, dict) else {}
            choices = [("", "—"), *(term.choices.choices if term.choices else [])]
            for layer, label in SUPPORT_LAYERS:
                self.fields[f"{key}__{layer}"] = forms.ChoiceField(
                    label=label, required=False, choices=choices, initial=layers.get(layer, "")
                )
        elif term.kind == Kind.CHOICE:
            choices = [("", "—"), *(term.choices.choices if term.choices else [])]
            self.fields[key] = forms.ChoiceField(
                label=term.label, required=False, choices=choices, initial=value or ""
            )
        else:
            widget = forms.Textarea(attrs={"rows": 3}) if term.kind == Kind.TEXT else None
            self.fields[key] = forms.CharField(
                label=f"{term.label} ({term.unit})" if term.unit else term.label,
                required=False,
                initial="" if value is None else str(value),
                widget=widget,
                help_text=term.help,
                strip=False,
            )

    def _basis_fields(self, term: Term, entry: TermEntry | None) -> None:
        key = term.key
        self.fields[f"{key}__basis"] = forms.ChoiceField(
            label=_("Basis"), choices=Basis.choices, initial=entry.basis if entry else Basis.TBC
        )
        self.fields[f"{key}__reference"] = forms.CharField(
            label=_("Quote or document reference"), required=False, max_length=300,
            initial=entry.reference if entry else "",
        )  # fmt: skip
        self.fields[f"{key}__source"] = forms.CharField(
            label=_("Where it was read"), required=False, max_length=500,
            initial=entry.source if entry else "",
        )  # fmt: skip
        self.fields[f"{key}__valid_until"] = forms.DateField(
            label=_("Quote valid until"), required=False, widget=DATE_INPUT,
            initial=entry.valid_until if entry else None,
        )  # fmt: skip

    def grouped(self) -> list[TermFields]:
        """Per term, its value fields and its basis fields, for the template."""
        out = []
        for term in self.terms:
            names = [n for n in self.fields if n == term.key or n.startswith(f"{term.key}__")]
            basis_names = {
                f"{term.key}__{p}" for p in ("basis", "reference", "source", "valid_until")
            }
            out.append(
                TermFields(
                    term,
                    [self[n] for n in names if n not in basis_names],
                    [self[n] for n in names if n in basis_names],
                )
            )
        return out

    def changes(self) -> list[TermChange]:
        """What was sent, as raw changes for terms_record (after is_valid)."""
        data = self.cleaned_data
        changes = []
        for term in self.terms:
            key = term.key
            value: JSON
            if term.kind == Kind.MONEY:
                amount, currency = data[f"{key}__amount"].strip(), data[f"{key}__currency"].strip()
                value = {"amount": amount, "currency": currency} if amount or currency else None
            elif term.kind == Kind.LAYERS:
                value = {layer: data[f"{key}__{layer}"] for layer, _label in SUPPORT_LAYERS}
                value = {k: v for k, v in value.items() if v} or None
            else:
                value = data[key].strip() if isinstance(data[key], str) else data[key]
            changes.append(
                TermChange(
                    key=key,
                    value=value,
                    basis=data[f"{key}__basis"],
                    reference=data[f"{key}__reference"],
                    source=data[f"{key}__source"],
                    valid_until=data[f"{key}__valid_until"],
                )
            )
        return changes


class ConfirmationForm(forms.Form):
    """Who chases an open item, by when, and what was asked."""

    owner_team = forms.ChoiceField(label=_("Owning team"), required=False)
    owner = forms.ModelChoiceField(label=_("Owner"), required=False, queryset=User.objects.none())
    due = forms.DateField(label=_("Due"), required=False, widget=DATE_INPUT)
    request = forms.CharField(
        label=_("Request sent to the vendor"),
        required=False,
        max_length=MAX_REASON,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    requested_at = forms.DateField(label=_("Sent on"), required=False, widget=DATE_INPUT)

    def __init__(self, *args: object, members: list[User], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["owner_team"].choices = [("", "—"), *OWNER_TEAMS]  # type: ignore[attr-defined]
        self.fields["owner"].queryset = User.objects.filter(  # type: ignore[attr-defined]
            pk__in=[m.pk for m in members]
        ).order_by("username")


class CostModelForm(forms.Form):
    """The project's cost model; exchange rates one per line: CODE RATE YYYY-MM-DD SOURCE."""

    currency = forms.CharField(label=_("Currency (ISO 4217)"), max_length=3)
    horizon_years = forms.CharField(label=_("Horizon (years, 1 to 10)"))
    discount_rate_percent = forms.CharField(label=_("Discount rate (%)"), required=False)
    gpus = forms.CharField(label=_("GPUs in year 1"))
    nodes = forms.CharField(label=_("Nodes in year 1"))
    cores_per_node = forms.CharField(label=_("Cores per node"), required=False)
    sockets_per_node = forms.CharField(label=_("Sockets per node"), required=False)
    named_users = forms.CharField(label=_("Named users"), required=False)
    gpu_hours_per_year = forms.CharField(label=_("GPU-hours demanded a year"), required=False)
    growth_percent = forms.CharField(label=_("Growth a year (%)"), required=False)
    fte_cost = forms.CharField(label=_("Loaded cost of one FTE a year"), required=False)
    capacity = forms.ChoiceField(
        label=_("Capacity for the demand"),
        required=False,
        choices=Capacity.choices,
        help_text=_(
            "Counted per candidate: the GPU-hours demanded divided by the utilisation it "
            "reaches (a term of each candidate) give the GPUs it needs."
        ),
    )
    gpu_price = forms.CharField(label=_("Price of one GPU (owned)"), required=False)
    depreciation_years = forms.CharField(label=_("Depreciated over (years)"), required=False)
    gpu_hour_price = forms.CharField(label=_("Price of one GPU-hour (cloud)"), required=False)
    baseline_label = forms.CharField(
        label=_("Baseline"),
        required=False,
        max_length=200,
        help_text=_("What runs today, or doing nothing; its cost lines go on the cost page."),
    )
    baseline_utilisation_percent = forms.CharField(label=_("Utilisation today (%)"), required=False)
    exchange_rates = forms.CharField(
        label=_("Exchange rates"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "One per line: currency, units of the project's currency it buys, the date it was "
            "read and where, e.g. EUR 1.10 2026-12-01 ECB reference rate."
        ),
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for team, label in OWNER_TEAMS:
            self.fields[f"day_rate_{team}"] = forms.CharField(
                label=_("Day rate of %(team)s") % {"team": label}, required=False
            )

    def clean_exchange_rates(self) -> dict[str, dict[str, str]]:
        rates = {}
        for number, line in enumerate(self.cleaned_data["exchange_rates"].splitlines(), 1):
            parts = line.split(None, 3)
            if not parts:
                continue
            if len(parts) < 4:
                raise forms.ValidationError(
                    _("Line %(n)s: give the currency, the rate, the date and the source.")
                    % {"n": number}
                )
            code, rate, read_on, source = parts
            rates[code.upper()] = {"rate": rate, "date": read_on, "source": source}
        return rates

    def day_rates(self) -> dict[str, str]:
        return {
            team: self.cleaned_data[f"day_rate_{team}"].strip()
            for team, _label in OWNER_TEAMS
            if self.cleaned_data[f"day_rate_{team}"].strip()
        }


def cost_model_initial(model: object) -> dict[str, object]:
    if model is None:
        return {"currency": "USD", "horizon_years": 5, "growth_percent": 0}
    initial: dict[str, object] = {
        name: getattr(model, name)
        for name in CostModelForm.base_fields
        if name != "exchange_rates" and hasattr(model, name)
    }
    initial["exchange_rates"] = "\n".join(
        f"{code} {given['rate']} {given['date']} {given['source']}"
        for code, given in getattr(model, "exchange_rates", {}).items()
    )
    for team, rate in getattr(model, "day_rates", {}).items():
        initial[f"day_rate_{team}"] = rate
    return initial


class CostLineForm(forms.Form):
    category = forms.ChoiceField(label=_("Category"), choices=CostCategory.choices)
    label = forms.CharField(label=_("What"), max_length=200)
    kind = forms.ChoiceField(label=_("How it runs"), choices=LineKind.choices)
    unit = forms.ChoiceField(
        label=_("Pricing unit (per unit lines)"),
        required=False,
        choices=[("", "—"), *PricingUnit.choices],
    )
    team = forms.ChoiceField(
        label=_("Team (person-days)"), required=False, choices=[("", "—"), *OWNER_TEAMS]
    )
    currency = forms.CharField(label=_("Currency"), max_length=3, required=False)
    low = forms.CharField(label=_("Low"))
    expected = forms.CharField(label=_("Expected"))
    high = forms.CharField(label=_("High"))
    discount_percent = forms.CharField(label=_("Discount (%)"), required=False)
    first_year = forms.CharField(label=_("From year"), initial=1)
    last_year = forms.CharField(label=_("To year (empty: to the horizon)"), required=False)
    charge_category = forms.ChoiceField(
        label=_("Charge category (FinOps FOCUS)"), choices=ChargeCategory.choices
    )
    basis = forms.ChoiceField(label=_("Basis"), choices=Basis.choices, initial=Basis.TBC)
    reference = forms.CharField(label=_("Quote or document reference"), required=False)
    source = forms.CharField(label=_("Where it was read"), required=False)
    valid_until = forms.DateField(label=_("Quote valid until"), required=False, widget=DATE_INPUT)


class CostLinesImportForm(forms.Form):
    file = forms.FileField(
        label=_("CSV or XLSX file"),
        help_text=_(
            "One cost line per row, with the template's columns; candidate is a candidate's "
            "key, or baseline."
        ),
    )


class ClaimForm(forms.Form):
    """A claim about one combination of a candidate."""

    candidate = forms.ChoiceField(label=_("Candidate"))
    gpu_model = forms.CharField(label=_("GPU model"), required=False, max_length=120)
    driver = forms.CharField(label=_("Driver"), required=False, max_length=120)
    cuda = forms.CharField(label=_("CUDA"), required=False, max_length=120)
    runtime = forms.CharField(label=_("Container runtime"), required=False, max_length=120)
    platform = forms.CharField(label=_("Kubernetes or OS version"), required=False, max_length=120)
    scheduler = forms.CharField(label=_("Scheduler version"), required=False, max_length=120)
    status = forms.ChoiceField(
        label=_("Status"),
        choices=[(s.value, s.label) for s in (Support.VENDOR, Support.FAILED, Support.TBC)],
        help_text=_("Verified is read from probe runs on the candidate's cluster, never typed."),
    )
    reference = forms.CharField(label=_("Document or reference"), required=False, max_length=300)
    note = forms.CharField(
        label=_("Note"), required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args: object, candidates: list[tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["candidate"].choices = candidates  # type: ignore[attr-defined]
