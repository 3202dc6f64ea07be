"""The cost model's arithmetic, apart from the database (it reads no row): what each cost line
comes to in each year of the horizon, in the project's currency, as low / expected / high
figures, and the totals a decision reads (per year, over the horizon, net present value, per
GPU-year), with what is missing said instead of counted as zero. docs/costs.md explains every
formula with a worked example that tests/procurement/test_costs.py recomputes.

`Decimal` throughout; nothing here rounds (pages round for display). Sums run in `EXACT`, a
context wide enough that adding figures never rounds them, so a total is the sum of its lines
and of its years whatever the order (the default context keeps 28 digits, fewer than a grown
fleet's figures can have).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Context, Decimal
from functools import cached_property, lru_cache

from django.utils.translation import gettext as _

ZERO = Decimal(0)
ONE = Decimal(1)
HUNDRED = Decimal(100)
HOURS_PER_YEAR = Decimal(8760)
EXACT = Context(prec=120)


@dataclass(frozen=True)
class Fleet:
    """What the pricing units count, in year 1; every count grows by `growth_percent` a year
    (compounded), demand in GPU-hours too."""

    gpus: Decimal = ZERO
    nodes: Decimal = ZERO
    cores_per_node: Decimal = ZERO
    sockets_per_node: Decimal = ZERO
    named_users: Decimal = ZERO
    gpu_hours: Decimal = ZERO  # demand per year
    growth_percent: Decimal = ZERO

    def factor(self, year: int) -> Decimal:
        return (ONE + self.growth_percent / HUNDRED) ** (year - 1)

    def count(self, unit: str, year: int) -> Decimal:
        """How many of `unit` the fleet holds in `year` (1-based)."""
        if unit == "flat_per_year":
            return ONE  # a flat fee does not grow with the fleet
        grown = self.factor(year)
        counts = {
            "per_gpu": self.gpus,
            "per_node": self.nodes,
            "per_core_pair": self.nodes * self.cores_per_node / 2,
            "per_socket_pair": self.nodes * self.sockets_per_node / 2,
            "per_named_user": self.named_users,
            "per_gpu_hour": self.gpu_hours,
            "per_node_hour": self.gpu_hours * self.nodes / self.gpus if self.gpus else ZERO,
        }
        return counts[unit] * grown


@dataclass(frozen=True)
class Range:
    low: Decimal
    expected: Decimal
    high: Decimal

    def __add__(self, other: "Range") -> "Range":
        add = EXACT.add
        return Range(
            add(self.low, other.low), add(self.expected, other.expected), add(self.high, other.high)
        )

    def scaled(self, factor: Decimal) -> "Range":
        return Range(self.low * factor, self.expected * factor, self.high * factor)


NOTHING = Range(ZERO, ZERO, ZERO)


@dataclass(frozen=True)
class Line:
    """One cost line of a candidate. `kind` says how it runs over the years:

    * `per_unit`: amount per `unit` and year (a subscription), times the fleet's count;
    * `per_year`: a flat amount each year;
    * `one_off`: the amount once, in `year`;
    * `fte`: people (the amount is FTE) times the loaded cost of one FTE a year;
    * `days`: person-days (the amount) times the team's loaded day rate, once, in `year`.

    Amounts are in `currency`; `discount_percent` takes the list figure to the contracted one.
    Recurring lines run from `year` to `until` (inclusive; None: to the horizon's end)."""

    category: str
    kind: str
    amount: Range
    currency: str = ""
    unit: str = ""
    team: str = ""
    discount_percent: Decimal = ZERO
    year: int = 1
    until: int | None = None
    label: str = ""
    team_label: str = ""  # how the team is named in a reason
    unconfirmed: bool = False  # its basis is "to be confirmed", or its quote has expired


@dataclass(frozen=True)
class Model:
    currency: str
    horizon: int
    fleet: Fleet
    rates: dict[str, Decimal] = field(default_factory=dict)  # currency -> project currency
    day_rates: dict[str, Decimal] = field(default_factory=dict)  # team -> per day
    fte_cost: Decimal | None = None
    discount_rate_percent: Decimal | None = None

    def rate(self, currency: str) -> Decimal | None:
        if not currency or currency == self.currency:
            return ONE
        return self.rates.get(currency)


@dataclass
class Costs:
    """A candidate's costs: per category and year (index 0 is year 1), list and contracted;
    each line's contracted total over the horizon, in the order given."""

    years: int
    by_category: dict[str, list[Range]] = field(default_factory=dict)
    list_total: Range = NOTHING
    missing: list[str] = field(default_factory=list)
    lines: list[tuple[Line, Range]] = field(default_factory=list)

    @cached_property
    def unconfirmed(self) -> tuple[int, Decimal]:
        """How many lines still wait for a basis, and what they add to the expected total."""
        waiting = [total.expected for line, total in self.lines if line.unconfirmed]
        return len(waiting), exact_sum(waiting)

    @cached_property
    def scaling(self) -> Range:
        """The part of the total that moves in proportion to the fleet (lines per unit, but a
        flat fee): break-even sizes read it."""
        return sum((total for line, total in self.lines if scales(line)), NOTHING)

    def year_total(self, year: int) -> Range:
        return sum((rows[year - 1] for rows in self.by_category.values()), NOTHING)

    @cached_property
    def per_year(self) -> list[Range]:
        """Read once the costs are complete (candidate_costs fills them before returning)."""
        return [self.year_total(year) for year in range(1, self.years + 1)]

    @cached_property
    def total(self) -> Range:
        return sum(self.per_year, NOTHING)

    @property
    def complete(self) -> bool:
        return not self.missing

    def cumulative(self) -> list[Range]:
        out, running = [], NOTHING
        for year in self.per_year:
            running = running + year
            out.append(running)
        return out


def _years_of(line: Line, horizon: int) -> range:
    if line.kind in ("one_off", "days"):
        return range(line.year, line.year + 1) if 1 <= line.year <= horizon else range(0)
    last = min(line.until or horizon, horizon)
    return range(max(line.year, 1), last + 1)


@lru_cache(maxsize=4096)
def _count(fleet: Fleet, unit: str, year: int) -> Decimal:
    return fleet.count(unit, year)


def _factors(line: Line, model: Model, year: int) -> tuple[Decimal, Decimal] | str | None:
    """What one unit of `line`'s amount costs in `year`, (list, contracted), in the project's
    currency; None outside the line's years; or why it cannot be said."""
    if year not in _years_of(line, model.horizon):
        return None
    if line.kind == "days":
        rate = model.day_rates.get(line.team)
        if rate is None:
            return _("no day rate for %(team)s") % {"team": line.team_label or line.team or "—"}
        return rate, rate
    if line.kind == "fte":
        if model.fte_cost is None:
            return _("no loaded cost of one FTE a year")
        return model.fte_cost, model.fte_cost
    rate = model.rate(line.currency)
    if rate is None:
        return _("no exchange rate for %(currency)s") % {"currency": line.currency}
    listed = _count(model.fleet, line.unit, year) * rate if line.kind == "per_unit" else rate
    if not line.discount_percent:
        return listed, listed
    return listed, listed * (ONE - line.discount_percent / HUNDRED)


def line_cost(line: Line, model: Model, year: int) -> tuple[Range, Range] | str:
    """What `line` costs in `year`, (list, contracted) in the project's currency; or why it
    cannot be said (a missing exchange rate, day rate or FTE cost)."""
    found = _factors(line, model, year)
    if found is None:
        return NOTHING, NOTHING
    if isinstance(found, str):
        return found
    listed, contracted = found
    return line.amount.scaled(listed), line.amount.scaled(contracted)


def candidate_costs(lines: Iterable[Line], model: Model) -> Costs:
    """Every line over the horizon, summed per category; what is missing, once each. Sums run
    on plain Decimals (lows, expected, highs apart): this is the model's inner loop."""
    horizon = model.horizon
    costs = Costs(years=horizon)
    add = EXACT.add
    listed = [ZERO, ZERO, ZERO]
    sums: dict[str, tuple[list[Decimal], list[Decimal], list[Decimal]]] = {}
    for line in lines:
        row = sums.setdefault(line.category, ([ZERO] * horizon, [ZERO] * horizon, [ZERO] * horizon))
        amounts = (line.amount.low, line.amount.expected, line.amount.high)
        own = [ZERO, ZERO, ZERO]
        for year in range(1, horizon + 1):
            found = _factors(line, model, year)
            if found is None:
                continue
            if isinstance(found, str):
                if found not in costs.missing:
                    costs.missing.append(found)
                continue
            list_factor, factor = found
            for i, amount in enumerate(amounts):
                paid = amount * factor
                row[i][year - 1] = add(row[i][year - 1], paid)
                own[i] = add(own[i], paid)
                listed[i] = add(listed[i], amount * list_factor)
        costs.lines.append((line, Range(*own)))
    costs.by_category = {
        category: [Range(lo, ex, hi) for lo, ex, hi in zip(*row, strict=True)]
        for category, row in sums.items()
    }
    costs.list_total = Range(*listed)
    return costs


def scales(line: Line) -> bool:
    """Whether the line's cost moves in proportion to the fleet."""
    return line.kind == "per_unit" and line.unit != "flat_per_year"


@dataclass(frozen=True)
class CapacityPrice:
    """What capacity costs: owned GPUs at `gpu_price` depreciated straight over
    `depreciation_years`, or cloud GPU-hours at `gpu_hour_price` (project currency)."""

    mode: str
    gpu_price: Decimal | None = None
    depreciation_years: int | None = None
    gpu_hour_price: Decimal | None = None


def capacity_line(
    price: CapacityPrice,
    utilisation_percent: Decimal | None,
    who: str,
    spread: tuple[Decimal | None, Decimal | None] = (None, None),
) -> Line | str:
    """The GPUs that the demand needs at a candidate's utilisation, as a cost per GPU-hour
    demanded (docs/costs.md): cloud, the hour's price / u; owned, the GPU's price / (years x
    8,760 x u). `spread` is the utilisation's (low, high): the low one gives the high cost and
    the reverse; missing, or on the wrong side of the expected one, it is the expected one.
    Or why it cannot be said."""
    if not utilisation_percent or utilisation_percent <= 0:
        return _("no utilisation for %(who)s") % {"who": who}
    if price.mode == "owned" and (not price.gpu_price or not price.depreciation_years):
        return _("no GPU price or depreciation for owned capacity")
    if price.mode != "owned" and price.gpu_hour_price is None:
        return _("no GPU-hour price for cloud capacity")

    def per_hour(percent: Decimal) -> Decimal:
        share = percent / HUNDRED
        if price.mode == "owned":
            assert price.gpu_price and price.depreciation_years
            return price.gpu_price / (price.depreciation_years * HOURS_PER_YEAR * share)
        assert price.gpu_hour_price is not None
        return price.gpu_hour_price / share

    low_u, high_u = spread
    low_u = low_u if low_u and low_u <= utilisation_percent else utilisation_percent
    high_u = high_u if high_u and high_u >= utilisation_percent else utilisation_percent
    return Line(
        "capacity",
        "per_unit",
        Range(per_hour(high_u), per_hour(utilisation_percent), per_hour(low_u)),
        unit="per_gpu_hour",
        label=_("GPUs for the demand at %(u)s %% utilisation")
        % {"u": f"{utilisation_percent.normalize():f}"},
    )


def gpus_needed(fleet: Fleet, utilisation_percent: Decimal, year: int) -> Decimal:
    """GPUs busy all year that the demand of `year` needs at the utilisation."""
    return fleet.count("per_gpu_hour", year) / (HOURS_PER_YEAR * utilisation_percent / HUNDRED)


def gpu_hours_demanded(fleet: Fleet, horizon: int) -> Decimal:
    return sum((fleet.count("per_gpu_hour", year) for year in range(1, horizon + 1)), ZERO)


def per_used_gpu_hour(costs: Costs, fleet: Fleet) -> Range | None:
    """The total over the GPU-hours the demand uses over the horizon."""
    used = gpu_hours_demanded(fleet, costs.years)
    return costs.total.scaled(ONE / used) if used else None


def present_value(per_year: Sequence[Decimal], rate_percent: Decimal | None) -> Decimal:
    """Costs of year n discounted by (1 + r)^(n - 1): year 1 is paid at today's value. No rate:
    the plain sum."""
    if not rate_percent:
        return exact_sum(per_year)
    base = ONE + rate_percent / HUNDRED
    return exact_sum(amount / base**n for n, amount in enumerate(per_year))


def exact_sum(figures: Iterable[Decimal]) -> Decimal:
    """The sum of `figures`, rounded nowhere (see EXACT)."""
    total = ZERO
    for figure in figures:
        total = EXACT.add(total, figure)
    return total


def npv(costs: Costs, rate_percent: Decimal | None) -> Range:
    years = costs.per_year
    return Range(
        present_value([y.low for y in years], rate_percent),
        present_value([y.expected for y in years], rate_percent),
        present_value([y.high for y in years], rate_percent),
    )


def gpu_years(fleet: Fleet, horizon: int) -> Decimal:
    """GPUs in service summed over the horizon's years."""
    return exact_sum(fleet.count("per_gpu", year) for year in range(1, horizon + 1))


def per_gpu_year(costs: Costs, fleet: Fleet) -> Range | None:
    total_gpu_years = gpu_years(fleet, costs.years)
    if not total_gpu_years:
        return None
    return costs.total.scaled(ONE / total_gpu_years)
