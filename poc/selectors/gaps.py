"""Integration gaps across candidates: what each needs, effort per team."""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Case, Count, QuerySet, Sum, Value, When

from evaluations.models import (
    OWNER_TEAMS,
    AcceptanceAction,
    Candidate,
    Project,
    Tier,
)
from poc.models import Outcome, ResultCell
from poc.selectors.comparison import comparison_for_project


@dataclass(frozen=True)
class IntegrationGap:
    candidate: Candidate
    action: AcceptanceAction
    what: str
    owner_team: str
    owner_label: str
    effort_days: Decimal


@dataclass
class TeamEffort:
    team: str
    label: str
    days: Decimal
    gaps: int
    by_candidate: dict[int, Decimal]


@dataclass
class IntegrationGaps:
    """Every "needs integration" cell of the candidates in play, and what they add up to by
    owning team (per candidate and in all)."""

    candidates: list[Candidate]
    gaps: list[IntegrationGap]
    teams: list[TeamEffort]

    @property
    def total_days(self) -> Decimal:
        return sum((team.days for team in self.teams), Decimal(0))

    def candidate_totals(self) -> list[Decimal]:
        return [
            sum((t.by_candidate.get(c.pk, Decimal(0)) for t in self.teams), Decimal(0))
            for c in self.candidates
        ]


def integration_gaps_for_project(project: Project, *, include_all: bool = False) -> IntegrationGaps:
    summaries = comparison_for_project(project, include_all=include_all)
    labels = dict(OWNER_TEAMS)
    gaps: list[IntegrationGap] = []
    teams: dict[str, TeamEffort] = {}
    for summary in summaries:
        for cell in summary.needs_integration:
            result = cell.result
            team = result.integration_owner_team
            days = result.integration_effort_days or Decimal(0)
            label = str(labels.get(team, team))
            gaps.append(
                IntegrationGap(
                    summary.candidate, cell.action, result.integration_what, team, label, days
                )
            )
            effort = teams.setdefault(team, TeamEffort(team, label, Decimal(0), 0, {}))
            effort.days += days
            effort.gaps += 1
            effort.by_candidate[summary.candidate.pk] = (
                effort.by_candidate.get(summary.candidate.pk, Decimal(0)) + days
            )
    order = [value for value, _label in OWNER_TEAMS]
    return IntegrationGaps(
        candidates=[s.candidate for s in summaries],
        gaps=sorted(
            gaps,
            key=lambda g: (
                order.index(g.owner_team) if g.owner_team in order else 99,
                -g.effort_days,
            ),
        ),
        teams=sorted(teams.values(), key=lambda t: -t.days),
    )


def integration_gap_rows(project: Project) -> QuerySet[ResultCell]:
    """Every cell of the project whose latest result reads "needs integration", with its
    candidate, action and that result: the rows of the integration gaps table."""
    return ResultCell.objects.filter(
        project=project, outcome=Outcome.NEEDS_INTEGRATION
    ).select_related("candidate__solution", "action", "result")


def gaps_of_candidates_in_play(rows: QuerySet[ResultCell]) -> QuerySet[ResultCell]:
    """The gaps in `rows` of the candidates a review compares (first tier, alternatives)."""
    return rows.filter(candidate__tier__in=[Tier.FIRST, Tier.ALTERNATIVE])


def integration_gap_totals(
    rows: QuerySet[ResultCell], candidates: list[Candidate]
) -> IntegrationGaps:
    """What the gaps in `rows` add up to by owning team, per candidate and in all, summed in
    the database from the cells' copy of their latest effort (one query whatever the number
    of gaps); `gaps` is left empty."""
    labels = dict(OWNER_TEAMS)
    teams: dict[str, TeamEffort] = {}
    sums = (
        rows.order_by()
        .values_list("result__integration_owner_team", "candidate_id")
        .annotate(days=Sum("integration_effort_days"), n=Count("pk"))
    )
    for team, candidate_id, days, n in sums:
        effort = teams.setdefault(
            team, TeamEffort(team, str(labels.get(team, team)), Decimal(0), 0, {})
        )
        effort.days += days or Decimal(0)
        effort.gaps += n
        effort.by_candidate[candidate_id] = days or Decimal(0)
    return IntegrationGaps(
        candidates=candidates, gaps=[], teams=sorted(teams.values(), key=lambda t: -t.days)
    )


def owner_team_rank() -> Case:
    """An owning team's place in the list of teams, to sort gaps by team as teams are listed."""
    return Case(
        *(
            When(result__integration_owner_team=value, then=Value(index))
            for index, (value, _label) in enumerate(OWNER_TEAMS)
        ),
        default=Value(len(OWNER_TEAMS)),
    )
