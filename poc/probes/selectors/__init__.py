"""Reads of GPU evidence: clusters and their runs (`clusters`), probe runs, their outputs and
the check bindings (`probes`)."""

from poc.probes.selectors.clusters import (
    cluster_for_project,
    cluster_runs,
    cluster_with_project,
    clusters_for_project,
    probe_run_counts,
)
from poc.probes.selectors.probes import (
    EVIDENCE_STATUSES,
    latest_probe_runs,
    probe_binding_of,
    probe_bindings_for_project,
    probe_output_for_project,
    probe_run_for_project,
    probe_run_with_project,
    probe_runs_for_project,
)

__all__ = [
    "cluster_for_project",
    "cluster_runs",
    "cluster_with_project",
    "clusters_for_project",
    "EVIDENCE_STATUSES",
    "latest_probe_runs",
    "probe_binding_of",
    "probe_bindings_for_project",
    "probe_output_for_project",
    "probe_run_counts",
    "probe_run_for_project",
    "probe_run_with_project",
    "probe_runs_for_project",
]
