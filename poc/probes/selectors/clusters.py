"""A project's clusters and their runs."""

from collections.abc import Sequence
from datetime import datetime

from django.db.models import (
    Count,
    OuterRef,
    Subquery,
)
from django.http import Http404

from evaluations.models import (
    Project,
)
from poc.probes.models import (
    Cluster,
    ProbeRun,
    ProbeStatus,
)
from workbench.typing import JSONObject


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


def cluster_choices(project: Project) -> list[tuple[str, str]]:
    """The project's clusters as (id, name), by name."""
    return [
        (str(pk), name)
        for pk, name in Cluster.objects.filter(project=project)
        .order_by("name", "pk")
        .values_list("pk", "name")
    ]


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


def cluster_latest_facts(cluster: Cluster) -> JSONObject:
    """What the cluster's latest run that read it said (its cluster facts), or {}."""
    facts = (
        ProbeRun.objects.filter(cluster=cluster, status__in=(ProbeStatus.DONE, ProbeStatus.PARTIAL))
        .exclude(cluster_facts={})
        .order_by("-pk")
        .values_list("cluster_facts", flat=True)
        .first()
    )
    return facts if isinstance(facts, dict) else {}


def probe_run_has_facts(run: ProbeRun) -> bool:
    """Whether the run has stored what its connector read about the cluster."""
    return ProbeRun.objects.filter(pk=run.pk).exclude(cluster_facts={}).exists()


def probe_run_cancel_requested(run: ProbeRun) -> bool:
    return ProbeRun.objects.filter(pk=run.pk, cancel_requested=True).exists()


def probe_run_state(run_id: int) -> tuple[str, datetime | None, bool] | None:
    """(status, work_started_at, cancel_requested) of a run as stored now; None when it is not
    there (or not visible from this connection)."""
    return (
        ProbeRun.objects.filter(pk=run_id)
        .values_list("status", "work_started_at", "cancel_requested")
        .first()
    )


def failure_runs_to_sweep(cluster: Cluster, *, besides: ProbeRun, limit: int = 10) -> list[int]:
    """The cluster's latest other runs with controlled failures that did not finish cleanly
    (what they created may still be there), newest first."""
    return list(
        ProbeRun.objects.filter(cluster=cluster, with_failures=True)
        .exclude(pk=besides.pk)
        .exclude(status=ProbeStatus.DONE)
        .order_by("-pk")
        .values_list("pk", flat=True)[:limit]
    )


def probe_run_counts() -> list[tuple[str, float]]:
    """Probe runs by state (for metrics)."""
    rows = ProbeRun.objects.values_list("status").annotate(n=Count("pk")).order_by()
    return [(status, float(n)) for status, n in rows]
