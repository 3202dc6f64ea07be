"""The cost model as files: every cost line of every candidate (and of the baseline) per year,
for people in the reader's language (CSV or XLSX), and the same rows with the column names of
the FinOps FOCUS specification (English, CSV) for FinOps tools.

Both are read from the live model (reports/procurement/selectors/costs.py), line by line and
year by year through the same arithmetic as the page, so the files and the page agree. Amounts
are in the project's currency, to the cent. FOCUS rows are projections, not bills: every row
says so in `x_Projection`, and its charge periods are the horizon's years from `start`
(docs/costs.md, exports).
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.utils.translation import gettext as _

from evaluations.models import Project
from evaluations.selectors import candidates_in_play
from reports.procurement import costs as arithmetic
from reports.procurement import selectors as procurement_selectors
from reports.procurement.models import ChargeCategory, CostCategory, CostLine, LineKind
from reports.procurement.selectors.costs import CandidateCost, model_of

TABLES = ("costs", "costs-focus")
CENT = Decimal("0.01")
# FOCUS's PricingUnit is free text; these are the units as a FinOps tool reads them.
FOCUS_UNITS = {
    "per_gpu": "GPU-year",
    "per_node": "Node-year",
    "per_core_pair": "Core-pair-year",
    "per_socket_pair": "Socket-pair-year",
    "per_named_user": "User-year",
    "flat_per_year": "Year",
    "per_gpu_hour": "GPU-hour",
    "per_node_hour": "Node-hour",
}
FOCUS_COLUMNS = [
    "BillingCurrency", "BilledCost", "EffectiveCost", "ListCost", "ContractedCost",
    "ChargeCategory", "ChargeFrequency", "ChargeDescription", "ChargePeriodStart",
    "ChargePeriodEnd", "BillingPeriodStart", "BillingPeriodEnd", "PricingQuantity",
    "PricingUnit", "ListUnitPrice", "ContractedUnitPrice", "ProviderName", "PublisherName",
    "ServiceName", "ServiceCategory", "x_Candidate", "x_CostCategory", "x_Basis",
    "x_LowCost", "x_HighCost", "x_Projection",
]  # fmt: skip


class BadStart(ValueError):
    """The start date of the horizon given for a FOCUS export is not a date."""


@dataclass(frozen=True)
class _Row:
    owner: CandidateCost
    line: arithmetic.Line
    stored: CostLine | None  # None: derived (the PoC's effort, capacity)
    year: int
    listed: arithmetic.Range
    contracted: arithmetic.Range
    unit_price: Decimal
    quantity: Decimal


def _cents(value: Decimal) -> Decimal:
    return value.quantize(CENT)


def _rows(project: Project) -> Iterator[_Row]:
    overview = procurement_selectors.cost_overview(
        project, candidates_in_play(project, include_all=True)
    )
    if overview.model is None:
        return
    model = model_of(overview.model)
    owners = [*overview.candidates, *([overview.baseline] if overview.baseline else [])]
    for owner in owners:
        for index, (line, _total) in enumerate(owner.costs.lines):
            stored = owner.lines[index] if index < len(owner.lines) else None
            for year in range(1, model.horizon + 1):
                found = arithmetic.line_cost(line, model, year)
                if isinstance(found, str) or found[1].high == 0:
                    continue  # outside its years, or what it misses is said on the page
                listed, contracted = found
                unit_price, quantity = _pricing(line, model, year)
                yield _Row(owner, line, stored, year, listed, contracted, unit_price, quantity)


def _pricing(line: arithmetic.Line, model: arithmetic.Model, year: int) -> tuple[Decimal, Decimal]:
    """(list price of one unit, units) of the expected figure."""
    if line.kind == LineKind.DAYS:
        return model.day_rates.get(line.team, Decimal(0)), line.amount.expected
    if line.kind == LineKind.FTE:
        return model.fte_cost or Decimal(0), line.amount.expected
    rate = model.rate(line.currency) or Decimal(0)
    count = model.fleet.count(line.unit, year) if line.kind == LineKind.PER_UNIT else Decimal(1)
    return line.amount.expected * rate, count


def _owner_name(owner: CandidateCost, baseline_label: str) -> str:
    if owner.candidate is None:
        return _("Baseline: %(label)s") % {"label": baseline_label or "—"}
    return f"{owner.candidate.solution.name} {owner.candidate.version}".strip()


def people_rows(project: Project) -> list[list[object]]:
    """One row per line and year, in the reader's language."""
    label = getattr(getattr(project, "cost_model", None), "baseline_label", "")
    header: list[object] = [
        _("Candidate"), _("What"), _("Category"), _("How it runs"), _("Pricing unit or team"),
        _("Year"), _("List cost"), _("Low"), _("Expected"), _("High"), _("Currency"),
        _("Basis"), _("Reference"), _("Charge category (FinOps FOCUS)"),
    ]  # fmt: skip
    out = [header]
    currency = project.cost_model.currency if hasattr(project, "cost_model") else ""
    for row in _rows(project):
        stored, line = row.stored, row.line
        out.append(
            [
                _owner_name(row.owner, label),
                stored.label if stored else _derived_label(line),
                str(CostCategory(line.category).label),
                str(LineKind(line.kind).label),
                (stored.unit_label or stored.team_label) if stored else line.team_label,
                row.year,
                _cents(row.listed.expected),
                _cents(row.contracted.low),
                _cents(row.contracted.expected),
                _cents(row.contracted.high),
                currency,
                stored.get_basis_display() if stored else _("from the PoC results"),
                stored.reference if stored else "",
                stored.get_charge_category_display()
                if stored
                else str(ChargeCategory.PURCHASE.label),
            ]
        )
    return out


def _quantity(value: Decimal) -> str:
    return f"{value.quantize(Decimal('0.0001')).normalize():f}"


def _derived_label(line: arithmetic.Line) -> str:
    return _("PoC integration effort") if line.kind == LineKind.DAYS else line.label


def _frequency(line: arithmetic.Line) -> str:
    if line.kind in (LineKind.ONE_OFF, LineKind.DAYS):
        return "One-Time"
    if line.kind == LineKind.PER_UNIT and line.unit in ("per_gpu_hour", "per_node_hour"):
        return "Usage-Based"
    return "Recurring"


def _service_category(line: arithmetic.Line) -> str:
    if line.category == CostCategory.CAPACITY:
        return "Compute"
    if line.category in (CostCategory.LICENCE, CostCategory.SUPPORT):
        return "Management and Governance"
    return "Other"


def _focus_unit(line: arithmetic.Line) -> str:
    if line.kind == LineKind.PER_UNIT:
        return FOCUS_UNITS.get(line.unit, line.unit)
    return {"fte": "FTE-year", "days": "Person-day"}.get(line.kind, "Year")


def start_of(given: str | None, today: date) -> date:
    """The first day of the horizon: as given (YYYY-MM-DD), or the next 1 January."""
    if not given:
        return date(today.year + 1, 1, 1)
    try:
        return date.fromisoformat(given)
    except ValueError:
        raise BadStart(given) from None


def _year_bounds(start: date, year: int) -> tuple[str, str]:
    def shifted(years: int) -> date:
        try:
            return start.replace(year=start.year + years)
        except ValueError:  # 29 February
            return start.replace(year=start.year + years, day=28)

    return f"{shifted(year - 1).isoformat()}T00:00:00Z", f"{shifted(year).isoformat()}T00:00:00Z"


def focus_rows(project: Project, start: date) -> list[list[object]]:
    """The same rows with FOCUS column names and values, in English."""
    out: list[list[object]] = [list(FOCUS_COLUMNS)]
    currency = project.cost_model.currency if hasattr(project, "cost_model") else ""
    for row in _rows(project):
        line, stored, owner = row.line, row.stored, row.owner
        begins, ends = _year_bounds(start, row.year)
        solution = owner.candidate.solution if owner.candidate else None
        provider = (solution.vendor or solution.name_en) if solution else "Baseline"
        discount = (Decimal(1) - line.discount_percent / 100) if line.discount_percent else 1
        out.append(
            [
                currency, _cents(row.contracted.expected), _cents(row.contracted.expected),
                _cents(row.listed.expected), _cents(row.contracted.expected),
                stored.charge_category if stored else "Purchase", _frequency(line),
                stored.label if stored else _derived_label(line), begins, ends, begins, ends,
                _quantity(row.quantity), _focus_unit(line), _cents(row.unit_price),
                _cents(row.unit_price * discount), provider, provider,
                solution.name_en if solution else "Baseline", _service_category(line),
                owner.slug, line.category, stored.basis if stored else "derived",
                _cents(row.contracted.low), _cents(row.contracted.high), "true",
            ]
        )  # fmt: skip
    return out
