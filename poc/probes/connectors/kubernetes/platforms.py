"""Platforms on Kubernetes: OpenShift AI / Open Data Hub and Slinky (Slurm on
Kubernetes)."""

from typing import Any

from poc.probes.connectors.kubernetes.api import Api, Listing
from poc.probes.connectors.kubernetes.discovery import Groups, conditions_of, product
from poc.probes.connectors.kubernetes.values import dig


def _component_states(components: Any) -> dict[str, str | None]:
    """Each component's managementState; v3 nests parts of a component one level down
    ("dashboard" > "standard"), read as "dashboard/standard". The first operator v2 releases
    (v1alpha1) said `enabled: true/false` instead, and status.installedComponents of the v1
    releases before status.components maps names to true/false: read as Managed/Removed."""
    states: dict[str, str | None] = {}
    if not isinstance(components, dict):
        return states
    for name, component in components.items():
        if isinstance(component, bool):
            states[str(name)] = "Managed" if component else "Removed"
            continue
        if not isinstance(component, dict):
            states[str(name)] = None
            continue
        own = component.get("managementState")
        if not isinstance(own, str) and isinstance(component.get("enabled"), bool):
            own = "Managed" if component["enabled"] else "Removed"
        parts = {
            f"{name}/{part}": str(value["managementState"])
            for part, value in component.items()
            if isinstance(value, dict) and isinstance(value.get("managementState"), str)
        }
        if isinstance(own, str) or not parts:
            states[str(name)] = own if isinstance(own, str) else None
        states.update(parts)
    return states


def read_openshift_ai(api: Api, groups: Groups, result: dict[str, Any]) -> None:
    listing = groups.list(
        api,
        "datasciencecluster.opendatahub.io",
        "datascienceclusters",
        "DataScienceClusters",
        result,
    )
    clusters = []
    for item in listing.items:
        components = (
            dig(item, "status", "components")
            or dig(item, "status", "installedComponents")  # observed, in older releases
            or dig(item, "spec", "components")
            or {}
        )
        conditions = conditions_of(item)
        ready = next((c for c in conditions if c["type"] == "Ready"), None)
        phase = dig(item, "status", "phase")
        if not phase and ready:
            phase = "Ready" if ready["status"] == "True" else "Not Ready"
        clusters.append(
            {
                "name": dig(item, "metadata", "name"),
                "phase": phase,
                "phase_reported": dig(item, "status", "phase") is not None,
                "release": dig(item, "status", "release"),
                "components": _component_states(components),
                "conditions": conditions,
            }
        )
    result["openshift_ai"] = {"version": listing.version or None, "clusters": clusters}
    state = str(clusters[0]["phase"] or "unknown") if clusters else "no DataScienceCluster"
    managed = [n for c in clusters for n, s in c["components"].items() if s == "Managed"]
    detail = ", ".join(f"{c['name']}: {c['phase'] or 'unknown'}" for c in clusters) or state
    detail += f"; managed components: {', '.join(managed) or 'none'}" if clusters else ""
    release = clusters[0]["release"] if clusters else None
    name = "Red Hat OpenShift AI / Open Data Hub"
    if isinstance(release, dict) and release.get("name"):
        name = str(release["name"])
    product(result, "openshift-ai", name, listing, state, detail)


def read_slurm(groups: Groups, result: dict[str, Any]) -> None:
    # Slinky (SchedMD's slurm-operator) serves slinky.slurm.net; its objects are not read.
    group = "slinky.slurm.net"
    if groups.versions is None:
        listing = Listing("failed", reason=f"API discovery failed ({groups.reason})")
    elif group in groups.versions:
        listing = Listing("ok")
    else:
        listing = Listing("missing", reason=f"API group {group} is not served")
    versions = ", ".join((groups.versions or {}).get(group, []))
    detail = f"API group {group} served ({versions})"
    product(result, "slurm", "Slurm on Kubernetes (Slinky)", listing, "installed", detail)
