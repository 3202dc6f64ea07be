"""A project's clusters and their runs."""

from collections.abc import Sequence

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
)


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
