"""Candidates compared: counts per outcome, cards, lists opened on demand, the
comparison the sheet reads."""

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property

from django.db.models import (
    F,
    Sum,
    Window,
)
from django.db.models.functions import RowNumber
from django.http import Http404

from evaluations.models import (
    OWNER_TEAMS,
    AcceptanceAction,
    Candidate,
    Project,
)
from poc.models import (
    Outcome,
    Responsibility,
    ResponsibilityArea,
    ResultCell,
)
from poc.selectors.matrix import LISTED_OUTCOMES, OUTCOME_ORDER, candidates_in_play, outcome_counts


def responsibility_gaps(responsibilities: dict[str, Responsibility]) -> list[tuple[str, str]]:
    """The responsibility areas nobody was assigned, as (value, label)."""
    return [
        (value, str(label))
        for value, label in ResponsibilityArea.choices
        if value not in responsibilities
    ]


def ordered_counts(counts: dict[str, int]) -> list[tuple[str, int]]:
    return [(o.value, counts[o.value]) for o in OUTCOME_ORDER]


@dataclass
class CandidateSummary:
    candidate: Candidate
    counts: dict[str, int]
    failed: list[ResultCell] = field(default_factory=list)
    needs_integration: list[ResultCell] = field(default_factory=list)
    not_covered: list[AcceptanceAction] = field(default_factory=list)
    responsibilities: dict[str, Responsibility] = field(default_factory=dict)

    @property
    def integration_effort(self) -> Decimal:
        return sum(
            (c.result.integration_effort_days or Decimal(0) for c in self.needs_integration),
            Decimal(0),
        )

    @property
    def responsibility_gaps(self) -> list[tuple[str, str]]:
        return responsibility_gaps(self.responsibilities)

    def ordered(self) -> list[tuple[str, int]]:
        return ordered_counts(self.counts)


def comparison_for_project(
    project: Project, *, include_all: bool = False
) -> list[CandidateSummary]:
    candidates = candidates_in_play(project, include_all=include_all)
    actions = list(
        AcceptanceAction.objects.filter(project=project)
        .select_related("requirement")
        .order_by("requirement__position", "requirement__pk", "position", "pk")
    )
    # Every cell's outcome as plain values; model instances (with their results) only for
    # failures and integration needs, the cells whose details are shown.
    outcomes: dict[int, dict[int, str]] = defaultdict(dict)
    for candidate_id, action_id, outcome in ResultCell.objects.filter(
        project=project, candidate__in=candidates
    ).values_list("candidate_id", "action_id", "outcome"):
        outcomes[candidate_id][action_id] = outcome
    detailed: dict[int, dict[int, ResultCell]] = defaultdict(dict)
    for loaded in ResultCell.objects.filter(
        project=project,
        candidate__in=candidates,
        outcome__in=[Outcome.FAILED, Outcome.NEEDS_INTEGRATION],
    ).select_related("result"):
        detailed[loaded.candidate_id][loaded.action_id] = loaded
    responsibilities: dict[int, dict[str, Responsibility]] = defaultdict(dict)
    for row in Responsibility.objects.filter(candidate__in=candidates):
        responsibilities[row.candidate_id][row.area] = row
    summaries = []
    for candidate in candidates:
        summary = CandidateSummary(
            candidate=candidate,
            counts=dict.fromkeys(Outcome.values, 0),
            responsibilities=responsibilities[candidate.pk],
        )
        candidate_outcomes = outcomes[candidate.pk]
        candidate_cells = detailed[candidate.pk]
        for action in actions:
            outcome = candidate_outcomes.get(action.pk, Outcome.NOT_COVERED)
            summary.counts[outcome] += 1
            if outcome == Outcome.NOT_COVERED:
                summary.not_covered.append(action)
            elif outcome == Outcome.PASSED:
                continue
            else:
                cell = candidate_cells.get(action.pk) or _cell_recorded_meanwhile(candidate, action)
                cell.action = action  # already loaded: no query per cell
                if outcome == Outcome.FAILED:
                    summary.failed.append(cell)
                else:
                    summary.needs_integration.append(cell)
        summaries.append(summary)
    return summaries


def _cell_recorded_meanwhile(candidate: Candidate, action: AcceptanceAction) -> ResultCell:
    """A cell that became a failure or an integration need between the two reads above (a
    result recorded at that moment, outside a transaction): read on its own."""
    return ResultCell.objects.select_related("result").get(candidate=candidate, action=action)


# Failures and integration needs listed per candidate on the comparison page; the counts
# cover all of them, and the matrix (filtered by outcome) lists every one.
COMPARISON_LIST_LIMIT = 25
# Above this many cells (candidates x actions) the lists are not read with the page: each
# opens on demand (`comparison_list`), so the page's cost follows the candidates only.
COMPARISON_INLINE_CELLS = 5000


@dataclass
class CandidateOverview:
    """A candidate on the comparison page: its counts, effort and responsibilities in full,
    and the first COMPARISON_LIST_LIMIT failures and integration needs in suite order (when
    `listed`; otherwise they open on demand)."""

    candidate: Candidate
    counts: dict[str, int]
    integration_effort: Decimal
    listed: bool = True
    # Person-days of the integration needs per owning team, the most first (team labels).
    effort_by_team: list[tuple[str, Decimal]] = field(default_factory=list)
    failed: list[ResultCell] = field(default_factory=list)
    needs_integration: list[ResultCell] = field(default_factory=list)
    responsibilities: dict[str, Responsibility] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def covered(self) -> int:
        return self.total - self.counts[Outcome.NOT_COVERED]

    @property
    def more_failed(self) -> int:
        return self.counts[Outcome.FAILED] - len(self.failed)

    @property
    def more_needs_integration(self) -> int:
        return self.counts[Outcome.NEEDS_INTEGRATION] - len(self.needs_integration)

    @cached_property
    def responsibility_gaps(self) -> list[tuple[str, str]]:
        return responsibility_gaps(self.responsibilities)

    def ordered(self) -> list[tuple[str, int]]:
        return ordered_counts(self.counts)


def _suite_order(prefix: str = "action__") -> list[F]:
    return [
        F(f"{prefix}requirement__position"),
        F(f"{prefix}requirement_id"),
        F(f"{prefix}position"),
        F(f"{prefix}id"),
    ]


def comparison_overview(
    project: Project, *, include_all: bool = False, list_limit: int | None = None
) -> list[CandidateOverview]:
    """Each candidate in play with what it proved and what it needs, read for a page: counts
    and effort summed in the database, and the first `list_limit` failures and integration
    needs per candidate (one windowed query each; None: COMPARISON_LIST_LIMIT, or none at all
    above COMPARISON_INLINE_CELLS cells, where they open on demand). The cost follows the
    candidates, not the suite. (`comparison_for_project` reads every cell, for the sheet.)"""
    candidates = candidates_in_play(project, include_all=include_all)
    candidate_ids = [c.pk for c in candidates]
    action_total, counts = outcome_counts(project, candidate_ids)
    listed = True
    if list_limit is None:
        listed = len(candidate_ids) * action_total <= COMPARISON_INLINE_CELLS
        list_limit = COMPARISON_LIST_LIMIT if listed else 0
    effort: dict[int, Decimal] = defaultdict(Decimal)
    by_team: dict[int, list[tuple[str, Decimal]]] = defaultdict(list)
    teams = dict(OWNER_TEAMS)
    for candidate_id, team, days in (
        ResultCell.objects.filter(
            project=project, candidate_id__in=candidate_ids, outcome=Outcome.NEEDS_INTEGRATION
        )
        .values_list("candidate_id", "result__integration_owner_team")
        .annotate(days=Sum("integration_effort_days"))
        .order_by()
    ):
        effort[candidate_id] += days or Decimal(0)
        by_team[candidate_id].append((str(teams.get(team, team or "—")), days or Decimal(0)))
    for rows in by_team.values():
        rows.sort(key=lambda row: (-row[1], row[0]))
    lists: dict[tuple[int, str], list[ResultCell]] = defaultdict(list)
    if list_limit > 0:
        for outcome in (Outcome.FAILED, Outcome.NEEDS_INTEGRATION):
            first = (
                ResultCell.objects.filter(
                    project=project, candidate_id__in=candidate_ids, outcome=outcome
                )
                .annotate(
                    rank=Window(
                        RowNumber(), partition_by=[F("candidate_id")], order_by=_suite_order()
                    )
                )
                .filter(rank__lte=list_limit)
                .select_related("action", "result")
                .order_by("candidate_id", "rank")
            )
            for cell in first:
                lists[(cell.candidate_id, outcome)].append(cell)
    responsibilities: dict[int, dict[str, Responsibility]] = defaultdict(dict)
    for row in Responsibility.objects.filter(candidate_id__in=candidate_ids):
        responsibilities[row.candidate_id][row.area] = row
    return [
        CandidateOverview(
            candidate=candidate,
            counts=counts[candidate.pk],
            integration_effort=effort.get(candidate.pk, Decimal(0)),
            listed=listed,
            effort_by_team=by_team[candidate.pk],
            failed=lists[(candidate.pk, Outcome.FAILED)],
            needs_integration=lists[(candidate.pk, Outcome.NEEDS_INTEGRATION)],
            responsibilities=responsibilities[candidate.pk],
        )
        for candidate in candidates
    ]


def comparison_list(
    project: Project, candidate_slug: str, outcome: str, *, limit: int | None = None
) -> tuple[Candidate, list[ResultCell], int]:
    """One candidate's failures or integration needs, the first `limit` in suite order (None:
    COMPARISON_LIST_LIMIT), and how many there are. 404 for anything else."""
    candidate = Candidate.objects.filter(project=project, slug=candidate_slug).first()
    if candidate is None or outcome not in LISTED_OUTCOMES:
        raise Http404
    cells = ResultCell.objects.filter(candidate=candidate, outcome=outcome)
    shown = list(
        cells.select_related("action", "result").order_by(*_suite_order())[
            : limit or COMPARISON_LIST_LIMIT
        ]
    )
    return candidate, shown, cells.count()
