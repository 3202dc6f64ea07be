"""Reads of GPU evidence: clusters and their runs (`clusters`), what a run with controlled
failures would create (`plans`), probe runs, their outputs and the check bindings (`probes`)."""

from poc.probes.selectors.clusters import (
    cluster_choices,
    cluster_for_project,
    cluster_latest_facts,
    cluster_runs,
    cluster_with_project,
    clusters_for_project,
    failure_runs_to_sweep,
    probe_run_cancel_requested,
    probe_run_counts,
    probe_run_has_facts,
    probe_run_state,
)
from poc.probes.selectors.plans import FAILURE_LABEL_KEY, Planned, failure_label, planned_objects
from poc.probes.selectors.probes import (
    EVIDENCE_STATUSES,
    latest_probe_runs,
    probe_binding_of,
    probe_bindings_for_project,
    probe_output_for_project,
    probe_run_for_project,
    probe_run_rows,
    probe_run_with_project,
    probe_runs_for_project,
)

__all__ = [
    "cluster_choices",
    "cluster_for_project",
    "cluster_latest_facts",
    "cluster_runs",
    "cluster_with_project",
    "clusters_for_project",
    "EVIDENCE_STATUSES",
    "FAILURE_LABEL_KEY",
    "failure_runs_to_sweep",
    "Planned",
    "failure_label",
    "latest_probe_runs",
    "probe_binding_of",
    "probe_bindings_for_project",
    "probe_output_for_project",
    "planned_objects",
    "probe_run_cancel_requested",
    "probe_run_counts",
    "probe_run_has_facts",
    "probe_run_state",
    "probe_run_for_project",
    "probe_run_rows",
    "probe_run_with_project",
    "probe_runs_for_project",
]
