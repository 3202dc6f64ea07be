"""What a run with controlled failures would create on a cluster, shown before it runs, and
the label everything it creates carries."""

from dataclasses import dataclass

from django.utils.translation import gettext as _

from poc.probes.models import Cluster, ClusterKind
from poc.probes.selectors.clusters import cluster_latest_facts
from workbench.typing import JSON, JSONObject

FAILURE_LABEL_KEY = "workbench.probe/run"


def failure_label(run_id: int | str) -> str:
    """The label on everything a controlled failure creates (the sweeper looks for it)."""
    return f"{FAILURE_LABEL_KEY}={run_id}"


def _list(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []


def _object(value: JSON) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _kubernetes_sizes(cluster: Cluster) -> tuple[int, int | None, str]:
    """(GPUs the Job asks for, GPUs the quota Pod asks for or None, where they come from).

    A run sizes both from the cluster as it is then (largest node's allocatable GPUs plus one;
    the namespace's GPU quota left plus one); the page uses the latest run's reading of it, or
    the GPUs a node should have before any run."""
    namespace = cluster.failure_namespace or "default"
    facts = cluster_latest_facts(cluster)
    counts = [
        _object(node.get("gpu")).get("allocatable")
        for node in _list(facts.get("nodes"))
        if isinstance(node, dict)
    ]
    known = [count for count in counts if isinstance(count, int)]
    quota_left = None
    for quota in _list(facts.get("quotas")):
        if not isinstance(quota, dict) or quota.get("namespace") != namespace:
            continue
        if quota.get("applies_to_probe_pod") is False:
            continue  # scoped to other pods: the run creates no Pod against it
        hard = _object(quota.get("hard")).get("requests.nvidia.com/gpu")
        used = _object(quota.get("used")).get("requests.nvidia.com/gpu") or 0
        if isinstance(hard, int) and isinstance(used, int):
            left = hard - used
            quota_left = left if quota_left is None else min(quota_left, left)
    quota_gpus = None if quota_left is None else max(1, quota_left + 1)
    if known:
        note = _(
            "Sized from the latest run: the largest node allocates %(largest)s GPUs, so the Job "
            "asks for %(asked)s."
        ) % {"largest": max(known), "asked": max(known) + 1}
        if quota_gpus is None:
            note += " " + _(
                "No GPU ResourceQuota was seen in %(namespace)s, so no Pod is created against "
                "one; if one exists at run time, a Pod asking for what it leaves plus one is."
            ) % {"namespace": namespace}
        return max(known) + 1, quota_gpus, note
    expected = cluster.expected_gpus_per_node or 8
    note = _(
        "No run has read the cluster yet: shown with the GPUs a node should have (%(expected)s) "
        "plus one. A run asks for one GPU more than the largest node allocates, and, where "
        "%(namespace)s has a GPU ResourceQuota, creates a Pod asking for what the quota leaves "
        "plus one (shown here as if one GPU were left)."
    ) % {"expected": expected, "namespace": namespace}
    return expected + 1, 2, note


@dataclass(frozen=True)
class Planned:
    """What a run with controlled failures creates, and how its sizes were chosen."""

    objects: list[JSONObject]
    note: str = ""


def planned_objects(cluster: Cluster) -> Planned:
    """Exactly what a run with controlled failures creates on this cluster, for the page to
    show before the first run: manifests for Kubernetes, the job for Slurm."""
    if not cluster.controlled_failures:
        return Planned([])
    if cluster.kind == ClusterKind.KUBERNETES:
        from poc.probes.connectors import kubernetes as kube

        gpus, quota_gpus, note = _kubernetes_sizes(cluster)
        try:
            objects = kube.planned_objects(
                cluster.failure_namespace or "default", failure_label("RUN"), gpus, quota_gpus
            )
        except kube.ConnectorError:
            return Planned([])
        return Planned(objects, note)
    if cluster.kind in (ClusterKind.SLURM_REST, ClusterKind.SLURM_SSH):
        return Planned(
            [
                {
                    "kind": "Slurm job",
                    "what": _(
                        "one batch job asking for one GPU more than the largest node has "
                        "(expected to be refused at submit); cancelled at once if it is accepted"
                    ),
                }
            ]
        )
    return Planned([])
