"""Nodes: GPU resources, MIG devices and the labels of NVIDIA's GPU feature discovery
or of the cloud provider, as node facts."""

from typing import Any

from poc.probes.connectors.kubernetes.api import Api
from poc.probes.connectors.kubernetes.discovery import cannot
from poc.probes.connectors.kubernetes.mig import MIG_RESOURCE, mig_profiles, mig_warnings
from poc.probes.connectors.kubernetes.values import GPU, as_bool, as_int
from poc.probes.facts import MigDevice, NodeFacts, new_gpu, new_node
from poc.probes.parsers.smi_list import mig_profiles as smi_mig_profiles

NODES_SOURCE = "kubernetes: GET /api/v1/nodes"
GPU_SHARED = "nvidia.com/gpu.shared"

# Labels a managed cluster puts on GPU nodes itself, read where GPU feature discovery has not
# labelled the node (GFD's nvidia.com/gpu.product always wins). Model names, by label, in order:
# GKE's accelerator type ("nvidia-tesla-a100", "nvidia-h100-80gb", "nvidia-l4"), EKS Auto Mode's
# and Karpenter's (on AWS) GPU name ("t4", "l40s"). AKS's kubernetes.azure.com/accelerator says
# "nvidia", not a model; the k8s.amazonaws.com/accelerator label of EKS node groups is set by
# hand (often "true"): neither is read as a model.
MODEL_LABELS = (
    "cloud.google.com/gke-accelerator",
    "eks.amazonaws.com/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-name",
)
GKE_PARTITION = "cloud.google.com/gke-gpu-partition-size"  # MIG profile of every GPU ("1g.5gb")
GKE_SHARING = "cloud.google.com/gke-gpu-sharing-strategy"  # time-sharing / TIME_SHARING, mps / MPS
GKE_SHARED_CLIENTS = "cloud.google.com/gke-max-shared-clients-per-gpu"
# Karpenter's and EKS Auto Mode's GPU count of the instance and memory of one GPU in MiB
# ("karpenter.k8s.aws/instance-gpu-count": "1", "...-gpu-memory": "22888" on a g6 with an L4),
# read where feature discovery gives no gpu.count / gpu.memory.
COUNT_LABELS = ("eks.amazonaws.com/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-count")
MEMORY_LABELS = ("eks.amazonaws.com/instance-gpu-memory", "karpenter.k8s.aws/instance-gpu-memory")
CLOUD_GPU_LABELS = (
    *MODEL_LABELS,
    *COUNT_LABELS,
    *MEMORY_LABELS,
    GKE_PARTITION,
    GKE_SHARING,
    GKE_SHARED_CLIENTS,
)


def _node_facts(node: dict[str, Any]) -> dict[str, Any]:
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    capacity = status.get("capacity") or {}
    allocatable = status.get("allocatable") or {}

    def pair(resource: str) -> dict[str, int | None] | None:
        if resource not in capacity and resource not in allocatable:
            return None
        return {
            "capacity": as_int(capacity.get(resource)),
            "allocatable": as_int(allocatable.get(resource)),
        }

    mig = {
        resource: pair(resource)
        for resource in sorted(set(capacity) | set(allocatable))
        if str(resource).startswith(MIG_RESOURCE)
    }
    profiles = mig_profiles(labels, capacity, allocatable)
    ready: bool | None = None
    ready_status = ready_reason = None
    for condition in status.get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            ready_status = condition.get("status")
            ready = ready_status == "True" if ready_status in ("True", "False", "Unknown") else None
            ready_reason = condition.get("reason")

    def label(name: str) -> str | None:
        value = labels.get("nvidia.com/" + name)
        return value if value not in (None, "") else None

    driver = label("cuda.driver-version.full") or _dotted(
        label("cuda.driver-version.major"),
        label("cuda.driver-version.minor"),
        label("cuda.driver-version.revision"),
    )
    driver = driver or _dotted(
        label("cuda.driver.major"), label("cuda.driver.minor"), label("cuda.driver.rev")
    )
    cuda = label("cuda.runtime-version.full") or _dotted(
        label("cuda.runtime-version.major"), label("cuda.runtime-version.minor")
    )
    cuda = cuda or _dotted(label("cuda.runtime.major"), label("cuda.runtime.minor"))
    major, minor = as_int(label("gpu.compute.major")), as_int(label("gpu.compute.minor"))
    gfd: dict[str, Any] = {
        "product": label("gpu.product"),
        "count": as_int(label("gpu.count")),
        "memory_mib": as_int(label("gpu.memory")),
        "family": label("gpu.family"),
        "compute_capability": f"{major}.{minor}"
        if major is not None and minor is not None
        else None,
        "driver_version": driver,
        "cuda_version": cuda,
        "replicas": as_int(label("gpu.replicas")),
        "sharing_strategy": label("gpu.sharing-strategy"),
        "mig_strategy": label("mig.strategy"),
        "mig_capable": as_bool(label("mig.capable")),
        "mig_config": label("mig.config"),
        "mig_config_state": label("mig.config.state"),
        "gpu_present": as_bool(label("gpu.present")),
        "mig_memory_mib": {
            resource: as_int(label(resource.removeprefix("nvidia.com/") + ".memory"))
            for resource in mig
        },
    }
    cloud = {key: labels[key] for key in CLOUD_GPU_LABELS if labels.get(key)}
    model_label = "nvidia.com/gpu.product" if gfd["product"] else None
    model_label = model_label or next((key for key in MODEL_LABELS if key in cloud), None)
    gpu, shared = pair(GPU), pair(GPU_SHARED)
    advertised = [gpu, shared, *mig.values()]
    gpu_node = (
        any(entry and (entry["capacity"] or 0) > 0 for entry in advertised)
        or bool(gfd["gpu_present"])
        or (gfd["count"] or 0) > 0
        or any(entry["count"] > 0 for entry in profiles.values())
    )
    info = status.get("nodeInfo") or {}
    taints = (node.get("spec") or {}).get("taints") or []
    return {
        "name": meta.get("name"),
        "ready": ready,
        "ready_status": ready_status,
        "ready_reason": ready_reason,
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
        "gpu_node": gpu_node,
        "gpu": gpu,
        "gpu_shared": shared,
        "mig": mig,
        # Per MIG profile: capacity, allocatable, GFD's count label and the devices counted
        # (nodes read from allocatable and the labels, never from capacity alone).
        "mig_profiles": profiles,
        "gfd": gfd,
        # The GPU model and the label it was read from: GFD's, else the cloud provider's.
        "model": labels[model_label] if model_label else None,
        "model_label": model_label,
        "cloud_labels": cloud,
        "labels": {k: v for k, v in sorted(labels.items()) if k.startswith("nvidia.com/")},
        "taints": [t for t in taints if isinstance(t, dict) and "nvidia" in str(t.get("key"))],
        "kubelet_version": info.get("kubeletVersion"),
        "container_runtime": info.get("containerRuntimeVersion"),
        "os_image": info.get("osImage"),
        "kernel_version": info.get("kernelVersion"),
    }


def _dotted(*parts: str | None) -> str | None:
    return ".".join(p for p in parts if p) if parts and all(parts) else None


def _gpu_node_document(facts: dict[str, Any]) -> NodeFacts:
    """The node's GPU fact document: what the API tells, everything else unknown (None)."""
    gfd = facts["gfd"]
    node = new_node(
        host=facts["name"],
        driver_version=gfd["driver_version"],
        cuda_version=gfd["cuda_version"],
        sources=[NODES_SOURCE],
        warnings=[],
    )
    warnings: list[str] = node["warnings"]
    product = gfd["product"]
    # Without feature discovery, the model the cloud provider labelled the node with (GKE:
    # "nvidia-tesla-a100"); facts["model_label"] names the label.
    name = product.removesuffix("-SHARED") if product else facts["model"]
    cloud = facts["cloud_labels"]
    capacity = (facts["gpu"] or {}).get("capacity")
    shared = (facts["gpu_shared"] or {}).get("capacity")
    # MIG devices from allocatable and GFD's labels: capacity may keep a profile that no
    # longer exists, and a node GFD labelled before the device plugin advertised anything
    # counts too.
    mig_total = sum(entry["count"] for entry in facts["mig_profiles"].values())
    labelled, replicas = gfd["count"], gfd["replicas"]
    count_label = "gpu.count label"
    if labelled is None:
        count_key = next((key for key in COUNT_LABELS if as_int(cloud.get(key)) is not None), None)
        if count_key:
            labelled, count_label = as_int(cloud[count_key]), f"{count_key} label"
    memory = gfd["memory_mib"]
    if memory is None:
        memory = next((as_int(cloud[k]) for k in MEMORY_LABELS if as_int(cloud.get(k))), None)
    strategy = cloud.get(GKE_SHARING, "").lower().replace("_", "-")
    if replicas is None and strategy in ("", "time-sharing", "mps"):
        # GKE's own time-sharing and MPS both advertise each GPU once per client it may take
        # (a pod asks nvidia.com/gpu: 1 for one client's share).
        replicas = as_int(cloud.get(GKE_SHARED_CLIENTS))
    mps = strategy == "mps" or str(gfd["sharing_strategy"] or "").lower() == "mps"
    all_mig = False
    count: int | None
    if gfd["mig_strategy"] == "single" and product and "-MIG-" in product:
        warnings.append(
            f"MIG single strategy: nvidia.com/gpu counts MIG devices ({capacity} × {product}); "
            "the number of physical GPUs is not reported"
        )
        count = None
    elif cloud.get(GKE_PARTITION) and not product:
        # GKE's MIG partitions: each is advertised as one nvidia.com/gpu.
        partition = cloud[GKE_PARTITION]
        warnings.append(
            f"GKE MIG partitions ({GKE_PARTITION}={partition}): nvidia.com/gpu counts MIG "
            f"devices ({capacity} × {partition}); the number of physical GPUs is not reported"
        )
        count = None
    elif not capacity and mig_total:
        all_mig = True
        count = labelled
        if count is None:
            warnings.append("MIG mixed strategy without a gpu.count label: GPU count unknown")
    elif capacity or shared:
        advertised = capacity or shared or 0
        sharing = replicas is not None and replicas > 1
        if labelled is not None:
            count = labelled
            if labelled != advertised and not sharing and not mig_total:
                warnings.append(
                    f"the node advertises {advertised} {GPU if capacity else GPU_SHARED} "
                    f"but its {count_label} says {labelled}"
                )
        elif sharing and replicas and advertised % replicas == 0:
            count = advertised // replicas
        else:
            count = advertised
        if mig_total and capacity:
            # Mixed strategy with some GPUs split: nvidia.com/gpu counts the whole ones only.
            if labelled is not None and labelled > capacity:
                warnings.append(
                    f"{labelled - capacity} of {labelled} GPUs are in MIG mode ({mig_total} MIG "
                    "devices advertised); the node object does not say which"
                )
            elif labelled is None:
                warnings.append(
                    f"the node also advertises {mig_total} MIG devices of GPUs in MIG mode, "
                    "which are not counted here (no gpu.count label)"
                )
        if sharing:
            how = "MPS" if mps else "time-slicing"
            warnings.append(f"{how}: each GPU is advertised {replicas} times")
        # Capacity counts every device the plugin found, allocatable only the healthy ones
        # (the device plugin withholds a GPU after a critical Xid or double-bit ECC error).
        usable = (facts["gpu"] if capacity else facts["gpu_shared"] or {}).get("allocatable")
        if usable is not None and usable < advertised:
            warnings.append(
                f"{advertised - usable} of {advertised} {GPU if capacity else GPU_SHARED} "
                "are not allocatable: the device plugin withholds devices it finds unhealthy"
            )
    else:
        count = labelled
        if count:
            warnings.append("GPUs are labelled but no nvidia.com/gpu resource is advertised")
    warnings.extend(mig_warnings(facts["mig_profiles"], gfd))
    for index in range(count or 0):
        gpu = new_gpu(
            index=index,
            name=name,
            memory_total_mib=memory,
            compute_capability=gfd["compute_capability"],
        )
        if all_mig:
            gpu["mig_mode_current"] = True
            if count == 1:
                gpu["mig_devices"] = _mig_devices(facts)
        node["gpus"].append(gpu)
    return node


def _mig_devices(facts: dict[str, Any]) -> list[MigDevice]:
    devices: list[MigDevice] = []
    for name, entry in facts["mig_profiles"].items():
        # The device plugin names a compute instance smaller than its GPU instance by both
        # ("nvidia.com/mig-1c.3g.40gb"): the GPU instance profile is the part after "1c.".
        profile, own = smi_mig_profiles(name)
        for _ in range(entry["count"]):
            devices.append(
                MigDevice(
                    gpu_instance_id=None,
                    compute_instance_id=None,
                    profile=profile,
                    profile_id=None,
                    memory_total_mib=entry["memory_mib"],
                    uuid=None,
                    compute_profile=own,
                )
            )
    return devices


def read_nodes(api: Api, result: dict[str, Any]) -> None:
    listing = api.list("/api/v1/nodes")
    if listing.state != "ok":
        cannot(result, "nodes (GET /api/v1/nodes)", listing.reason)
        return
    for item in listing.items:
        facts = _node_facts(item)
        result["nodes"].append(facts)
        if facts["gpu_node"]:
            result["gpu_nodes"].append(_gpu_node_document(facts))
