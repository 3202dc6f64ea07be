"""The results matrix: candidates in play, cells, rows page by page, a cell's
detail and history."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from django.core.paginator import Page, Paginator
from django.db.models import (
    Case,
    Count,
    Exists,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.http import Http404

from evaluations.models import (
    AcceptanceAction,
    Candidate,
    Dimension,
    Project,
    Requirement,
)
from evaluations.selectors import candidates_in_play
from poc.models import (
    Evidence,
    Outcome,
    Responsibility,
    Result,
    ResultCell,
)

OUTCOME_ORDER = [Outcome.PASSED, Outcome.FAILED, Outcome.NOT_COVERED, Outcome.NEEDS_INTEGRATION]


@dataclass
class MatrixFilters:
    dimension: str = ""
    scenario: str = ""
    outcome: str = ""
    team: str = ""
    all_candidates: bool = False


class CellState(NamedTuple):
    """What a matrix cell shows: read as plain tuples, since a matrix holds thousands."""

    outcome: str
    evidence_count: int
    after_freeze: bool = False  # the latest result came after the frozen revision


def cells_after_freeze(
    project: Project, *, action_ids: Sequence[int] | None = None
) -> set[tuple[int, int]]:
    """(candidate id, action id) of the cells whose latest result was recorded after the
    revision the project is frozen for: stored and shown, but not in that revision. Empty
    when the project is not frozen. `action_ids`: only the cells of these actions."""
    if project.frozen_revision is None or project.frozen_at is None:
        return set()
    cells = ResultCell.objects.filter(project=project, result__recorded_at__gt=project.frozen_at)
    if action_ids is not None:
        cells = cells.filter(action_id__in=action_ids)
    return set(cells.values_list("candidate_id", "action_id"))


@dataclass
class MatrixRow:
    action: AcceptanceAction
    cells: list[tuple[Candidate, CellState | None]]


@dataclass
class MatrixRequirement:
    requirement: Requirement
    rows: list[MatrixRow] = field(default_factory=list)


@dataclass
class MatrixGroup:
    dimension: str
    label: str
    requirements: list[MatrixRequirement] = field(default_factory=list)


@dataclass
class CandidateTotals:
    candidate: Candidate
    counts: dict[str, int]
    total: int

    @property
    def covered(self) -> int:
        return self.total - self.counts[Outcome.NOT_COVERED]

    @property
    def coverage_percent(self) -> int:
        return round(100 * self.covered / self.total) if self.total else 0

    def ordered(self) -> list[tuple[str, int]]:
        return [(o.value, self.counts[o.value]) for o in OUTCOME_ORDER]


@dataclass
class Matrix:
    candidates: list[Candidate]
    groups: list[MatrixGroup]
    totals: list[CandidateTotals]
    row_count: int  # rows matching the filters, on every page
    page: Page[AcceptanceAction] | None = None  # None: every matching row is shown


def outcome_counts(
    project: Project, candidate_ids: list[int]
) -> tuple[int, dict[int, dict[str, int]]]:
    """The number of actions, and per candidate how many of them read each outcome (a cell
    without a result reads "not covered"), counted in the database: two queries."""
    action_total = AcceptanceAction.objects.filter(project=project).count()
    counts = {pk: dict.fromkeys(Outcome.values, 0) for pk in candidate_ids}
    for candidate_id, outcome, n in (
        ResultCell.objects.filter(project=project, candidate_id__in=candidate_ids)
        .values_list("candidate_id", "outcome")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        if outcome != Outcome.NOT_COVERED:
            counts[candidate_id][outcome] = n
    for per_candidate in counts.values():
        per_candidate[Outcome.NOT_COVERED] = action_total - sum(per_candidate.values())
    return action_total, counts


# Rows of the matrix shown at once: a page stays light (a few hundred KB at 50 candidates)
# whatever the size of the suite; the filters and the totals cover every row.
MATRIX_ROWS_PER_PAGE = 50


def matrix_for_project(
    project: Project, filters: MatrixFilters | None = None, *, page: str | int | None = 1
) -> Matrix:
    """Candidates as columns, actions as rows grouped by dimension and requirement; each cell the
    latest result (None reads "not covered"). One page of the rows that match the filters
    (MATRIX_ROWS_PER_PAGE, in dimension, requirement and action order; `page=None`: all of
    them); the totals cover every action, whatever the filters and the page. The counting and
    the filtering happen in the database, so the cost follows the page, not the project."""
    filters = filters or MatrixFilters()
    candidates = candidates_in_play(project, include_all=filters.all_candidates)
    candidate_ids = [c.pk for c in candidates]
    action_total, counts = outcome_counts(project, candidate_ids)
    totals = [CandidateTotals(c, counts[c.pk], action_total) for c in candidates]

    rows = matrix_rows(project, filters, candidate_ids)
    shown = rows_page(rows, page)
    paginator = shown.paginator
    actions: list[AcceptanceAction] = list(shown.object_list)
    action_ids = [a.pk for a in actions]
    after_freeze = cells_after_freeze(project, action_ids=action_ids)
    cells: dict[tuple[int, int], CellState] = {
        (candidate_id, action_id): CellState(
            outcome, evidence_count, (candidate_id, action_id) in after_freeze
        )
        for candidate_id, action_id, outcome, evidence_count in ResultCell.objects.filter(
            project=project, action_id__in=action_ids, candidate_id__in=candidate_ids
        ).values_list("candidate_id", "action_id", "outcome", "evidence_count")
    }
    groups = {value: MatrixGroup(value, str(label)) for value, label in Dimension.choices}
    current: MatrixRequirement | None = None
    for action in actions:
        requirement = action.requirement
        if current is None or current.requirement.pk != requirement.pk:
            current = MatrixRequirement(requirement)
            groups[requirement.dimension].requirements.append(current)
        row_cells = [cells.get((pk, action.pk)) for pk in candidate_ids]
        current.rows.append(MatrixRow(action, list(zip(candidates, row_cells, strict=True))))
    return Matrix(
        candidates=candidates,
        groups=[g for g in groups.values() if g.requirements],
        totals=totals,
        row_count=paginator.count,
        page=shown if paginator.num_pages > 1 else None,
    )


def rows_page(rows: QuerySet[AcceptanceAction], page: str | int | None) -> Page[AcceptanceAction]:
    """One page of MATRIX_ROWS_PER_PAGE action rows (a page past the end: the last);
    `page=None`: every row on one page."""
    if page is None:
        return Paginator(rows, max(1, rows.count())).get_page(1)
    return Paginator(rows, MATRIX_ROWS_PER_PAGE).get_page(page)


def matrix_rows(
    project: Project, filters: MatrixFilters, candidate_ids: list[int]
) -> QuerySet[AcceptanceAction]:
    """The actions matching the filters, in the matrix's order, as one query."""
    dimension_order = Case(
        *(
            When(requirement__dimension=value, then=Value(position))
            for position, value in enumerate(Dimension.values)
        ),
        default=Value(len(Dimension.values)),
    )
    rows = AcceptanceAction.objects.filter(project=project).select_related("requirement")
    if filters.dimension:
        rows = rows.filter(requirement__dimension=filters.dimension)
    if filters.team:
        rows = rows.filter(requirement__owner_team=filters.team)
    if filters.scenario:
        rows = rows.filter(scenario=filters.scenario)
    if filters.outcome == Outcome.NOT_COVERED:
        # Some candidate has no result, or reads "not covered".
        covered = (
            ResultCell.objects.filter(action=OuterRef("pk"), candidate_id__in=candidate_ids)
            .exclude(outcome=Outcome.NOT_COVERED)
            .order_by()
            .values("action")
            .annotate(n=Count("pk"))
            .values("n")
        )
        rows = rows.annotate(covered=Coalesce(Subquery(covered), 0)).filter(
            covered__lt=len(candidate_ids)
        )
    elif filters.outcome:
        rows = rows.filter(
            Exists(
                ResultCell.objects.filter(
                    action=OuterRef("pk"), candidate_id__in=candidate_ids, outcome=filters.outcome
                )
            )
        )
    return rows.order_by(
        dimension_order, "requirement__position", "requirement__pk", "position", "pk"
    )


HISTORY_PER_PAGE = 20


@dataclass
class CellDetail:
    candidate: Candidate
    action: AcceptanceAction
    history: list[Result]  # one page of it, newest first
    frozen_revision: int | None = None
    frozen_at: datetime | None = None
    latest: Result | None = None
    page: Page[Result] | None = None

    def after_freeze(self, result: Result) -> bool:
        """Whether a result was recorded after the revision the project is frozen for."""
        return self.frozen_at is not None and result.recorded_at > self.frozen_at


def cell_detail(
    project: Project, candidate_slug: str, action_id: int, *, page: str | int | None = None
) -> CellDetail:
    """One cell: its candidate and action, and a page of its results (newest first)."""
    candidate = (
        Candidate.objects.filter(project=project, slug=candidate_slug)
        .select_related("solution")
        .first()
    )
    action = (
        AcceptanceAction.objects.filter(project=project, pk=action_id)
        .select_related("requirement")
        .first()
    )
    if candidate is None or action is None:
        raise Http404
    results = (
        Result.objects.filter(candidate=candidate, action=action)
        .select_related("recorded_by")
        .prefetch_related(
            Prefetch("evidence", queryset=Evidence.objects.select_related("uploaded_by"))
        )
        .order_by("-recorded_at", "-pk")
    )
    shown = Paginator(results, HISTORY_PER_PAGE).get_page(page)
    history = list(shown.object_list)
    latest = history[0] if shown.number == 1 and history else results.first()
    frozen_at = project.frozen_at if project.frozen_revision is not None else None
    return CellDetail(candidate, action, history, project.frozen_revision, frozen_at, latest, shown)


def responsibility_for(candidate: Candidate, area: str) -> Responsibility | None:
    return Responsibility.objects.filter(candidate=candidate, area=area).first()


def evidence_for_project(project: Project, evidence_id: int) -> Evidence:
    evidence = Evidence.objects.filter(project=project, pk=evidence_id).first()
    if evidence is None:
        raise Http404
    return evidence


def result_for_project(project: Project, result_id: int) -> Result:
    result = (
        Result.objects.filter(project=project, pk=result_id)
        .select_related("candidate", "action", "project")
        .first()
    )
    if result is None:
        raise Http404
    return result


# What a comparison list may show: the outcomes whose results say why.
LISTED_OUTCOMES = (Outcome.FAILED, Outcome.NEEDS_INTEGRATION)
