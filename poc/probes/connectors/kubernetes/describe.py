"""What kubectl prints for people, read where an admin pastes it: `kubectl describe pod` (the
pod, its GPU request and the scheduler's events), which object another `kubectl describe` shows,
and the API server's quota refusal as kubectl reports it ("Error from server (Forbidden): ...
exceeded quota: ..."). No Django here."""

import re
from typing import Any

from poc.probes.connectors.kubernetes.documents import PodEvidence
from poc.probes.connectors.kubernetes.values import GPU

# An event line: type, reason, then age, source and message separated by two spaces or more
# (a line pasted on its own may lack the age).
_EVENT = re.compile(r"^\s*(Normal|Warning)\s{2,}(\S+)\s{2,}(.*)$")
_AGE = re.compile(r"^(?:<unknown>|<invalid>|\d+[smhdy][\dsmhdy]*(?: \(x\d+ over [\dsmhdy]+\))?)$")
_FIELD = re.compile(r"^([A-Z][A-Za-z ]*):(?:\s+(.*))?$")
_COMMAND = re.compile(r"^\$?\s*kubectl\s+describe\s+(\S+)")
_KIND = re.compile(r"^Kind:\s+(\w+)\s*$", re.MULTILINE)
_QUOTA = re.compile(r"exceeded quota:\s*([^,\s]+)")
_RESOURCE_WORDS = {
    "po": "Pod",
    "pod": "Pod",
    "pods": "Pod",
    "pg": "PodGroup",
    "podgroup": "PodGroup",
    "podgroups": "PodGroup",
    "queue": "Queue",
    "queues": "Queue",
    "q": "Queue",
    "node": "Node",
    "nodes": "Node",
    "no": "Node",
}


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def event_lines(text: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of each event line of a describe output."""
    events = []
    for line in _lines(text):
        match = _EVENT.match(line)
        if not match:
            continue
        kind, reason, rest = match.groups()
        fields = re.split(r"\s{2,}", rest.strip())
        if fields and _AGE.match(fields[0]):
            fields = fields[1:]  # the age
        if len(fields) >= 2:
            fields = fields[1:]  # the source ("default-scheduler", "kai-scheduler")
        events.append((kind, reason, "  ".join(fields)))
    return events


def described_kind(text: str) -> str | None:
    """The kind of object a `kubectl describe` output shows ("" for one not told apart), None
    when the text is not one: the command line pasted with it, its Kind field (custom
    resources), the fields only a Volcano PodGroup or Queue has, a pod's or a node's top-level
    fields, or event lines alone (a pod's, as pasted)."""
    lines = _lines(text)
    if not lines:
        return None
    command = _COMMAND.match(lines[0].strip())
    if command:
        word = command.group(1).split("/")[0].split(".")[0].lower()
        return _RESOURCE_WORDS.get(word, word)
    kind = _KIND.search(text)
    if kind:
        return kind.group(1)
    every = {line.strip().split(":")[0] for line in lines}
    top = {line.split(":")[0] for line in lines if not line[:1].isspace()}
    if "Min Member" in every or {"Transition ID", "Last Transition Time"} <= every:
        return "PodGroup"
    if "Capability" in every and ({"Reclaimable", "Weight"} & every):
        return "Queue"
    if {"Containers", "QoS Class"} & top:
        return "Pod"
    if {"Roles", "Taints", "Allocatable", "System Info"} & top:
        return "Node"
    if "Name" in top and {"Namespace", "Labels", "Annotations"} & top:
        return ""  # another object's description
    if event_lines(text) or "Events" in top:
        return "Pod"
    return None


def describe_pod(text: str, document: str) -> PodEvidence:
    """A `kubectl describe pod` output (or its events alone) as a pod object with the fields
    the refusal is judged on, and its events."""
    top: dict[str, str] = {}
    section = ""
    conditions: list[dict[str, Any]] = []
    gpus: int | None = None
    resources_shown = False
    for line in _lines(text):
        stripped = line.strip()
        if _EVENT.match(line):
            continue
        field = _FIELD.match(line)
        if field and not line.startswith((" ", "\t")):
            section = field.group(1)
            top.setdefault(section, (field.group(2) or "").strip())
            continue
        if stripped in ("Limits:", "Requests:"):
            resources_shown = True
        elif stripped.startswith(GPU + ":"):
            number = stripped.split(":", 1)[1].strip()
            gpus = max(gpus or 0, int(number)) if number.isascii() and number.isdigit() else gpus
        elif section == "Conditions" and stripped.split()[0] == "PodScheduled":
            parts = stripped.split()
            conditions.append({"type": "PodScheduled", "status": parts[1] if parts[1:] else ""})
    node = top.get("Node", "")
    pod: dict[str, Any] = {
        "metadata": {"name": top.get("Name") or None, "namespace": top.get("Namespace") or None},
        "spec": {"nodeName": node.split("/")[0] if node and node != "<none>" else None},
        "status": {"phase": top.get("Status") or None, "conditions": conditions},
    }
    if resources_shown or gpus is not None:
        requests = {GPU: str(gpus)} if gpus is not None else {}
        pod["spec"]["containers"] = [{"resources": {"requests": requests}}]
    events = [(reason, message) for _kind, reason, message in event_lines(text)]
    if not conditions and any(reason == "Scheduled" for reason, _m in events):
        # Events alone: the pod was placed when the scheduler's last word was "Scheduled".
        said = [r for r, _m in events if r in ("Scheduled", "FailedScheduling", "Unschedulable")]
        if said[-1] == "Scheduled":
            conditions.append({"type": "PodScheduled", "status": "True"})
    return PodEvidence(document, pod, events)


def is_kubectl_error(text: str) -> bool:
    return any(line.strip().startswith("Error from server") for line in _lines(text)[:5])


def quota_scenario(text: str, document: str) -> dict[str, Any] | None:
    """The controlled failure "over the namespace's GPU quota" as kubectl printed the API
    server's refusal; None when the text is no quota refusal. Clean, as live, when the refusal
    names the quota and the GPU resource it exceeds."""
    line = next((line.strip() for line in _lines(text) if "exceeded quota" in line), None)
    if line is None:
        return None
    message = line.split("): ", 1)[1] if line.startswith("Error from server (") else line
    quota = _QUOTA.search(message)
    return {
        "name": "over_resource_quota",
        "clean": quota is not None and ("nvidia.com/gpu" in message or "nvidia-gpu" in message),
        "state": "refused",
        "reason": message,
        "seconds": None,
        "created": [],
        "deleted": [],
        "note": f"the API server's refusal, read from {document} (not asked by the workbench)",
    }
