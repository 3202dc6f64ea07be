"""Reads for the results matrix, cell history, comparison and responsibilities.

Every page here runs a fixed number of queries whatever the size of the project.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import NamedTuple

from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
    Window,
)
from django.db.models.functions import Coalesce, RowNumber
from django.http import Http404
from django.utils.translation import gettext_lazy as _

from evaluations import selectors as evaluation_selectors
from evaluations.models import (
    OWNER_TEAMS,
    AcceptanceAction,
    ApiToken,
    Candidate,
    Dimension,
    Project,
    Requirement,
    TemplateAction,
    Tier,
)
from poc.models import (
    Boundary,
    Change,
    Cluster,
    Evidence,
    Outcome,
    ProbeBinding,
    ProbeOutput,
    ProbeRun,
    Responsibility,
    ResponsibilityArea,
    Result,
    ResultCell,
    Run,
    RunImport,
)
from workbench.typing import AnyUser, JSONObject

OUTCOME_ORDER = [Outcome.PASSED, Outcome.FAILED, Outcome.NOT_COVERED, Outcome.NEEDS_INTEGRATION]


def candidates_in_play(project: Project, *, include_all: bool = False) -> list[Candidate]:
    queryset = Candidate.objects.filter(project=project).select_related("solution")
    if not include_all:
        queryset = queryset.filter(tier__in=[Tier.FIRST, Tier.ALTERNATIVE])
    return list(queryset.order_by("position", "pk"))


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

    rows = _matrix_rows(project, filters, candidate_ids)
    shown = _rows_page(rows, page)
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


def _rows_page(rows: QuerySet[AcceptanceAction], page: str | int | None) -> Page[AcceptanceAction]:
    """One page of MATRIX_ROWS_PER_PAGE action rows (a page past the end: the last);
    `page=None`: every row on one page."""
    if page is None:
        return Paginator(rows, max(1, rows.count())).get_page(1)
    return Paginator(rows, MATRIX_ROWS_PER_PAGE).get_page(page)


def _matrix_rows(
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


# --- comparison --------------------------------------------------------------------------


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
    passed: list[ResultCell] = field(default_factory=list)
    failed: list[ResultCell] = field(default_factory=list)
    needs_integration: list[ResultCell] = field(default_factory=list)
    not_covered: list[AcceptanceAction] = field(default_factory=list)
    responsibilities: dict[str, Responsibility] = field(default_factory=dict)
    boundary: Boundary | None = None

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
    cells = list(
        ResultCell.objects.filter(project=project, candidate__in=candidates).only(
            "candidate_id", "action_id", "outcome", "result_id"
        )
    )
    # Only failures and integration needs show their result's details: load just those.
    detailed = {Outcome.FAILED, Outcome.NEEDS_INTEGRATION}
    results = Result.objects.in_bulk([c.result_id for c in cells if c.outcome in detailed])
    by_candidate: dict[int, dict[int, ResultCell]] = defaultdict(dict)
    for loaded in cells:
        if loaded.result_id in results:
            loaded.result = results[loaded.result_id]
        by_candidate[loaded.candidate_id][loaded.action_id] = loaded
    responsibilities: dict[int, dict[str, Responsibility]] = defaultdict(dict)
    for row in Responsibility.objects.filter(candidate__in=candidates):
        responsibilities[row.candidate_id][row.area] = row
    boundaries = {b.candidate_id: b for b in Boundary.objects.filter(candidate__in=candidates)}
    summaries = []
    for candidate in candidates:
        summary = CandidateSummary(
            candidate=candidate,
            counts=dict.fromkeys(Outcome.values, 0),
            responsibilities=responsibilities[candidate.pk],
            boundary=boundaries.get(candidate.pk),
        )
        candidate_cells = by_candidate[candidate.pk]
        for action in actions:
            cell: ResultCell | None = candidate_cells.get(action.pk)
            if cell is not None:
                cell.action = action  # already loaded: no query per cell
            outcome = cell.outcome if cell else Outcome.NOT_COVERED
            summary.counts[outcome] += 1
            if cell is None or outcome == Outcome.NOT_COVERED:
                summary.not_covered.append(action)
            elif outcome == Outcome.PASSED:
                summary.passed.append(cell)
            elif outcome == Outcome.FAILED:
                summary.failed.append(cell)
            else:
                summary.needs_integration.append(cell)
        summaries.append(summary)
    return summaries


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
    failed: list[ResultCell] = field(default_factory=list)
    needs_integration: list[ResultCell] = field(default_factory=list)
    responsibilities: dict[str, Responsibility] = field(default_factory=dict)
    boundary: Boundary | None = None

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
    effort = {
        candidate_id: days or Decimal(0)
        for candidate_id, days in ResultCell.objects.filter(
            project=project, candidate_id__in=candidate_ids, outcome=Outcome.NEEDS_INTEGRATION
        )
        .values_list("candidate_id")
        .annotate(days=Sum("integration_effort_days"))
        .order_by()
    }
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
    boundaries = {
        b.candidate_id: b for b in Boundary.objects.filter(candidate_id__in=candidate_ids)
    }
    return [
        CandidateOverview(
            candidate=candidate,
            counts=counts[candidate.pk],
            integration_effort=effort.get(candidate.pk, Decimal(0)),
            listed=listed,
            failed=lists[(candidate.pk, Outcome.FAILED)],
            needs_integration=lists[(candidate.pk, Outcome.NEEDS_INTEGRATION)],
            responsibilities=responsibilities[candidate.pk],
            boundary=boundaries.get(candidate.pk),
        )
        for candidate in candidates
    ]


# What a comparison list may show: the outcomes whose results say why.
LISTED_OUTCOMES = (Outcome.FAILED, Outcome.NEEDS_INTEGRATION)


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


# --- API ---------------------------------------------------------------------------------


def matrix_api_data(project: Project) -> dict[str, object]:
    """The whole matrix for CI: every candidate × action, the latest result or not_covered."""
    candidates = list(
        Candidate.objects.filter(project=project)
        .order_by("position", "pk")
        .values_list("pk", "slug")
    )
    actions = list(
        AcceptanceAction.objects.filter(project=project)
        .order_by("requirement__position", "requirement__pk", "position", "pk")
        .values_list("pk", "key")
    )
    cells = {
        (c, a): (outcome, result_id)
        for c, a, outcome, result_id in ResultCell.objects.filter(project=project).values_list(
            "candidate_id", "action_id", "outcome", "result_id"
        )
    }
    after_freeze = cells_after_freeze(project)
    totals = {slug: dict.fromkeys(Outcome.values, 0) for _pk, slug in candidates}
    out_cells = []
    for candidate_pk, slug in candidates:
        for action_pk, key in actions:
            outcome, result_id = cells.get((candidate_pk, action_pk), (Outcome.NOT_COVERED, None))
            totals[slug][outcome] += 1
            out_cells.append(
                {
                    "candidate": slug,
                    "action": key,
                    "outcome": outcome,
                    "result_id": result_id,
                    "after_freeze": (candidate_pk, action_pk) in after_freeze,
                }
            )
    return {
        "candidates": [slug for _pk, slug in candidates],
        "actions": [key for _pk, key in actions],
        "cells": out_cells,
        "totals": totals,
        "frozen_revision": project.frozen_revision,
    }


def run_with_imports(run_id: int) -> Run | None:
    return (
        Run.objects.filter(pk=run_id)
        .select_related("project", "candidate")
        .prefetch_related("imports")
        .first()
    )


# A post's results in the order a reader wants them: what broke first, then what came back.
CHANGE_ORDER = (Change.REGRESSED, Change.RECOVERED, Change.CHANGED, Change.NEW, Change.UNCHANGED)
# Rows shown per kind of change and post; the counts always cover every row.
DRILLDOWN_ROWS = 300


@dataclass
class ChangeGroup:
    change: str
    label: str
    count: int
    results: list[Result]

    @property
    def more(self) -> int:
        return self.count - len(self.results)


@dataclass
class PostDrilldown:
    post: RunImport
    groups: list[ChangeGroup]
    linked: bool  # whether this post's results are known one by one


def run_drilldown(project: Project, run_id: int) -> tuple[Run, list[PostDrilldown]]:
    """A CI run of the project and, for each of its posts (newest first), the cells it
    touched grouped by what it did to them (regressed, recovered, changed, new, unchanged),
    with each cell's previous outcome, and the testcases that named no action. Queries: the
    run, its posts, one count query and one query per kind of change and post (at most
    DRILLDOWN_ROWS rows each). 404 for a run of another project."""
    run = (
        Run.objects.filter(pk=run_id, project=project)
        .select_related("candidate", "candidate__solution")
        .first()
    )
    if run is None:
        raise Http404
    posts = list(RunImport.objects.filter(run=run).select_related("token", "posted_by"))
    counts: dict[tuple[int, str], int] = {
        (post_id, change): n
        for post_id, change, n in Result.objects.filter(run_import__run=run)
        .values_list("run_import", "change")
        .annotate(n=Count("pk"))
        .order_by()
    }
    labels = dict(Change.choices)
    drilldown = []
    for post in posts:
        groups = []
        for change in CHANGE_ORDER:
            count = counts.get((post.pk, change), 0)
            if not count:
                continue
            results = list(
                Result.objects.filter(run_import=post, change=change)
                .select_related("candidate", "action", "action__requirement", "previous")
                .order_by("candidate__slug", "action__requirement__position", "action__position")[
                    :DRILLDOWN_ROWS
                ]
            )
            groups.append(ChangeGroup(change, str(labels[change]), count, results))
        drilldown.append(PostDrilldown(post, groups, linked=bool(groups)))
    return run, drilldown


def result_with_project(result_id: int) -> Result | None:
    return Result.objects.filter(pk=result_id).select_related("project").first()


def tokens_for_project(project: Project) -> list[ApiToken]:
    return list(ApiToken.objects.filter(project=project).select_related("created_by"))


def token_for_project(project: Project, token_id: int) -> ApiToken:
    token = ApiToken.objects.filter(project=project, pk=token_id).first()
    if token is None:
        raise Http404
    return token


def runs_for_project(project: Project, *, limit: int = 100) -> list[Run]:
    return list(
        Run.objects.filter(project=project)
        .select_related("candidate", "candidate__solution")
        .prefetch_related(Prefetch("imports", queryset=RunImport.objects.select_related("token")))
        .order_by("-updated_at", "-pk")[:limit]
    )


# --- probes ------------------------------------------------------------------------------


def probe_bindings_for_project(
    project: Project,
) -> list[tuple[AcceptanceAction, ProbeBinding | None, JSONObject | None]]:
    """Every action of the project with its explicit binding (or None) and the check its
    template names (or None), in suite order. Two queries whatever the size."""
    actions = list(
        AcceptanceAction.objects.filter(project=project)
        .select_related("requirement", "probe_binding")
        .order_by("requirement__position", "requirement__pk", "position", "pk")
    )
    template_keys = {a.template_key for a in actions if a.template_key}
    defaults = {
        key: check
        for key, check in TemplateAction.objects.filter(key__in=template_keys).values_list(
            "key", "probe_check"
        )
        if check
    }
    out = []
    for action in actions:
        try:
            explicit: ProbeBinding | None = action.probe_binding
        except ProbeBinding.DoesNotExist:
            explicit = None
        out.append((action, explicit, defaults.get(action.template_key)))
    return out


def probe_binding_of(action: AcceptanceAction) -> tuple[ProbeBinding | None, JSONObject]:
    """One action's explicit binding (or None) and the check its template names (or {})."""
    explicit = ProbeBinding.objects.filter(action=action).first()
    template_check: JSONObject = {}
    if action.template_key:
        template_check = (
            TemplateAction.objects.filter(key=action.template_key)
            .values_list("probe_check", flat=True)
            .first()
            or {}
        )
    return explicit, template_check


def probe_runs_for_project(
    project: Project, *, candidate: Candidate | None = None, limit: int = 50
) -> list[ProbeRun]:
    queryset = ProbeRun.objects.filter(project=project).select_related(
        "project", "candidate", "candidate__solution", "created_by", "token"
    )
    if candidate is not None:
        queryset = queryset.filter(candidate=candidate)
    return list(queryset.order_by("-created_at", "-pk")[:limit])


# Runs whose nodes are evidence: finished, with every node read or some.
EVIDENCE_STATUSES = ("done", "partial")


def latest_probe_runs(project: Project, candidates: list[Candidate]) -> dict[int, ProbeRun]:
    """The newest finished probe run of each candidate, with its nodes (two queries)."""
    latest = (
        ProbeRun.objects.filter(
            project=project, candidate__in=candidates, status__in=EVIDENCE_STATUSES
        )
        .order_by("candidate_id", "-created_at", "-pk")
        .distinct("candidate_id")
        if connection.vendor == "postgresql"
        else None
    )
    if latest is not None:
        ids = list(latest.values_list("pk", flat=True))
    else:  # SQLite has no DISTINCT ON: one small query per candidate
        ids = [
            pk
            for c in candidates
            if (
                pk := ProbeRun.objects.filter(
                    project=project, candidate=c, status__in=EVIDENCE_STATUSES
                )
                .order_by("-created_at", "-pk")
                .values_list("pk", flat=True)
                .first()
            )
        ]
    runs = ProbeRun.objects.filter(pk__in=ids).prefetch_related("nodes")
    return {run.candidate_id: run for run in runs}


def probe_run_for_project(project: Project, run_id: int) -> ProbeRun:
    run = (
        ProbeRun.objects.filter(project=project, pk=run_id)
        .select_related(
            "project", "candidate", "candidate__solution", "created_by", "token", "run", "cluster"
        )
        .prefetch_related("nodes", "outputs")
        .first()
    )
    if run is None:
        raise Http404
    return run


def probe_run_with_project(run_id: int) -> ProbeRun | None:
    return (
        ProbeRun.objects.filter(pk=run_id)
        .select_related("project", "candidate", "candidate__solution")
        .prefetch_related("nodes", "outputs")
        .first()
    )


def probe_output_for_project(project: Project, output_id: int) -> ProbeOutput:
    output = (
        ProbeOutput.objects.filter(run__project=project, pk=output_id)
        .select_related("run", "run__candidate")
        .first()
    )
    if output is None:
        raise Http404
    return output


def probe_results_for_run(run: ProbeRun) -> list[Result]:
    if run.run_id is None:
        return []
    return list(
        Result.objects.filter(candidate_id=run.candidate_id, run_id=run.run_id, source="probe")
        .select_related("action")
        .order_by("action__position", "action__pk")
    )


# --- clusters -----------------------------------------------------------------------------


def clusters_for_project(project: Project) -> Sequence[Cluster]:
    """The project's clusters, each with its newest run as `latest_run` (two queries)."""
    newest = ProbeRun.objects.filter(cluster=OuterRef("pk")).order_by("-created_at", "-pk")
    clusters = list(
        Cluster.objects.filter(project=project)
        .select_related("candidate", "candidate__solution")
        .annotate(latest_run_id=Subquery(newest.values("pk")[:1]))
    )
    ids = [c.latest_run_id for c in clusters if c.latest_run_id]  # type: ignore[attr-defined]
    runs = ProbeRun.objects.in_bulk(ids) if ids else {}
    for cluster in clusters:
        cluster.latest_run = runs.get(cluster.latest_run_id)  # type: ignore[attr-defined]
    return clusters


def cluster_for_project(project: Project, cluster_id: int) -> Cluster:
    cluster = (
        Cluster.objects.filter(project=project, pk=cluster_id)
        .select_related("project", "candidate", "candidate__solution")
        .first()
    )
    if cluster is None:
        raise Http404
    return cluster


def cluster_runs(cluster: Cluster, *, limit: int = 20) -> list[ProbeRun]:
    return list(
        ProbeRun.objects.filter(cluster=cluster)
        .select_related("created_by")
        .order_by("-created_at", "-pk")[:limit]
    )


def cluster_with_project(cluster_id: int) -> Cluster | None:
    return (
        Cluster.objects.filter(pk=cluster_id)
        .select_related("project", "candidate", "candidate__solution")
        .first()
    )


def probe_run_counts() -> list[tuple[str, float]]:
    """Probe runs by state (for metrics)."""
    rows = ProbeRun.objects.values_list("status").annotate(n=Count("pk")).order_by()
    return [(status, float(n)) for status, n in rows]


def result_counts() -> list[tuple[str, float]]:
    """Results recorded, by source (for metrics)."""
    rows = Result.objects.values_list("source").annotate(n=Count("pk")).order_by()
    return [(source, float(n)) for source, n in rows]


# --- integration gaps across candidates ---------------------------------------------------


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


# --- search across the user's projects ------------------------------------------------------

SEARCH_LIMIT = 30


@dataclass
class SearchHits:
    query: str
    candidates: list[Candidate]
    actions: list[AcceptanceAction]
    results: list[Result]

    @property
    def total(self) -> int:
        return len(self.candidates) + len(self.actions) + len(self.results)


def search(user: AnyUser, query: str, *, limit: int = SEARCH_LIMIT) -> SearchHits:
    """Candidates, acceptance actions and results whose words contain `query`, in the projects
    `user` is a member of only (newest results first; at most `limit` of each kind)."""
    projects = evaluation_selectors.projects_for_user(user).values("pk")
    candidates = list(
        Candidate.objects.filter(project__in=projects)
        .filter(
            Q(slug__icontains=query)
            | Q(solution__name_en__icontains=query)
            | Q(solution__name_zh__icontains=query)
            | Q(version__icontains=query)
            | Q(reason__icontains=query)
        )
        .select_related("project", "solution")
        .order_by("project__name", "position", "pk")[:limit]
    )
    actions = list(
        AcceptanceAction.objects.filter(project__in=projects)
        .filter(
            Q(key__icontains=query)
            | Q(question__icontains=query)
            | Q(pass_criterion__icontains=query)
            | Q(requirement__feature__icontains=query)
            | Q(translations__icontains=query)
        )
        .select_related("project", "requirement")
        .order_by("project__name", "requirement__position", "position", "pk")[:limit]
    )
    results = list(
        Result.objects.filter(project__in=projects)
        .filter(
            Q(note__icontains=query)
            | Q(failure_cause__icontains=query)
            | Q(integration_what__icontains=query)
            | Q(change_reason__icontains=query)
            | Q(run_reference__icontains=query)
        )
        .select_related("project", "candidate__solution", "action", "recorded_by")
        .order_by("-recorded_at", "-pk")[:limit]
    )
    return SearchHits(query, candidates, actions, results)


# --- the comparison side by side ------------------------------------------------------------


@dataclass(frozen=True)
class SideCell:
    outcome: str
    detail: str  # the failure cause or what to integrate, when there is one


@dataclass(frozen=True)
class SideRow:
    label: str
    key: str
    cells: list[SideCell]

    @property
    def differs(self) -> bool:
        return len({cell.outcome for cell in self.cells}) > 1


@dataclass(frozen=True)
class SideGroup:
    label: str
    rows: list[SideRow]


@dataclass
class SideBySide:
    """Candidates in columns; rows in one order: each requirement's actions, then integration
    effort, responsibilities and boundaries. A row whose candidates differ is marked."""

    summaries: list[CandidateOverview]
    requirements: list[SideGroup]
    responsibilities: list[SideRow]
    boundaries: list[SideRow]
    page: Page[AcceptanceAction] | None = None  # None: every action row is shown


BOUNDARY_LABELS = (
    ("license_model", _("License model")),
    ("support_terms", _("Support terms")),
    ("upgrade_cadence", _("Upgrade cadence")),
    ("exit_plan", _("Exit plan")),
)


def side_by_side(
    project: Project, *, include_all: bool = False, page: str | int | None = 1
) -> SideBySide:
    """Candidates in columns. The action rows come a page at a time (MATRIX_ROWS_PER_PAGE, in
    the matrix's order; `page=None`: all of them); the outcome counts, effort,
    responsibilities and boundaries cover everything on every page."""
    summaries = comparison_overview(project, include_all=include_all, list_limit=0)
    candidate_ids = [s.candidate.pk for s in summaries]
    rows = _matrix_rows(project, MatrixFilters(), candidate_ids)
    shown = _rows_page(rows, page)
    paginator = shown.paginator
    actions: list[AcceptanceAction] = list(shown.object_list)
    page_cells = list(
        ResultCell.objects.filter(
            project=project,
            candidate_id__in=candidate_ids,
            action_id__in=[a.pk for a in actions],
        ).values_list("candidate_id", "action_id", "outcome", "result_id")
    )
    # Only failures and integration needs show a detail: read just those results' text.
    details = {
        pk: failure_cause or integration_what
        for pk, failure_cause, integration_what in Result.objects.filter(
            pk__in=[r for _c, _a, o, r in page_cells if o in LISTED_OUTCOMES]
        ).values_list("pk", "failure_cause", "integration_what")
    }
    cells = {
        (candidate_id, action_id): SideCell(outcome, details.get(result_id, ""))
        for candidate_id, action_id, outcome, result_id in page_cells
    }
    not_covered = SideCell(Outcome.NOT_COVERED, "")
    groups: dict[int, SideGroup] = {}
    for action in actions:
        group = groups.setdefault(
            action.requirement_id, SideGroup(action.requirement.feature_text, [])
        )
        group.rows.append(
            SideRow(
                action.question_text,
                action.key,
                [cells.get((pk, action.pk), not_covered) for pk in candidate_ids],
            )
        )
    responsibilities = [
        SideRow(
            str(label),
            value,
            [
                SideCell(
                    (r := s.responsibilities.get(value)) and r.party or "",
                    f"{r.get_party_display()} · {r.person}" if r else "",
                )
                for s in summaries
            ],
        )
        for value, label in ResponsibilityArea.choices
    ]
    boundaries = [
        SideRow(
            str(label),
            name,
            [
                SideCell(
                    text := (getattr(s.boundary, name) if s.boundary else "") or "",
                    text,
                )
                for s in summaries
            ],
        )
        for name, label in BOUNDARY_LABELS
    ]
    return SideBySide(
        summaries,
        list(groups.values()),
        responsibilities,
        boundaries,
        page=shown if paginator.num_pages > 1 else None,
    )
