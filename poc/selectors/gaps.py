"""Integration gaps across candidates: what each needs, effort per team."""

from dataclasses import dataclass
from decimal import Decimal

from evaluations.models import (
    OWNER_TEAMS,
    AcceptanceAction,
    Candidate,
    Project,
)
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
