"""The comparison side by side: one row per action, a cell per candidate."""

from dataclasses import dataclass

from django.core.paginator import Page

from evaluations.models import (
    AcceptanceAction,
    Project,
)
from poc.models import (
    Outcome,
    ResponsibilityArea,
    Result,
    ResultCell,
)
from poc.selectors.comparison import CandidateOverview, comparison_overview
from poc.selectors.matrix import LISTED_OUTCOMES, MatrixFilters, matrix_rows, rows_page


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
    effort and responsibilities (terms are procurement's page). A row whose candidates differ is
    marked."""

    summaries: list[CandidateOverview]
    requirements: list[SideGroup]
    responsibilities: list[SideRow]
    page: Page[AcceptanceAction] | None = None  # None: every action row is shown


def side_by_side(
    project: Project, *, include_all: bool = False, page: str | int | None = 1
) -> SideBySide:
    """Candidates in columns. The action rows come a page at a time (MATRIX_ROWS_PER_PAGE, in
    the matrix's order; `page=None`: all of them); the outcome counts, effort,
    and responsibilities cover everything on every page."""
    summaries = comparison_overview(project, include_all=include_all, list_limit=0)
    candidate_ids = [s.candidate.pk for s in summaries]
    rows = matrix_rows(project, MatrixFilters(), candidate_ids)
    shown = rows_page(rows, page)
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
    return SideBySide(
        summaries,
        list(groups.values()),
        responsibilities,
        page=shown if paginator.num_pages > 1 else None,
    )
