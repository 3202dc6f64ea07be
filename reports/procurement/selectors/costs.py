"""Reads of the cost model: each candidate's lines (with the PoC's integration effort as
implementation days) run through reports/procurement/costs.py, in a fixed number of queries."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum

from evaluations.models import Candidate, Project, TeamRole
from poc.models import Outcome, ResultCell
from reports.procurement import costs as arithmetic
from reports.procurement.models import CostCategory, CostLine, CostModel, LineKind


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


def line_of(row: CostLine) -> arithmetic.Line:
    return arithmetic.Line(
        category=row.category,
        kind=row.kind,
        amount=arithmetic.Range(row.low, row.expected, row.high),
        currency=row.currency,
        unit=row.unit,
        team=row.team,
        team_label=row.team_label,
        discount_percent=row.discount_percent,
        year=row.first_year,
        until=row.last_year,
        label=row.label,
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


@dataclass
class CandidateCost:
    candidate: Candidate
    lines: list[CostLine]
    effort: dict[str, Decimal]
    costs: arithmetic.Costs
    npv: arithmetic.Range
    per_gpu_year: arithmetic.Range | None

    @property
    def effort_rows(self) -> list[tuple[str, Decimal]]:
        """The PoC's integration effort, (team as read, person-days)."""
        return [(_team_label(team), days) for team, days in sorted(self.effort.items())]

    @property
    def category_rows(self) -> list[tuple[str, list[arithmetic.Range]]]:
        """(label, figures per year) for each category that has a line, in the list's order."""
        found = self.costs.by_category
        return [
            (str(label), found[value]) for value, label in CostCategory.choices if value in found
        ]


@dataclass
class CostOverview:
    model: CostModel | None
    candidates: list[CandidateCost]

    @property
    def years(self) -> list[int]:
        return list(range(1, self.model.horizon_years + 1)) if self.model else []


def cost_overview(project: Project, candidates: Sequence[Candidate]) -> CostOverview:
    row = CostModel.objects.filter(project=project).first()
    if row is None:
        return CostOverview(None, [])
    model = model_of(row)
    lines: dict[int, list[CostLine]] = defaultdict(list)
    for line in CostLine.objects.filter(candidate__in=list(candidates)).order_by("category", "pk"):
        lines[line.candidate_id].append(line)
    effort = integration_days(candidates)
    out = []
    for candidate in candidates:
        derived = [
            arithmetic.Line(
                CostCategory.IMPLEMENTATION,
                LineKind.DAYS,
                arithmetic.Range(days, days, days),
                team=team,
                team_label=_team_label(team),
                label="PoC integration effort",
            )
            for team, days in sorted(effort[candidate.pk].items())
        ]
        computed = arithmetic.candidate_costs([*map(line_of, lines[candidate.pk]), *derived], model)
        out.append(
            CandidateCost(
                candidate,
                lines[candidate.pk],
                effort[candidate.pk],
                computed,
                arithmetic.npv(computed, model.discount_rate_percent),
                arithmetic.per_gpu_year(computed, model.fleet),
            )
        )
    return CostOverview(row, out)
