"""CI runs and the API's reads: the matrix as data, a run's imports and what it
changed, tokens."""

from dataclasses import dataclass

from django.db.models import (
    Count,
    Prefetch,
    Q,
    QuerySet,
)
from django.http import Http404

from evaluations.models import (
    AcceptanceAction,
    ApiToken,
    Candidate,
    Project,
)
from poc.models import (
    Change,
    Outcome,
    Result,
    ResultCell,
    Run,
    RunImport,
)
from poc.selectors.matrix import cells_after_freeze


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
                .select_related("candidate__solution", "action", "action__requirement", "previous")
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


def run_posts(project: Project) -> QuerySet[RunImport]:
    """Every post into the project's CI runs with its run, candidate and token: the rows of
    the CI runs table."""
    return RunImport.objects.filter(run__project=project).select_related(
        "run", "run__candidate__solution", "token"
    )


def posts_by_status(posts: QuerySet[RunImport], status: str) -> QuerySet[RunImport]:
    """The posts that regressed a cell, recovered one, changed no outcome ("steady") or named
    testcases that map to no action ("unmapped")."""
    if status == "regressed":
        return posts.filter(regressed__gt=0)
    if status == "recovered":
        return posts.filter(recovered__gt=0)
    if status == "unmapped":
        return posts.exclude(unmapped=[])
    return posts.filter(regressed=0, recovered=0, changed=0)


def posts_of_run(posts: QuerySet[RunImport], text: str) -> QuerySet[RunImport]:
    """The posts whose run's name, external id or commit contains `text`."""
    return posts.filter(
        Q(run__name__icontains=text)
        | Q(run__external_id__icontains=text)
        | Q(run__commit__icontains=text)
    )


def result_counts() -> list[tuple[str, float]]:
    """Results recorded, by source (for metrics)."""
    rows = Result.objects.values_list("source").annotate(n=Count("pk")).order_by()
    return [(source, float(n)) for source, n in rows]
