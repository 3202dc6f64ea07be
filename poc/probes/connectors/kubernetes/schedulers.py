"""Batch schedulers: Volcano queues and PodGroups, KAI and Run:ai queues, projects
and departments."""

from typing import Any

from poc.probes.connectors.kubernetes.api import Api, Listing
from poc.probes.connectors.kubernetes.discovery import Groups, product
from poc.probes.connectors.kubernetes.values import dig

VOLCANO_BEFORE_1 = "scheduling.incubator.k8s.io"
VOLCANO_HIERARCHY = "volcano.sh/hierarchy"  # queue annotation: "root/<parent>/<queue>"


def _hierarchy_parent(queue: dict[str, Any]) -> str | None:
    """The parent named by the hierarchy annotation of Volcano before spec.parent (1.4-1.10,
    "root/eng/prod" for queue prod: parent eng)."""
    path = dig(queue, "metadata", "annotations", VOLCANO_HIERARCHY)
    parts = [p for p in str(path).split("/") if p] if isinstance(path, str) else []
    return parts[-2] if len(parts) >= 2 else None


def _podgroup_refusal(podgroup: dict[str, Any]) -> dict[str, Any] | None:
    """The Unschedulable condition that still holds for a PodGroup, or None.

    Volcano keeps the Unschedulable condition of an earlier scheduling cycle when the group
    is placed later (it adds a Scheduled condition beside it, and many PodGroups carry one
    from their very first cycle): a Running or Completed group, or one whose Scheduled
    condition is newer, is not stuck."""
    if dig(podgroup, "status", "phase") in ("Running", "Completed"):
        return None
    raw = [c for c in dig(podgroup, "status", "conditions") or [] if isinstance(c, dict)]

    def when(condition: dict[str, Any]) -> str:
        return str(condition.get("lastTransitionTime") or "")

    refused = [c for c in raw if c.get("type") == "Unschedulable" and c.get("status") == "True"]
    if not refused:
        return None
    latest = max(refused, key=when)
    scheduled = [c for c in raw if c.get("type") == "Scheduled" and c.get("status") == "True"]
    if any(when(c) > when(latest) for c in scheduled):
        return None
    return {k: latest.get(k) for k in ("type", "status", "reason", "message")}


def read_volcano(api: Api, groups: Groups, result: dict[str, Any]) -> None:
    group = "scheduling.volcano.sh"
    listing = groups.list(api, group, "queues", "Volcano queues", result)
    if listing.state == "missing" and groups.versions and VOLCANO_BEFORE_1 in groups.versions:
        # Volcano before 1.0 (and kube-batch) served its objects in the incubator group.
        group = VOLCANO_BEFORE_1
        listing = groups.list(api, group, "queues", "Volcano queues", result)
        if listing.state == "missing":
            listing = Listing("ok", [], version=groups.versions[group][0])
    queues = [
        {
            "name": dig(q, "metadata", "name"),
            "weight": dig(q, "spec", "weight"),
            "capability": dig(q, "spec", "capability") or {},
            "guarantee": dig(q, "spec", "guarantee", "resource") or {},
            "deserved": dig(q, "spec", "deserved") or {},
            "reclaimable": dig(q, "spec", "reclaimable"),
            "parent": dig(q, "spec", "parent") or _hierarchy_parent(q),
            "hierarchy": dig(q, "metadata", "annotations", VOLCANO_HIERARCHY),
            "state": dig(q, "status", "state"),
            "allocated": dig(q, "status", "allocated") or {},
        }
        for q in listing.items
    ]
    podgroups: list[dict[str, Any]] = []
    if listing.state == "ok":
        found = groups.list(api, group, "podgroups", "Volcano PodGroups", result)
        for pg in found.items:
            unschedulable = _podgroup_refusal(pg)
            podgroups.append(
                {
                    "name": dig(pg, "metadata", "name"),
                    "namespace": dig(pg, "metadata", "namespace"),
                    "queue": dig(pg, "spec", "queue"),
                    "min_member": dig(pg, "spec", "minMember"),
                    "phase": dig(pg, "status", "phase"),
                    "unschedulable": unschedulable,
                }
            )
    result["volcano"] = {
        "version": listing.version or None,
        "queues": queues,
        "podgroups": podgroups,
    }
    # Queues before Volcano 1.0 (kube-batch's v1alpha1) report counts of pods, no state.
    with_state = [q for q in queues if q["state"]]
    open_queues = sum(1 for q in with_state if q["state"] == "Open")
    detail = f"{len(queues)} queues"
    detail += f" ({open_queues} open)" if with_state else ""
    stuck = sum(1 for pg in podgroups if pg["unschedulable"])
    detail += f", {len(podgroups)} PodGroups"
    detail += f", {stuck} unschedulable" if stuck else ""
    product(result, "volcano", "Volcano", listing, "installed", detail)


def _resources(spec: dict[str, Any], kind: str) -> dict[str, Any]:
    found = dig(spec, "resources", kind) or {}
    return {
        "quota": found.get("quota"),
        "limit": found.get("limit"),
        "over_quota_weight": found.get("overQuotaWeight"),
    }


def read_kai_runai(api: Api, groups: Groups, result: dict[str, Any]) -> None:
    listing = groups.list(api, "scheduling.run.ai", "queues", "KAI / Run:ai queues", result)
    queues = []
    for item in listing.items:
        spec = item.get("spec") or {}
        queues.append(
            {
                "name": dig(item, "metadata", "name"),
                "parent": spec.get("parentQueue"),
                "priority": spec.get("priority"),
                "gpu": _resources(spec, "gpu"),
                "cpu": _resources(spec, "cpu"),
                "memory": _resources(spec, "memory"),
            }
        )
    result["kai"] = {"version": listing.version or None, "queues": queues}
    # KAI reads a limit of -1 as none; 0 is a limit (no GPUs at all).
    limited = [
        q["name"] for q in queues if q["gpu"]["limit"] is not None and q["gpu"]["limit"] >= 0
    ]
    detail = f"{len(queues)} queues" + (f", GPU limit on {', '.join(limited)}" if limited else "")
    product(result, "kai", "NVIDIA KAI Scheduler", listing, "installed", detail)

    projects = groups.list(api, "run.ai", "projects", "Run:ai projects", result)
    departments = groups.list(api, "scheduling.run.ai", "departments", "Run:ai departments", result)
    result["runai"] = {
        "projects": [_runai_object(item) for item in projects.items],
        "departments": [_runai_object(item) for item in departments.items],
    }
    states = {projects.state, departments.state}
    combined = Listing(
        "ok" if "ok" in states else "failed" if "failed" in states else "missing",
        reason="; ".join(x.reason for x in (projects, departments) if x.state != "ok"),
    )
    detail = f"{len(projects.items)} projects, {len(departments.items)} departments"
    product(result, "runai", "NVIDIA Run:ai", combined, "installed", detail)


def _runai_object(item: dict[str, Any]) -> dict[str, Any]:
    spec = item.get("spec") or {}
    gpu = {k: v for k, v in spec.items() if "gpu" in k.lower() and not isinstance(v, dict | list)}
    return {
        "name": dig(item, "metadata", "name"),
        "namespace": dig(item, "metadata", "namespace"),
        "parent": spec.get("department") or spec.get("parent") or spec.get("parentQueue"),
        "gpu": gpu,
        "resources_gpu": _resources(spec, "gpu") if dig(spec, "resources", "gpu") else None,
    }
