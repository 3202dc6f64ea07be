"""The NVIDIA GPU Operator: its ClusterPolicy, NVIDIADriver resources and operand
DaemonSets."""

from typing import Any
from urllib.parse import quote

from poc.probes.connectors.kubernetes.api import Api, Listing
from poc.probes.connectors.kubernetes.discovery import Groups, cannot, conditions_of, product
from poc.probes.connectors.kubernetes.values import DEFAULT_OPERATOR_NAMESPACE, as_bool, as_int, dig

# GPU Operator operands, by DaemonSet name prefix (longest first, so nvidia-dcgm-exporter is not
# taken for nvidia-dcgm).
OPERANDS = (
    "nvidia-sandbox-device-plugin-daemonset",
    "nvidia-device-plugin-mps-control-daemon",
    "nvidia-container-toolkit-daemonset",
    "nvidia-vgpu-manager-daemonset",
    "nvidia-device-plugin-daemonset",
    "nvidia-node-status-exporter",  # OpenShift's
    "nvidia-vgpu-device-manager",
    "nvidia-operator-validator",
    "nvidia-sandbox-validator",
    "nvidia-driver-daemonset",
    "gpu-feature-discovery",
    "nvidia-dcgm-exporter",
    "nvidia-vfio-manager",
    "nvidia-kata-manager",
    "nvidia-mig-manager",
    "nvidia-cc-manager",
    # Drivers managed through NVIDIADriver resources (spec.driver.useNvidiaDriverCRD): one
    # DaemonSet per OS and driver, "nvidia-gpu-driver-ubuntu22.04-<hash>".
    "nvidia-gpu-driver",
    "nvidia-dcgm",  # the standalone host engine of older releases
)


def read_gpu_operator(api: Api, groups: Groups, result: dict[str, Any]) -> None:
    listing = groups.list(
        api, "nvidia.com", "clusterpolicies", "GPU Operator ClusterPolicy", result
    )
    policies = [
        {
            "name": dig(item, "metadata", "name"),
            "state": dig(item, "status", "state"),
            "namespace": dig(item, "status", "namespace"),
            "use_nvidia_driver_crd": as_bool(dig(item, "spec", "driver", "useNvidiaDriverCRD")),
            "conditions": conditions_of(item),
        }
        for item in listing.items
    ]
    operator: dict[str, Any] = {"present": None, "cluster_policies": policies, "operands": []}
    result["gpu_operator"] = operator
    drivers = _read_nvidia_drivers(api, groups, result)
    operator["nvidia_drivers"] = drivers
    if listing.state == "ok" and not policies:
        listing = Listing("missing", reason="the ClusterPolicy resource exists but holds no policy")
    operator["present"] = {"ok": True, "missing": False}.get(listing.state)
    if listing.state != "ok":
        product(result, "kubernetes-gpu-operator", "NVIDIA GPU Operator", listing, "", "")
        return
    # The operator reconciles one ClusterPolicy and marks any other "ignored": the one it
    # reconciles tells the state, whatever order the API server lists them in.
    active = next((p for p in policies if p["state"] != "ignored"), policies[0])
    operator["active_policy"] = active["name"]
    operator["use_nvidia_driver_crd"] = active["use_nvidia_driver_crd"]
    namespace = active["namespace"] or next(
        (p["namespace"] for p in policies if p["namespace"]), None
    )
    namespace = namespace or DEFAULT_OPERATOR_NAMESPACE
    operator["namespace"] = namespace
    operands = _operand_daemonsets(api, namespace, result)
    found_in = sorted({d["namespace"] for d in operands if d.get("namespace")})
    if found_in and namespace not in found_in:
        # Older operators (v1.x) name no namespace and run operands in gpu-operator-resources.
        operator["namespace"] = found_in[0]
    operator["operands"] = operands
    # A DaemonSet no node is selected for is idle, not failing: the operator labels only
    # MIG-capable nodes for the MIG manager, and none for the driver where it is pre-installed.
    idle = [d["name"] for d in operands if d["state"] == "none scheduled"]
    scheduled = [d for d in operands if d["state"] != "none scheduled"]
    not_ready = [d["name"] for d in scheduled if d["state"] != "ready"]
    operator["operands_not_ready"] = not_ready
    operator["operands_idle"] = idle
    state = str(active["state"] or "unknown")
    detail = f"ClusterPolicy {active['name']}: {state}"
    ignored = [str(p["name"]) for p in policies if p["state"] == "ignored"]
    if ignored:
        detail += f" (duplicates ignored by the operator: {', '.join(ignored)})"
    if scheduled:
        ready = len(scheduled) - len(not_ready)
        detail += f"; operand DaemonSets ready {ready}/{len(scheduled)}"
        if not_ready:
            detail += " (not ready: " + ", ".join(not_ready) + ")"
    if idle:
        detail += "; on no node: " + ", ".join(idle)
    drivers_text = _nvidia_drivers_text(drivers, active["use_nvidia_driver_crd"])
    if drivers_text:
        detail += "; " + drivers_text
    product(result, "kubernetes-gpu-operator", "NVIDIA GPU Operator", listing, state, detail)


def _read_nvidia_drivers(api: Api, groups: Groups, result: dict[str, Any]) -> dict[str, Any]:
    """The GPU Operator's NVIDIADriver resources (cluster-scoped; the operator deploys drivers
    from them instead of from the ClusterPolicy when its spec.driver.useNvidiaDriverCRD is
    true): name, status.state ("ready", "notReady") and the Ready / Error conditions."""
    listing = groups.list(
        api, "nvidia.com", "nvidiadrivers", "GPU Operator NVIDIADriver resources", result
    )
    present = {"ok": True, "missing": False}.get(listing.state)
    found: dict[str, Any] = {
        "present": present,
        "state": {"ok": "read", "missing": "not installed"}.get(listing.state, "could not check"),
        "reason": listing.reason,
        "version": listing.version,
        "drivers": [],
    }
    for item in listing.items:
        conditions = conditions_of(item)
        by_type = {c["type"]: c for c in conditions if c.get("type") in ("Ready", "Error")}
        ready, error = by_type.get("Ready") or {}, by_type.get("Error") or {}
        found["drivers"].append(
            {
                "name": dig(item, "metadata", "name"),
                "state": dig(item, "status", "state"),
                "driver_type": dig(item, "spec", "driverType"),
                "version": dig(item, "spec", "version"),
                "ready": ready.get("status"),
                "ready_reason": ready.get("reason"),
                "error": error.get("status"),
                "error_reason": error.get("reason"),
                "error_message": error.get("message") if error.get("status") == "True" else None,
                "conditions": conditions,
            }
        )
    return found


def _nvidia_drivers_text(drivers: dict[str, Any], use_crd: bool | None) -> str:
    """The NVIDIADriver part of the GPU Operator's detail; empty where there is nothing to say
    (the resource not served, or served but unused)."""
    if drivers["present"] is None:
        return f"NVIDIADriver resources: could not check ({drivers['reason']})"
    if not drivers["drivers"]:
        if not use_crd:
            return ""
        if drivers["present"] is False:
            return (
                "spec.driver.useNvidiaDriverCRD is set but NVIDIADriver resources are not "
                f"served ({drivers['reason']})"
            )
        return "spec.driver.useNvidiaDriverCRD is set but no NVIDIADriver resource exists"
    parts = []
    for driver in drivers["drivers"]:
        said = []
        if driver["ready"] is not None:
            said.append(f"Ready {driver['ready']}: {driver['ready_reason'] or 'no reason'}")
        if driver["error"] == "True":
            said.append(f"Error: {driver['error_reason'] or 'no reason'}")
        text = f"{driver['name']} {driver['state'] or 'without a state'}"
        parts.append(text + (f" ({'; '.join(said)})" if said else ""))
    return "NVIDIADriver " + ", ".join(parts)


def _operand_daemonsets(api: Api, namespace: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    ns = quote(namespace, safe="")
    listing = api.list(f"/apis/apps/v1/namespaces/{ns}/daemonsets")
    operands = [d for d in (_daemonset(item) for item in listing.items) if d]
    if listing.state == "ok" and not operands:
        # The operator may live elsewhere than the policy says: look by name in all namespaces.
        listing = api.list("/apis/apps/v1/daemonsets")
        operands = [d for d in (_daemonset(item) for item in listing.items) if d]
    if listing.state == "failed":
        cannot(result, f"GPU Operator DaemonSets (namespace {namespace})", listing.reason)
    return operands


def _daemonset(item: dict[str, Any]) -> dict[str, Any] | None:
    name = str(dig(item, "metadata", "name") or "")
    operand = next((prefix for prefix in OPERANDS if name.startswith(prefix)), None)
    if operand is None:
        return None
    status = item.get("status") or {}
    desired = as_int(status.get("desiredNumberScheduled"))
    ready = as_int(status.get("numberReady"))
    if desired is None or ready is None:
        state = "unknown"
    elif desired == 0:
        state = "none scheduled"
    else:
        state = "ready" if ready >= desired else "not ready"
    return {
        "name": name,
        "namespace": dig(item, "metadata", "namespace"),
        "operand": operand,
        "desired": desired,
        "ready": ready,
        "available": as_int(status.get("numberAvailable")),
        "updated": as_int(status.get("updatedNumberScheduled")),
        "state": state,
    }
