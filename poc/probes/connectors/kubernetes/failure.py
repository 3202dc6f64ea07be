"""The controlled failure (creates objects, opt-in): a Job over any node's GPUs and a
Pod over the namespace's GPU quota, each waited on until refused and then deleted;
the manifests beforehand (`planned_objects`) and the sweep of leftovers (`sweep`)."""

import re
import time
from typing import Any
from urllib.parse import quote

from poc.probes.connectors.kubernetes.api import Api
from poc.probes.connectors.kubernetes.quotas import quota_selects_probe_pod
from poc.probes.connectors.kubernetes.target import ConnectorError, KubeTarget, Resolve
from poc.probes.connectors.kubernetes.values import GPU, as_int, dig

POLL_SECONDS = 1.0  # how often over_quota looks at its pod
QUOTA_GPU = "requests.nvidia.com/gpu"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: the pods must not be scheduled

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_LABEL_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


def _split_label(label: str) -> tuple[str, str]:
    key, sep, value = label.partition("=")
    prefix, slash, name = key.rpartition("/")
    valid = (
        sep
        and _LABEL_NAME.fullmatch(name)
        and (not slash or (len(prefix) <= 253 and _LABEL_PREFIX.fullmatch(prefix)))
        and (value == "" or _LABEL_NAME.fullmatch(value))
    )
    if not valid:
        raise ConnectorError(f"{label!r} is not a Kubernetes label key=value")
    return key, value


def _check_namespace(namespace: str) -> None:
    if not _DNS_LABEL.fullmatch(namespace or ""):
        raise ConnectorError(f"{namespace!r} is not a namespace name")


def _names(value: str) -> tuple[str, str]:
    slug = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")[:40].strip("-") or "probe"
    return f"workbench-gpus-{slug}", f"workbench-quota-{slug}"


def _pod_spec(gpus: int) -> dict[str, Any]:
    return {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": 0,
        # GPU nodes are tainted in many ways (nvidia.com/gpu, AKS's sku=gpu, a pool's own key):
        # tolerate every NoSchedule taint, so that only the GPU count keeps the pod out and the
        # scheduler's refusal names the shortage. The pod is not meant to run: it asks for more
        # GPUs than any node has, or goes over a quota. NoExecute taints (a node not ready or
        # unreachable) stay untolerated.
        "tolerations": [{"operator": "Exists", "effect": "NoSchedule"}],
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65535,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "probe",
                "image": PAUSE_IMAGE,
                "resources": {
                    "requests": {"cpu": "10m", "memory": "16Mi", GPU: str(gpus)},
                    "limits": {"cpu": "100m", "memory": "32Mi", GPU: str(gpus)},
                },
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
    }


def planned_objects(
    namespace: str, label: str, gpus: int, quota_gpus: int | None = None
) -> list[dict[str, Any]]:
    """The manifests `over_quota` creates, exactly: a Job whose pod asks for `gpus` GPUs, and,
    when `quota_gpus` is given (the namespace's GPU quota left, plus one), a Pod asking that
    many. Every object carries `label` ("key=value")."""
    _check_namespace(namespace)
    key, value = _split_label(label)
    if gpus < 1 or (quota_gpus is not None and quota_gpus < 1):
        raise ConnectorError("the GPU count to ask for must be at least 1")
    job_name, pod_name = _names(value)
    labels = {key: value}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name, "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 900,  # the cluster ends it even if the deletion is lost
            "ttlSecondsAfterFinished": 60,
            "template": {
                "metadata": {"labels": labels},
                "spec": _pod_spec(gpus),
            },
        },
    }
    objects: list[dict[str, Any]] = [job]
    if quota_gpus is not None:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": pod_name, "namespace": namespace, "labels": labels},
                "spec": _pod_spec(quota_gpus),
            }
        )
    return objects


def _max_allocatable(api: Api) -> int:
    listing = api.list("/api/v1/nodes")
    if listing.state != "ok":
        raise ConnectorError(
            f"could not read the nodes to size the request (give the GPU count): {listing.reason}"
        )
    counts = [as_int(dig(n, "status", "allocatable", GPU)) or 0 for n in listing.items]
    return max(counts, default=0)


def _gpu_quota(
    api: Api, namespace: str, skipped: list[str] | None = None
) -> tuple[str, int, int] | None:
    """The namespace's tightest quota on requests.nvidia.com/gpu that applies to the probe's
    Pod: (name, hard, used). Quotas whose scopes do not select it are named in `skipped`."""
    listing = api.list(f"/api/v1/namespaces/{quote(namespace, safe='')}/resourcequotas")
    if listing.state == "failed":
        raise ConnectorError(f"could not read the namespace's ResourceQuotas: {listing.reason}")
    found = []
    for item in listing.items:
        hard = as_int(dig(item, "spec", "hard", QUOTA_GPU))
        if hard is not None and not quota_selects_probe_pod(item):
            if skipped is not None:
                skipped.append(str(dig(item, "metadata", "name")))
        elif hard is not None:
            used = as_int(dig(item, "status", "used", QUOTA_GPU)) or 0
            found.append((str(dig(item, "metadata", "name")), hard, used))
    return min(found, key=lambda q: q[1] - q[2], default=None)


def _delete(api: Api, path: str, what: str, *, background: bool = False) -> tuple[bool, str]:
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
    if background:
        body["propagationPolicy"] = "Background"  # the Job's pods go too (API default: orphan)
    reply = api.request("DELETE", path, body=body, fatal=False)
    if reply.ok or reply.status == 404:
        return True, ""
    return False, f"could not delete {what}: {reply.error}"


def _remove_labelled(api: Api, namespace: str, selector: str) -> tuple[list[str], list[str]]:
    """Delete the Jobs and Pods carrying the label; (deleted, problems)."""
    ns = quote(namespace, safe="")
    deleted: list[str] = []
    problems: list[str] = []
    for kind, base, background in (
        ("job", f"/apis/batch/v1/namespaces/{ns}/jobs", True),
        ("pod", f"/api/v1/namespaces/{ns}/pods", False),
    ):
        listing = api.list(base, {"labelSelector": selector})
        if listing.state == "failed":
            problems.append(f"could not list {kind}s to delete: {listing.reason}")
            continue
        for item in listing.items:
            name = str(dig(item, "metadata", "name") or "")
            if not name:
                continue
            what = f"{kind}/{namespace}/{name}"
            done, problem = _delete(
                api, f"{base}/{quote(name, safe='')}", what, background=background
            )
            if done:
                deleted.append(what)
            else:
                problems.append(problem)
    return deleted, problems


# The reasons of the event a scheduler writes on a pod it cannot place: kube-scheduler and
# Volcano write FailedScheduling, the KAI scheduler Unschedulable.
REFUSAL_REASONS = ("FailedScheduling", "Unschedulable")
# The KAI scheduler's words for a shortage of GPUs ("No nodes with enough resources were found: 2
# node(s) didn't have enough resources: GPUs."), where kube-scheduler writes "Insufficient
# nvidia.com/gpu".
_KAI_GPU_SHORTAGE = re.compile(r"didn't have enough resources?: GPUs\b", re.IGNORECASE)


def gpu_shortage(message: str) -> bool:
    """Whether a scheduler's refusal names the shortage of GPUs (kube-scheduler or KAI)."""
    return f"insufficient {GPU}" in message.lower() or bool(_KAI_GPU_SHORTAGE.search(message))


def _event_messages(api: Api, namespace: str, name: str, *reasons: str) -> list[str]:
    """The messages of the events on object `name` whose reason is one of `reasons`, in the
    order the API server lists them."""
    reply = api.request(
        "GET",
        f"/api/v1/namespaces/{quote(namespace, safe='')}/events",
        query={"fieldSelector": f"involvedObject.name={name}"},
        fatal=False,
    )
    items = reply.data.get("items") if reply.ok else None
    return [
        str(event.get("message") or event.get("reason"))
        for event in (items if isinstance(items, list) else [])
        if isinstance(event, dict) and event.get("reason") in reasons
    ]


def _event_message(api: Api, namespace: str, name: str, *reasons: str) -> str | None:
    """The message of the first event on object `name` whose reason is one of `reasons`."""
    return next(iter(_event_messages(api, namespace, name, *reasons)), None)


def scheduled_on(pod: dict[str, Any]) -> str | None:
    node = dig(pod, "spec", "nodeName")
    if node:
        return str(node)
    for condition in dig(pod, "status", "conditions") or []:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "True"
        ):
            return "a node"
    return None


def unschedulable_message(pod: dict[str, Any]) -> str | None:
    for condition in dig(pod, "status", "conditions") or []:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "PodScheduled"
            and condition.get("reason") == "Unschedulable"
        ):
            return str(condition.get("message") or "Unschedulable")
    return None


def _watch_job(
    api: Api, namespace: str, job: str, selector: str, gpus: int, timeout: float
) -> tuple[str, str, list[str]]:
    """Poll until the Job's pod is refused by the scheduler (or quota), scheduled, or time is up."""
    pods_path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods"
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    last = "no pod created yet"
    while True:
        listing = api.list(pods_path, {"labelSelector": selector})
        if listing.state != "ok":
            return "error", f"could not list the Job's pods: {listing.reason}", seen
        for pod in listing.items:
            name = str(dig(pod, "metadata", "name") or "")
            if name and name not in seen:
                seen.append(name)
            node = scheduled_on(pod)
            if node:
                return (
                    "scheduled",
                    f"pod {name} asking for {gpus} {GPU} was scheduled on {node}",
                    seen,
                )
            # Other components write FailedScheduling too (Karpenter: "Failed to schedule pod,
            # incompatible with nodepool ..."), before or after the scheduler: the refusal that
            # names the GPU shortage is the one to report. The scheduler writes its words into
            # the pod's PodScheduled condition as well: they tell the refusal where events
            # cannot be read (no access, or already expired).
            refusals = _event_messages(api, namespace, name, *REFUSAL_REASONS)
            condition = unschedulable_message(pod)
            refusals += [condition] if condition else []
            if refusals:
                message = next((m for m in refusals if gpu_shortage(m)), refusals[0])
                return "pending", message, seen
            last = f"pod {name} is {dig(pod, 'status', 'phase') or 'without a phase'}"
        if not listing.items:
            refusal = _event_message(api, namespace, job, "FailedCreate")
            if refusal:
                return "refused", f"the Job could not create its pod: {refusal}", seen
        if time.monotonic() >= deadline:
            return (
                "timeout",
                f"no FailedScheduling event within {timeout:g} s "
                f"(nor an Unschedulable one); {last}",
                seen,
            )
        time.sleep(POLL_SECONDS)


def _scenario(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "clean": False,
        "state": "error",
        "reason": "",
        "seconds": 0.0,
        "created": [],
        "deleted": [],
    }


def _finish(
    api: Api, scenario: dict[str, Any], namespace: str, selector: str, started: float
) -> None:
    """Delete everything carrying the label; a failure to do so makes the scenario unclean."""
    try:
        deleted, problems = _remove_labelled(api, namespace, selector)
    except ConnectorError as exc:
        deleted, problems = [], [f"cleanup failed: {exc}"]
    scenario["deleted"] += [d for d in deleted if d not in scenario["deleted"]]
    for created in [c for c in scenario["created"] if c not in scenario["deleted"]]:
        # Not listed any more (the garbage collector took the Job's pod) or never listed:
        # a DELETE by name answers 404 once it is gone.
        kind, ns, name = created.split("/", 2)
        base = "/apis/batch/v1" if kind == "job" else "/api/v1"
        path = f"{base}/namespaces/{quote(ns, safe='')}/{kind}s/{quote(name, safe='')}"
        try:
            done, problem = _delete(api, path, created, background=kind == "job")
        except ConnectorError as exc:
            done, problem = False, f"could not delete {created}: {exc}"
        if done:
            scenario["deleted"].append(created)
        else:
            problems.append(problem)
    missing = [c for c in scenario["created"] if c not in scenario["deleted"]]
    if missing:
        problems.append("not deleted: " + ", ".join(missing))
    if problems:
        scenario["clean"] = False
        scenario["reason"] = "; ".join(
            ([scenario["reason"]] if scenario["reason"] else []) + problems
        )
    scenario["seconds"] = round(time.monotonic() - started, 2)


def _more_than_any_node(
    api: Api, namespace: str, label: str, gpus: int, timeout: float
) -> dict[str, Any]:
    scenario = _scenario("more_gpus_than_any_node")
    started = time.monotonic()
    job = planned_objects(namespace, label, gpus)[0]
    name = job["metadata"]["name"]
    try:
        reply = api.request(
            "POST", f"/apis/batch/v1/namespaces/{quote(namespace, safe='')}/jobs", body=job
        )
        if not reply.ok:
            scenario["reason"] = f"could not create the Job: {reply.error}"
            return scenario
        scenario["created"].append(f"job/{namespace}/{name}")
        state, reason, pods = _watch_job(api, namespace, name, label, gpus, timeout)
        scenario["created"] += [f"pod/{namespace}/{pod}" for pod in pods]
        scenario["state"], scenario["reason"] = state, reason
        scenario["clean"] = state == "pending" and gpu_shortage(reason)
    except ConnectorError as exc:
        scenario["state"], scenario["reason"] = "error", str(exc)
    finally:
        _finish(api, scenario, namespace, label, started)
    return scenario


def _over_resource_quota(
    api: Api, namespace: str, label: str, gpus: int, quota: tuple[str, int, int]
) -> dict[str, Any]:
    scenario = _scenario("over_resource_quota")
    started = time.monotonic()
    quota_name, hard, used = quota
    asked = max(1, hard - used + 1)
    pod = planned_objects(namespace, label, gpus, asked)[1]
    name = pod["metadata"]["name"]
    try:
        reply = api.request(
            "POST", f"/api/v1/namespaces/{quote(namespace, safe='')}/pods", body=pod, fatal=False
        )
        if reply.status == 403:
            message = str(dig(reply.data, "message") or reply.error)
            scenario["state"], scenario["reason"] = "refused", message
            scenario["clean"] = "exceeded quota" in message and quota_name in message
        elif reply.ok:
            scenario["created"].append(f"pod/{namespace}/{name}")
            scenario["state"] = "scheduled"
            scenario["reason"] = (
                f"the API server accepted pod {name} asking for {asked} {GPU} over "
                f"quota {quota_name} (hard {hard}, used {used})"
            )
        else:
            scenario["reason"] = f"could not create the Pod: {reply.error}"
    except ConnectorError as exc:
        scenario["state"], scenario["reason"] = "error", str(exc)
    finally:
        _finish(api, scenario, namespace, label, started)
    return scenario


def over_quota(
    target: KubeTarget,
    *,
    resolve: Resolve,
    namespace: str,
    label: str,
    timeout: float = 60.0,
    gpus: int | None = None,
) -> dict[str, Any]:
    """Provoke the refusals a GPU cluster must give, and clean up (creates objects: opt-in).

    A Job asking for more GPUs than any node allocates (`gpus`, by default the largest
    allocatable count plus one) must stay Pending with a FailedScheduling "Insufficient
    nvidia.com/gpu" event (the KAI scheduler's reason: Unschedulable) within `timeout` seconds;
    where the namespace has a ResourceQuota on requests.nvidia.com/gpu, a Pod over it must be
    refused with 403 "exceeded quota". Every object carries `label` and is deleted afterwards,
    also on failure or timeout."""
    _check_namespace(namespace)
    _split_label(label)
    api = Api(target, resolve)
    result: dict[str, Any] = {
        "namespace": namespace,
        "label": label,
        "gpus": gpus,
        "scenarios": [],
        "notes": [],
        "raw": api.raw,
    }
    try:
        if gpus is None:
            gpus = _max_allocatable(api) + 1
            result["gpus"] = gpus
        result["scenarios"].append(_more_than_any_node(api, namespace, label, gpus, timeout))
        skipped: list[str] = []
        try:
            quota = _gpu_quota(api, namespace, skipped)
        except ConnectorError as exc:
            result["notes"].append(f"{exc}: the over-quota scenario was not run")
            return result
        if quota is None:
            scoped = f" (scoped to other pods: {', '.join(skipped)})" if skipped else ""
            result["notes"].append(
                f"no ResourceQuota on {QUOTA_GPU} in namespace {namespace}{scoped}: "
                "the over-quota scenario was not run"
            )
        else:
            result["scenarios"].append(_over_resource_quota(api, namespace, label, gpus, quota))
    finally:
        api.close()
    return result


def sweep(
    target: KubeTarget, *, resolve: Resolve, namespace: str, label_selector: str
) -> list[str]:
    """Delete the Jobs and Pods in `namespace` matching `label_selector` (leftovers of earlier
    runs); returns what was deleted ("job/<ns>/<name>", ...). Only equality and existence
    terms are accepted, so the selector cannot match objects the probe did not label."""
    _check_namespace(namespace)
    terms = [t.strip().replace("==", "=") for t in label_selector.split(",")]
    for term in terms:
        if "!" in term:
            raise ConnectorError(f"{label_selector!r}: give key=value label terms only")
        _split_label(term)
    api = Api(target, resolve)
    try:
        deleted, problems = _remove_labelled(api, namespace, ",".join(terms))
    finally:
        api.close()
    if problems:
        done = f" (deleted {', '.join(deleted)})" if deleted else ""
        raise ConnectorError("; ".join(problems) + done)
    return deleted
