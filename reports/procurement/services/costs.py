"""Writes of the cost model: the project's frame (currency, rates, horizon, fleet, what people
cost) and each candidate's cost lines. Everything is checked before the first write, bounds
included (an absurd amount is a typing error), and recorded in the project history."""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.history_labels import Part, candidate_part, phrase_part, text_part
from evaluations.models import OWNER_TEAMS, Candidate, Project
from evaluations.services import event_record, scope_edit_guard
from reports.procurement.models import (
    Basis,
    Capacity,
    ChargeCategory,
    CostCategory,
    CostLine,
    CostModel,
    LineKind,
)
from reports.procurement.services.terms import TermChange, basis_fields, close_chase
from reports.procurement.terms import MAX_AMOUNT, PricingUnit, currencies
from workbench.people import stored_user

TEAMS = {value for value, _label in OWNER_TEAMS}
MONEY_KINDS = {LineKind.PER_UNIT, LineKind.PER_YEAR, LineKind.ONE_OFF}
MAX_YEARS = 10
MAX_RATE = Decimal(1000000)
MAX_COUNT = Decimal(10_000_000)
HUNDRED = Decimal(100)


def bounded(value: object, label: str, low: Decimal, high: Decimal) -> Decimal:
    """`value` as a Decimal within [low, high], or ValidationError naming `label`."""
    if isinstance(value, bool) or value is None or value == "":
        raise ValidationError(_("%(field)s needs a number.") % {"field": label})
    try:
        number = Decimal(str(value).strip().replace(",", ""))
    except InvalidOperation:
        raise ValidationError(
            _("%(field)s needs a number, not %(value)s.") % {"field": label, "value": value}
        ) from None
    if not number.is_finite() or not low <= number <= high:
        raise ValidationError(
            _("%(field)s must be between %(low)s and %(high)s, not %(value)s.")
            % {"field": label, "low": low, "high": high, "value": value}
        )
    return number


def _whole(value: object, label: str, low: int, high: int) -> int:
    number = bounded(value, label, Decimal(low), Decimal(high))
    if number != number.to_integral_value():
        raise ValidationError(
            _("%(field)s needs a whole number, not %(value)s.") % {"field": label, "value": value}
        )
    return int(number)


def _blank_zero(value: object) -> object:
    """A count left blank is none of it."""
    return 0 if value is None or value == "" else value


def _optional(value: object, label: str, low: Decimal, high: Decimal) -> Decimal | None:
    return None if value in (None, "") else bounded(value, label, low, high)


def _currency(code: object, label: str) -> str:
    text = str(code or "").strip().upper()
    if text not in currencies():
        raise ValidationError(
            _("%(field)s: %(code)s is not an ISO 4217 currency code (for example USD, EUR, CNY).")
            % {"field": label, "code": text or "—"}
        )
    return text


@dataclass(frozen=True)
class ModelData:
    currency: str = "USD"
    horizon_years: object = 5
    discount_rate_percent: object = None
    gpus: object = 0
    nodes: object = 0
    cores_per_node: object = 0
    sockets_per_node: object = 0
    named_users: object = 0
    gpu_hours_per_year: object = 0
    growth_percent: object = 0
    fte_cost: object = None
    day_rates: object = None  # {team: amount}
    exchange_rates: object = None  # {currency: {"rate", "date", "source"}}
    capacity: str = ""
    gpu_price: object = None
    depreciation_years: object = None
    gpu_hour_price: object = None
    baseline_label: str = ""
    baseline_utilisation_percent: object = None


def _day_rates(raw: object) -> dict[str, str]:
    if raw in (None, ""):
        return {}
    if not isinstance(raw, dict):
        raise ValidationError(_("Day rates are given per team."))
    rates = {}
    for team, amount in raw.items():
        if team not in TEAMS:
            raise ValidationError(_("%(team)s is not a team.") % {"team": team})
        if amount not in (None, ""):
            label = _("Day rate of %(team)s") % {"team": team}
            rates[team] = str(bounded(amount, label, Decimal(0), MAX_RATE))
    return rates


def _exchange_rate(code: str, given: object) -> dict[str, str]:
    if not isinstance(given, dict):
        raise ValidationError(
            _("The rate of %(code)s needs a rate, a date and a source.") % {"code": code}
        )
    label = _("The rate of %(code)s") % {"code": code}
    rate = bounded(given.get("rate"), label, Decimal("0.000001"), MAX_RATE)
    try:
        read_on = date.fromisoformat(str(given.get("date") or ""))
    except ValueError:
        raise ValidationError(
            _("The rate of %(code)s needs the date it was read (YYYY-MM-DD).") % {"code": code}
        ) from None
    if read_on > timezone.localdate():
        raise ValidationError(
            _("The rate of %(code)s cannot have been read in the future.") % {"code": code}
        )
    source = str(given.get("source") or "").strip()
    if not source or len(source) > 300:
        raise ValidationError(
            _("The rate of %(code)s needs its source (up to 300 characters).") % {"code": code}
        )
    return {"rate": str(rate), "date": read_on.isoformat(), "source": source}


def _exchange_rates(raw: object, currency: str) -> dict[str, dict[str, str]]:
    if raw in (None, ""):
        return {}
    if not isinstance(raw, dict):
        raise ValidationError(_("Exchange rates are given per currency."))
    rates = {}
    for code, given in raw.items():
        other = _currency(code, _("Exchange rate"))
        if other == currency:
            raise ValidationError(_("%(code)s is the project's own currency.") % {"code": other})
        rates[other] = _exchange_rate(other, given)
    return rates


def _model_fields(data: ModelData) -> dict[str, object]:
    currency = _currency(data.currency, _("Currency"))
    zero = Decimal(0)
    return {
        "currency": currency,
        "horizon_years": _whole(data.horizon_years, _("The horizon"), 1, MAX_YEARS),
        "discount_rate_percent": _optional(
            data.discount_rate_percent, _("The discount rate"), zero, Decimal(50)
        ),
        "gpus": bounded(_blank_zero(data.gpus), _("GPUs"), zero, MAX_COUNT),
        "nodes": bounded(_blank_zero(data.nodes), _("Nodes"), zero, MAX_COUNT),
        "cores_per_node": bounded(
            _blank_zero(data.cores_per_node), _("Cores per node"), zero, Decimal(4096)
        ),
        "sockets_per_node": bounded(
            _blank_zero(data.sockets_per_node), _("Sockets per node"), zero, Decimal(64)
        ),
        "named_users": bounded(_blank_zero(data.named_users), _("Named users"), zero, MAX_COUNT),
        "gpu_hours_per_year": bounded(
            _blank_zero(data.gpu_hours_per_year), _("GPU-hours a year"), zero, Decimal(10**11)
        ),
        "growth_percent": bounded(
            _blank_zero(data.growth_percent), _("Growth a year"), Decimal(-50), Decimal(200)
        ),
        "fte_cost": _optional(data.fte_cost, _("The cost of one FTE"), zero, Decimal(10**8)),
        "day_rates": _day_rates(data.day_rates),
        "exchange_rates": _exchange_rates(data.exchange_rates, currency),
        **_capacity_fields(data),
    }


def _capacity_fields(data: ModelData) -> dict[str, object]:
    """How capacity is paid for, with the price that mode needs, and the baseline."""
    mode = data.capacity or ""
    if mode not in Capacity.values:
        raise ValidationError(
            _("%(value)s is not a way to pay for capacity (owned or cloud).") % {"value": mode}
        )
    zero = Decimal(0)
    price = _optional(data.gpu_price, _("The price of one GPU"), zero, MAX_AMOUNT)
    years = (
        None
        if data.depreciation_years in (None, "")
        else _whole(data.depreciation_years, _("The depreciation"), 1, 15)
    )
    hour = _optional(data.gpu_hour_price, _("The price of one GPU-hour"), zero, Decimal(100000))
    if mode == Capacity.OWNED and (not price or years is None):
        raise ValidationError(
            _("Owned capacity needs the price of one GPU and the years it is depreciated over.")
        )
    if mode == Capacity.CLOUD and hour is None:
        raise ValidationError(_("Cloud capacity needs the price of one GPU-hour."))
    label = (data.baseline_label or "").strip()
    if len(label) > 200:
        raise ValidationError(_("Name the baseline in up to 200 characters."))
    return {
        "capacity": mode,
        "gpu_price": price,
        "depreciation_years": years,
        "gpu_hour_price": hour,
        "baseline_label": label,
        "baseline_utilisation_percent": _optional(
            data.baseline_utilisation_percent, _("The utilisation today"), Decimal(1), HUNDRED
        ),
    }


def _logged(value: object) -> object:
    return str(value) if isinstance(value, Decimal) else value


@transaction.atomic
def cost_model_save(*, project: Project, data: ModelData, actor: User | None) -> CostModel:
    """Set the project's cost model (made on its first save)."""
    fields = _model_fields(data)
    scope_edit_guard(project)
    found = CostModel.objects.select_for_update().filter(project=project).first()
    model = found or CostModel(project=project)
    before = {name: _logged(getattr(model, name)) for name in fields} if found else {}
    for name, value in fields.items():
        setattr(model, name, value)
    model.updated_by = stored_user(actor)
    model.save()
    after = {name: _logged(getattr(model, name)) for name in fields}
    changed = [name for name in after if before.get(name) != after[name]]
    if changed:
        event_record(
            project=project,
            actor=actor,
            verb="costs.model_changed",
            before={name: before.get(name) for name in changed},
            after={name: after[name] for name in changed},
        )
    return model


@dataclass(frozen=True)
class LineData:
    category: str
    kind: str
    label: str
    low: object
    expected: object
    high: object
    currency: str = ""
    unit: str = ""
    team: str = ""
    discount_percent: object = 0
    first_year: object = 1
    last_year: object = None
    charge_category: str = ChargeCategory.PURCHASE
    basis: str = Basis.TBC
    reference: str = ""
    source: str = ""
    valid_until: date | None = None


def _line_kind(data: LineData) -> dict[str, object]:
    for value, choices, message in (
        (data.category, CostCategory, _("%(value)s is not a cost category.")),
        (data.kind, LineKind, _("%(value)s is not a kind of cost line.")),
        (data.charge_category, ChargeCategory, _("%(value)s is not a charge category.")),
    ):
        if value not in choices.values:
            raise ValidationError(message % {"value": value})
    label = data.label.strip()
    if not label or len(label) > 200:
        raise ValidationError(_("Say what the line is (up to 200 characters)."))
    if data.kind == LineKind.PER_UNIT and data.unit not in PricingUnit.values:
        raise ValidationError(_("A line per pricing unit needs its unit."))
    if data.kind == LineKind.DAYS and data.team not in TEAMS:
        raise ValidationError(_("Person-days need the team that spends them."))
    return {
        "category": data.category,
        "kind": data.kind,
        "label": label,
        "charge_category": data.charge_category,
        "unit": data.unit if data.kind == LineKind.PER_UNIT else "",
        "team": data.team if data.kind == LineKind.DAYS else "",
    }


def _line_figures(data: LineData) -> dict[str, object]:
    money = data.kind in MONEY_KINDS
    top = MAX_AMOUNT if money else Decimal(1000) if data.kind == LineKind.FTE else Decimal(100000)
    figures = ((data.low, _("Low")), (data.expected, _("Expected")), (data.high, _("High")))
    low, expected, high = (bounded(value, name, Decimal(0), top) for value, name in figures)
    if not low <= expected <= high:
        raise ValidationError(_("The figures must run low ≤ expected ≤ high."))
    first = _whole(data.first_year, _("From year"), 1, MAX_YEARS)
    last = (
        None
        if data.last_year in (None, "")
        else _whole(data.last_year, _("To year"), first, MAX_YEARS)
    )
    discount = (
        bounded(data.discount_percent or 0, _("Discount"), Decimal(0), Decimal(100))
        if money
        else Decimal(0)
    )
    return {
        "currency": _currency(data.currency, _("Currency")) if money else "",
        "low": low,
        "expected": expected,
        "high": high,
        "discount_percent": discount,
        "first_year": first,
        "last_year": last,
    }


def line_fields(data: LineData) -> dict[str, object]:
    """Every stored field of a cost line, checked; ValidationError names the first problem."""
    fields = {**_line_kind(data), **_line_figures(data)}
    return fields | basis_fields(
        _("The line %(label)s") % {"label": fields["label"]},
        fields["expected"],
        TermChange("", None, data.basis, data.reference, data.source, data.valid_until),
        timezone.localdate(),
    )


def _owner(line: CostLine) -> Part:
    return candidate_part(line.candidate) if line.candidate else phrase_part("costs.baseline")


def _logged_line(line: CostLine) -> dict[str, str]:
    return {
        "category": line.category,
        "kind": line.kind,
        "expected": str(line.expected),
        "basis": line.basis,
    }


@transaction.atomic
def cost_line_add(
    *,
    candidate: Candidate | None,
    data: LineData,
    actor: User | None,
    project: Project | None = None,
    replaces: CostLine | None = None,
) -> CostLine:
    """Add a cost line to a candidate, or to the baseline of `project` (no candidate); refused,
    naming what is wrong, before anything is written. `replaces`: a line of the same owner
    this one takes the place of (a figure confirmed): it is removed, and its chase closes with
    the new line's basis and reference."""
    if candidate is not None:
        project = candidate.project
    assert project is not None, "a baseline line needs its project"
    fields = line_fields(data)
    scope_edit_guard(project.pk)
    line = CostLine.objects.create(
        project=project,
        candidate=candidate,
        created_by=stored_user(actor),
        **fields,  # type: ignore[arg-type]
    )
    event_record(
        project=project,
        actor=actor,
        verb="costs.line_added",
        parts=[_owner(line), text_part(line.label)],
        after=_logged_line(line),
    )
    if replaces is not None:
        if replaces.candidate_id != line.candidate_id or replaces.project_id != line.project_id:
            raise ValidationError(_("A line can only replace a line of the same candidate."))
        if line.unconfirmed(timezone.localdate()):
            raise ValidationError(
                _("A replacement confirms the figure: give it a basis other than to be confirmed.")
            )
        basis = f"{line.get_basis_display()}: {line.reference or line.source}".rstrip(": ")
        cost_line_remove(line=replaces, actor=actor, closing_reference=basis)
    return line


@transaction.atomic
def cost_line_remove(*, line: CostLine, actor: User | None, closing_reference: str = "") -> None:
    """Remove a line; a chase of it (still to be confirmed) closes, with `closing_reference`
    (what replaced it) or the removal as the reason."""
    scope_edit_guard(line.project_id)
    if line.candidate is not None:
        close_chase(
            line.candidate,
            f"line:{line.pk}",
            closing_reference or _("line removed"),
            stored_user(actor),
            timezone.now(),
        )
    event_record(
        project=line.project,
        actor=actor,
        verb="costs.line_removed",
        parts=[_owner(line), text_part(line.label)],
        before=_logged_line(line),
    )
    line.delete()
