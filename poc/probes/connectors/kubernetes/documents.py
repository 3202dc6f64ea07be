"""Kubernetes objects a cluster's admin saved with kubectl (`kubectl get nodes -o yaml`, Volcano
and KAI queues, PodGroups, ...), read by the very functions that read them from a live API
server.

`_DocumentApi` is an API session that answers lists from the objects given instead of the
network, so `read_nodes`, `read_volcano` and the other readers of the live probe run
unchanged: the facts document is the one `probe_kubernetes` returns. What documents cannot
tell (the server's version, DCGM metrics) and every resource none of them holds is "could not
check: not among the uploaded documents", never "not installed": that a file lacks an object
says nothing about the cluster.

A Pod a scheduler left pending (`kubectl get pod -o yaml`, or `kubectl describe pod` text read
by module `describe`) stands for the controlled failure an admin ran by hand; it is judged as
the live one is: clean when the scheduler's refusal names the shortage of GPUs. No Django here.
"""

from dataclasses import dataclass, field
from typing import Any

from poc.probes.connectors.kubernetes.api import Api, Listing, Reply
from poc.probes.connectors.kubernetes.discovery import Groups, cannot
from poc.probes.connectors.kubernetes.failure import (
    REFUSAL_REASONS,
    gpu_shortage,
    scheduled_on,
    unschedulable_message,
)
from poc.probes.connectors.kubernetes.probe import new_facts, read_cluster
from poc.probes.connectors.kubernetes.schedulers import (
    VOLCANO_BEFORE_1,
)
from poc.probes.connectors.kubernetes.values import GPU, as_int, dig

NOT_GIVEN = "not among the uploaded documents"
MAX_NOTES = 20  # pods named as no evidence of a refusal; the rest are counted
VOLCANO = "scheduling.volcano.sh"

# The objects read, by (API group, kind), with their resource's plural ("" is the core group).
KINDS: dict[tuple[str, str], str] = {
    ("", "Node"): "nodes",
    ("", "ResourceQuota"): "resourcequotas",
    ("", "Pod"): "pods",
    ("apps", "DaemonSet"): "daemonsets",
    ("nvidia.com", "ClusterPolicy"): "clusterpolicies",
    ("nvidia.com", "NVIDIADriver"): "nvidiadrivers",
    (VOLCANO, "Queue"): "queues",
    (VOLCANO, "PodGroup"): "podgroups",
    (VOLCANO_BEFORE_1, "Queue"): "queues",
    (VOLCANO_BEFORE_1, "PodGroup"): "podgroups",
    ("scheduling.run.ai", "Queue"): "queues",
    ("scheduling.run.ai", "Department"): "departments",
    ("run.ai", "Project"): "projects",
    ("datasciencecluster.opendatahub.io", "DataScienceCluster"): "datascienceclusters",
}


def split_api_version(api_version: Any) -> tuple[str, str]:
    """(group, version) of an apiVersion: "v1" is the core group ""."""
    group, _, version = str(api_version or "").rpartition("/")
    return group, version


@dataclass
class KubeObject:
    """One object and the document it came from."""

    document: str
    data: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        return split_api_version(self.data.get("apiVersion"))[0], str(self.data.get("kind"))


@dataclass
class PodEvidence:
    """A pod as a document shows it (an object, or what `kubectl describe pod` printed) and the
    events shown with it: (reason, message)."""

    document: str
    pod: dict[str, Any]
    events: list[tuple[str, str]] = field(default_factory=list)


class _DocumentApi(Api):
    """An API session that lists the objects given instead of asking a server."""

    def __init__(self, objects: list[KubeObject]) -> None:  # no network: no session to open
        self.where = "uploaded documents"
        self.tls = False
        self.secrets: list[str] = []
        self.raw: list[dict[str, Any]] = []
        self.versions: dict[str, list[str]] = {}
        self.resources: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for obj in objects:
            group, version = split_api_version(obj.data.get("apiVersion"))
            plural = KINDS[obj.key]
            self.resources.setdefault((group, plural), []).append(obj.data)
            known = self.versions.setdefault(group, [])
            if version not in known:
                known.append(version)

    def close(self) -> None:
        pass

    def request(self, method: str, path: str, **kwargs: Any) -> Reply:
        return Reply(404, "", error=NOT_GIVEN)

    def list(self, path: str, query: dict[str, str] | None = None) -> Listing:
        """The objects of `/api/v1/[namespaces/<ns>/]<plural>` or
        `/apis/<group>/<version>/[namespaces/<ns>/]<plural>`, of any version given."""
        parts = [p for p in path.split("/") if p]
        group = "" if parts[:1] == ["api"] else parts[1] if len(parts) > 1 else ""
        rest = parts[2:]
        namespace = rest[1] if len(rest) >= 3 and rest[0] == "namespaces" else None
        plural = rest[-1] if rest else ""
        items = self.resources.get((group, plural))
        if items is None:
            return Listing("failed", reason=NOT_GIVEN)
        if namespace is not None:
            items = [i for i in items if dig(i, "metadata", "namespace") == namespace]
        return Listing("ok", list(items))


class _DocumentGroups(Groups):
    """The API groups of the objects given. A resource none of them holds could not be
    checked; Volcano's group is "missing" only where objects of Volcano before 1.0 (its
    incubator group) were given, so that the live reader turns to those."""

    def __init__(self, api: _DocumentApi) -> None:
        super().__init__(dict(api.versions))
        self.given = set(api.resources)

    def list(self, api: Api, group: str, plural: str, what: str, result: dict[str, Any]) -> Listing:
        if (group, plural) in self.given:
            version = (self.versions or {})[group][0]
            listing = api.list(f"/apis/{group}/{version}/{plural}")
            listing.version = version
            return listing
        if group == VOLCANO and (VOLCANO_BEFORE_1, plural) in self.given:
            return Listing("missing", reason=f"API group {VOLCANO} is not served")
        cannot(result, what, NOT_GIVEN)
        return Listing("failed", reason=NOT_GIVEN)


def facts_from_objects(
    objects: list[KubeObject], pods: list[PodEvidence] | None = None
) -> dict[str, Any]:
    """The facts document `probe_kubernetes` returns, read from the objects given (Pods are
    read as evidence of a refusal: `controlled_failures`, when any is given)."""
    readable = [o for o in objects if o.key != ("", "Pod")]
    evidence = [PodEvidence(o.document, o.data) for o in objects if o.key == ("", "Pod")]
    evidence += pods or []
    api = _DocumentApi(readable)
    groups = _DocumentGroups(api)
    result = new_facts(
        server=api.where,
        tls=None,
        raw=[],
        api_groups={name: versions for name, versions in sorted(api.versions.items())},
    )
    cannot(result, "server version (GET /version)", NOT_GIVEN)
    read_cluster(api, groups, result, slinky=False)
    documents = {
        str(dig(o.data, "metadata", "name")): o.document for o in objects if o.key == ("", "Node")
    }
    for node in result["gpu_nodes"]:
        node["sources"] = [f"kubernetes: Node object ({documents.get(node['host'], 'uploaded')})"]
    if evidence:
        scenarios, notes = pod_scenarios(evidence)
        result["controlled_failures"] = {"scenarios": scenarios, "notes": notes}
    return result


def _gpus_asked(pod: dict[str, Any]) -> int | None:
    """The GPUs a pod's containers ask for; None where the document shows no resources."""
    containers = dig(pod, "spec", "containers")
    if not isinstance(containers, list):
        return None
    total = 0
    for container in containers:
        resources = dig(container, "resources") or {}
        asked = dig(resources, "requests", GPU) or dig(resources, "limits", GPU)
        if asked is not None:
            total += as_int(str(asked)) or 0
    return total


def pod_scenarios(evidence: list[PodEvidence]) -> tuple[list[dict[str, Any]], list[str]]:
    """The controlled failure "more GPUs than any node" as each pending pod shows it, judged as
    the live one is, clean refusals first; and notes on the pods that are no such evidence."""
    scenarios: list[dict[str, Any]] = []
    notes: list[str] = []
    for item in evidence:
        pod = item.pod
        name = "/".join(
            str(part)
            for part in (dig(pod, "metadata", "namespace"), dig(pod, "metadata", "name"))
            if part
        )
        label = f"pod {name}" if name else "the pod"
        asked = _gpus_asked(pod)
        if asked == 0:
            notes.append(f"{item.document}: {label} asks for no {GPU}: not read as a refusal")
            continue
        refusals = [message for reason, message in item.events if reason in REFUSAL_REASONS]
        condition = unschedulable_message(pod)
        refusals += [condition] if condition else []
        node = scheduled_on(pod)
        if node and not refusals:
            notes.append(f"{item.document}: {label} was scheduled on {node}: not a refusal")
            continue
        if refusals:
            reason = next((m for m in refusals if gpu_shortage(m)), refusals[0])
        else:
            reason = "no FailedScheduling or Unschedulable event is shown with the pod"
        scenarios.append(
            {
                "name": "more_gpus_than_any_node",
                "clean": bool(refusals) and gpu_shortage(reason),
                "state": "pending",
                "reason": reason,
                "seconds": None,
                "gpus_requested": asked,
                "created": [],
                "deleted": [],
                "note": f"{label}, read from {item.document} (not created by the workbench)",
            }
        )
    scenarios.sort(key=lambda s: not s["clean"])
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES:] = [f"and {len(notes) - MAX_NOTES} more pods that are no refusal"]
    return scenarios, notes
