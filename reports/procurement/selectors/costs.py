"""Reads of the cost model: each candidate's lines (with the PoC's integration effort as
implementation days) run through reports/procurement/costs.py, in a fixed number of queries."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project, TeamRole
from poc.models import Outcome, ResultCell
from reports.procurement import analysis
from reports.procurement import costs as arithmetic
from reports.procurement.models import CostCategory, CostLine, CostModel, LineKind, TermEntry

UTILISATION = "utilisation_percent"


def _team_label(team: str) -> str:
    return str(TeamRole(team).label) if team in TeamRole.values else team or "—"


def model_of(row: CostModel) -> arithmetic.Model:
    return arithmetic.Model(
        currency=row.currency,
        horizon=row.horizon_years,
        fleet=arithmetic.Fleet(
            gpus=row.gpus,
            nodes=row.nodes,
            cores_per_node=row.cores_per_node,
            sockets_per_node=row.sockets_per_node,
            named_users=row.named_users,
            gpu_hours=row.gpu_hours_per_year,
            growth_percent=row.growth_percent,
        ),
        rates={code: Decimal(given["rate"]) for code, given in row.exchange_rates.items()},
        day_rates={team: Decimal(rate) for team, rate in row.day_rates.items()},
        fte_cost=row.fte_cost,
        discount_rate_percent=row.discount_rate_percent,
    )


def line_of(row: CostLine, today: date | None = None) -> arithmetic.Line:
    return arithmetic.Line(
        category=row.category,
        kind=row.kind,
        amount=arithmetic.Range(row.low, row.expected, row.high),
        currency=row.currency,
        unit=row.unit,
        team=row.team,
        team_label=row.team_label if row.team else "",
        discount_percent=row.discount_percent,
        year=row.first_year,
        until=row.last_year,
        label=row.label,
        unconfirmed=row.unconfirmed(today or timezone.localdate()),
    )


def integration_days(candidates: Sequence[Candidate]) -> dict[int, dict[str, Decimal]]:
    """The PoC's needs-integration effort, per candidate and owning team (one query)."""
    found: dict[int, dict[str, Decimal]] = defaultdict(dict)
    rows = (
        ResultCell.objects.filter(candidate__in=list(candidates), outcome=Outcome.NEEDS_INTEGRATION)
        .values_list("candidate_id", "result__integration_owner_team")
        .annotate(days=Sum("integration_effort_days"))
        .order_by()
    )
    for candidate_id, team, days in rows:
        if days:
            found[candidate_id][team or ""] = days
    return found


def capacity_of(row: CostModel) -> arithmetic.CapacityPrice | None:
    if not row.capacity:
        return None
    return arithmetic.CapacityPrice(
        row.capacity, row.gpu_price, row.depreciation_years, row.gpu_hour_price
    )


UTILISATION_SPREAD = ("utilisation_low_percent", "utilisation_high_percent")


def utilisations(candidates: Sequence[Candidate]) -> dict[int, dict[str, TermEntry]]:
    """Each candidate's current utilisation terms (expected, low, high) where recorded (one
    query)."""
    found: dict[int, dict[str, TermEntry]] = defaultdict(dict)
    for entry in TermEntry.objects.filter(
        candidate__in=list(candidates),
        key__in=[UTILISATION, *UTILISATION_SPREAD],
        current=True,
        value__isnull=False,
    ):
        found[entry.candidate_id][entry.key] = entry
    return found


def _percent(entries: dict[str, TermEntry], key: str) -> Decimal | None:
    entry = entries.get(key)
    return Decimal(str(entry.value)) if entry is not None else None


@dataclass
class CandidateCost:
    candidate: Candidate | None  # None: the baseline
    lines: list[CostLine]
    effort: dict[str, Decimal]
    costs: arithmetic.Costs
    npv: arithmetic.Range
    per_gpu_year: arithmetic.Range | None
    per_used_gpu_hour: arithmetic.Range | None = None
    utilisation: Decimal | None = None
    utilisation_basis: str = ""
    gpus_needed: list[Decimal] | None = None  # year 1 and the last year
    versus_baseline: arithmetic.Range | None = None
    break_even: analysis.BreakEven | None = None  # against the cheapest candidate
    swings: list[analysis.Swing] | None = None

    @property
    def name(self) -> str:
        return self.candidate.solution.name if self.candidate else ""

    @property
    def slug(self) -> str:
        return self.candidate.slug if self.candidate else "baseline"

    @property
    def effort_rows(self) -> list[tuple[str, Decimal]]:
        """The PoC's integration effort, (team as read, person-days)."""
        return [(_team_label(team), days) for team, days in sorted(self.effort.items())]

    @property
    def category_rows(self) -> list[tuple[str, list[arithmetic.Range]]]:
        """(label, figures per year) for each category that has a line, in the list's order."""
        return [(label, per_year) for _key, label, per_year in self.category_keyed_rows]

    @property
    def category_keyed_rows(self) -> list[tuple[str, str, list[arithmetic.Range]]]:
        found = self.costs.by_category
        return [
            (value, str(label), found[value])
            for value, label in CostCategory.choices
            if value in found
        ]


@dataclass
class CostOverview:
    model: CostModel | None
    candidates: list[CandidateCost]
    baseline: CandidateCost | None = None
    leader: CandidateCost | None = None  # the cheapest at expected figures

    @property
    def years(self) -> list[int]:
        return list(range(1, self.model.horizon_years + 1)) if self.model else []


def _costed(
    model: arithmetic.Model,
    row: CostModel,
    lines: list[CostLine],
    derived: list[arithmetic.Line],
    utilisation: Decimal | None,
    who: str,
    spread: tuple[Decimal | None, Decimal | None] = (None, None),
) -> tuple[arithmetic.Costs, list[Decimal] | None]:
    """A candidate's (or the baseline's) costs with the capacity its utilisation needs."""
    price = capacity_of(row)
    needed = None
    missing = []
    if price is not None:
        found = arithmetic.capacity_line(price, utilisation, who, spread)
        if isinstance(found, str):
            missing.append(found)
        elif not model.fleet.gpu_hours:
            missing.append(_no_demand())
        else:
            derived = [*derived, found]
            assert utilisation is not None
            needed = [
                arithmetic.gpus_needed(model.fleet, utilisation, year)
                for year in (1, model.horizon)
            ]
    today = timezone.localdate()
    computed = arithmetic.candidate_costs(
        [*(line_of(row, today) for row in lines), *derived], model
    )
    computed.missing.extend(m for m in missing if m not in computed.missing)
    return computed, needed


def _no_demand() -> str:
    return _("no GPU-hours demanded, so no capacity")


def _effort_lines(effort: dict[str, Decimal]) -> list[arithmetic.Line]:
    return [
        arithmetic.Line(
            CostCategory.IMPLEMENTATION,
            LineKind.DAYS,
            arithmetic.Range(days, days, days),
            team=team,
            team_label=_team_label(team),
            label="PoC integration effort",
        )
        for team, days in sorted(effort.items())
    ]


def _figures(
    candidate: Candidate | None,
    lines: list[CostLine],
    effort: dict[str, Decimal],
    costed: tuple[arithmetic.Costs, list[Decimal] | None],
    model: arithmetic.Model,
) -> CandidateCost:
    computed, needed = costed
    return CandidateCost(
        candidate,
        lines,
        effort,
        computed,
        arithmetic.npv(computed, model.discount_rate_percent),
        arithmetic.per_gpu_year(computed, model.fleet),
        arithmetic.per_used_gpu_hour(computed, model.fleet),
        gpus_needed=needed,
    )


def _baseline(row: CostModel, model: arithmetic.Model, lines: list[CostLine]) -> CandidateCost:
    label = row.baseline_label or "—"
    costed = _costed(model, row, lines, [], row.baseline_utilisation_percent, label)
    found = _figures(None, lines, {}, costed, model)
    found.utilisation = row.baseline_utilisation_percent
    return found


def _compare(overview: CostOverview, fleet_gpus: Decimal) -> None:
    """The leader, each candidate against the baseline and the leader, and its tornado."""
    shown = overview.candidates
    if not shown:
        return
    totals = [c.costs.total.expected for c in shown]
    leader = shown[totals.index(min(totals))]
    overview.leader = leader
    for index, c in enumerate(shown):
        if overview.baseline is not None:
            c.versus_baseline = analysis.versus(c.costs.total, overview.baseline.costs.total)
        if c is not leader:
            c.break_even = analysis.break_even(c.costs, leader.costs, fleet_gpus)
        c.swings = analysis.tornado(totals, index, c.costs)


def cost_overview(project: Project, candidates: Sequence[Candidate]) -> CostOverview:
    row = CostModel.objects.filter(project=project).first()
    if row is None:
        return CostOverview(None, [])
    model = model_of(row)
    lines: dict[int | None, list[CostLine]] = defaultdict(list)
    chosen = list(candidates)
    for line in CostLine.objects.filter(
        Q(candidate__in=chosen) | Q(project=project, candidate__isnull=True)
    ).order_by("category", "pk"):
        setattr(line, "expired_quote", line.quote_expired(timezone.localdate()))  # noqa: B010
        lines[line.candidate_id].append(line)
    effort = integration_days(chosen)
    measured = utilisations(chosen) if row.capacity else {}
    out = []
    for candidate in chosen:
        entries = measured.get(candidate.pk, {})
        entry = entries.get(UTILISATION)
        utilisation = _percent(entries, UTILISATION)
        costed = _costed(
            model,
            row,
            lines[candidate.pk],
            _effort_lines(effort[candidate.pk]),
            utilisation,
            candidate.solution.name,
            (_percent(entries, UTILISATION_SPREAD[0]), _percent(entries, UTILISATION_SPREAD[1])),
        )
        found = _figures(candidate, lines[candidate.pk], effort[candidate.pk], costed, model)
        found.utilisation = utilisation
        found.utilisation_basis = entry.get_basis_display() if entry else ""
        out.append(found)
    baseline = _baseline(row, model, lines[None]) if row.baseline_label or lines[None] else None
    overview = CostOverview(row, out, baseline)
    _compare(overview, row.gpus)
    return overview
