"""Probe bindings, runs, outputs and results of a project."""

from django.db import connection
from django.db.models import QuerySet
from django.http import Http404

from evaluations.models import (
    AcceptanceAction,
    Candidate,
    Project,
    TemplateAction,
)
from poc.probes.models import (
    ProbeBinding,
    ProbeOutput,
    ProbeRun,
)
from workbench.typing import JSONObject


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


def probe_run_rows(project: Project) -> QuerySet[ProbeRun]:
    """Every probe run of the project with what a row of the runs table shows."""
    return ProbeRun.objects.filter(project=project).select_related(
        "candidate__solution", "created_by", "token", "cluster"
    )


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
