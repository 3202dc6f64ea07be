"""The list pages of a project: every result, the acceptance actions with their coverage, the
integration gaps and the CI runs. Each is a table sorted, filtered and paged from the query
string (`workbench.tables`), so that a link or a reload shows the same view; htmx updates the
table in place and every control also works as a plain link or form."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

from evaluations import selectors as evaluation_selectors
from evaluations.models import OWNER_TEAMS, Dimension, Scenario
from poc import selectors
from poc.models import Outcome, Source
from workbench import tables
from workbench.tables import Column, Filter, TableSpec
from workbench.typing import AuthedHttpRequest

YES_NO = (("yes", _("Yes")), ("no", _("No")))

RESULTS_TABLE = TableSpec(
    dom_id="results-table",
    columns=(
        # Results are appended, never changed: their ids run in the order they were recorded,
        # and the primary key's index keeps any page of half a million results quick.
        Column("recorded", _("Recorded"), ("pk",), descending_first=True),
        Column("candidate", _("Candidate"), ("candidate__position",), costly=True),
        Column(
            "action",
            _("Action"),
            ("action__requirement__position", "action__position"),
            costly=True,
        ),
        Column("outcome", _("Outcome"), ("outcome",), costly=True),
        Column("source", _("Source"), ("source",), costly=True),
        Column("by", _("Recorded by"), ("recorded_by__username",), costly=True),
        Column("note", _("Note")),
    ),
    default_sort="-recorded",
    filters=(
        Filter("candidate", _("Candidate"), "candidate__slug"),
        Filter("outcome", _("Outcome"), "outcome", choices=Outcome.choices),
        Filter("requirement", _("Requirement"), "action__requirement_id"),
        Filter("scenario", _("Scenario"), "action__scenario", choices=Scenario.choices),
        Filter("source", _("Source"), "source", choices=Source.choices),
        Filter("by", _("Recorded by"), "recorded_by_id"),
    ),
)


ACTIONS_TABLE = TableSpec(
    dom_id="actions-table",
    columns=(
        Column("key", _("Key"), ("key",)),
        Column("question", _("Business question")),
        Column("requirement", _("Requirement"), ("requirement__position", "position")),
        Column("scenario", _("Scenario"), ("scenario",)),
        Column(
            "results",
            _("Candidates with results"),
            ("result_count",),
            numeric=True,
            descending_first=True,
        ),
    ),
    default_sort="requirement",
    filters=(
        Filter("requirement", _("Requirement"), "requirement_id"),
        Filter("dimension", _("Dimension"), "requirement__dimension", choices=Dimension.choices),
        Filter("scenario", _("Scenario"), "scenario", choices=Scenario.choices),
        Filter("results", _("Has results"), choices=YES_NO, method=selectors.actions_with_results),
    ),
)


def _in_play(queryset: QuerySet[Any], value: str) -> QuerySet[Any]:
    return queryset if value == "1" else selectors.gaps_of_candidates_in_play(queryset)


GAPS_TABLE = TableSpec(
    dom_id="gaps-table",
    columns=(
        # The team and what to build are the results', not the cells': sorting on them reads
        # every gap's result.
        Column(
            "team",
            _("Owning team"),
            (selectors.owner_team_rank(), "-integration_effort_days"),
            costly=True,
            nulls_last=True,
        ),
        Column("candidate", _("Candidate"), ("candidate__position",)),
        Column("action", _("Action"), ("action__requirement__position", "action__position")),
        Column("what", _("What must be integrated"), ("result__integration_what",), costly=True),
        Column(
            "effort",
            _("Effort (person-days)"),
            ("integration_effort_days",),
            numeric=True,
            descending_first=True,
            nulls_last=True,
        ),
    ),
    default_sort="-effort",
    filters=(
        Filter("candidate", _("Candidate"), "candidate__slug"),
        Filter("team", _("Owning team"), "result__integration_owner_team", choices=OWNER_TEAMS),
        Filter(
            "effort_min",
            _("Effort from (days)"),
            "integration_effort_days__gte",
            kind="number",
        ),
        Filter(
            "effort_max",
            _("Effort up to (days)"),
            "integration_effort_days__lte",
            kind="number",
        ),
        Filter(
            "all",
            _("Candidates"),
            choices=(("0", _("In play")), ("1", _("Every candidate, not applicable too"))),
            method=_in_play,
            default="0",
        ),
    ),
)


POSTS_TABLE = TableSpec(
    dom_id="posts-table",
    columns=(
        Column("run", _("Run"), ("run__name", "run__external_id")),
        Column("candidate", _("Candidate"), ("run__candidate__position",)),
        Column("posted", _("Posted"), ("posted_at",), descending_first=True),
        Column("results", _("Results"), ("result_count",), numeric=True, descending_first=True),
        Column("new", _("New"), ("new",), numeric=True, descending_first=True),
        Column("unchanged", _("Unchanged"), ("unchanged",), numeric=True, descending_first=True),
        Column("regressed", _("Regressed"), ("regressed",), numeric=True, descending_first=True),
        Column("recovered", _("Recovered"), ("recovered",), numeric=True, descending_first=True),
        Column("unmapped", _("Unmapped"), numeric=True),
    ),
    default_sort="-posted",
    filters=(
        Filter("candidate", _("Candidate"), "run__candidate__slug"),
        Filter("run", _("Run, pipeline or commit"), kind="text", method=selectors.posts_of_run),
        Filter(
            "status",
            _("Status"),
            choices=(
                ("regressed", _("Regressed a cell")),
                ("recovered", _("Recovered a cell")),
                ("steady", _("Changed no outcome")),
                ("unmapped", _("Has unmapped testcases")),
            ),
            method=selectors.posts_by_status,
        ),
        Filter("posted_from", _("Posted from"), "posted_at__date__gte", kind="date"),
        Filter("posted_to", _("Posted until"), "posted_at__date__lte", kind="date"),
    ),
)


def _list_page(
    request: AuthedHttpRequest, template: str, table: tables.Table, context: dict[str, Any]
) -> HttpResponse:
    """The whole page, or the table alone to htmx when the table is what it updates."""
    context = {**context, "table": table}
    if tables.wants_table(request.htmx, table.spec):
        return tables.table_response(render(request, f"{template}#table", context), table)
    return render(request, template, context)


def _context(access: evaluation_selectors.ProjectAccess, tab: str) -> dict[str, Any]:
    return {"access": access, "project": access.project, "tab": tab}


@login_required
def results(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Every result recorded in the project, newest first, to sort, filter and page through."""
    access = evaluation_selectors.project_access(request.user, slug)
    project = access.project
    table = tables.table_for(
        RESULTS_TABLE,
        request.GET,
        selectors.result_rows(project),
        path=request.path,
        choices={
            "candidate": selectors.candidate_choices(project),
            "requirement": selectors.requirement_choices(project),
            "by": selectors.member_choices(project),
        },
    )
    return _list_page(request, "poc/results.html", table, _context(access, "results"))


@login_required
def actions(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The acceptance actions as one table, with how many candidates have a result for each."""
    access = evaluation_selectors.project_access(request.user, slug)
    project = access.project
    table = tables.table_for(
        ACTIONS_TABLE,
        request.GET,
        selectors.action_rows(project),
        path=request.path,
        choices={"requirement": selectors.requirement_choices(project)},
    )
    return _list_page(request, "poc/actions.html", table, _context(access, "suite"))


@login_required
def integration_gaps(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Every integration gap across the candidates, with person-days by owning team (of the
    gaps the filters keep)."""
    access = evaluation_selectors.project_access(request.user, slug)
    project = access.project
    table = tables.table_for(
        GAPS_TABLE,
        request.GET,
        selectors.integration_gap_rows(project),
        path=request.path,
        choices={"candidate": selectors.candidate_choices(project)},
    )
    candidates = evaluation_selectors.candidates_in_play(
        project, include_all=table.values.get("all") == "1"
    )
    report = selectors.integration_gap_totals(table.filtered, candidates)
    context = {**_context(access, "integration"), "report": report}
    return _list_page(request, "poc/integration_gaps.html", table, context)


@login_required
def runs(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The project's CI runs: the trends across them (each candidate's pass rate, the flaky
    actions, what the newest runs broke or mended), then every post, to sort and filter."""
    access = evaluation_selectors.project_access(request.user, slug)
    project = access.project
    table = tables.table_for(
        POSTS_TABLE,
        request.GET,
        selectors.run_posts(project),
        path=request.path,
        choices={"candidate": selectors.candidate_choices(project)},
    )
    context = _context(access, "ci")
    if not tables.wants_table(request.htmx, table.spec):  # the trends stay as they are
        context["trends"] = selectors.ci_trends(project)
    return _list_page(request, "poc/runs.html", table, context)
