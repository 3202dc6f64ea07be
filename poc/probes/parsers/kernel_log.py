"""Xid events from a kernel log (dmesg, journalctl -k, syslog) or the k8s device plugin's log.

    [  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has ...
    Dec  1 10:00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, ...
    2026-12-01T10:00:00.123+00:00 node kernel: NVRM: Xid (0000:3b:00): 13, Graphics Exception
    I1201 10:00:00.123456  1 health.go:159] XidCriticalError: Xid=48 on Device=GPU-e3db...; ...

Every other line is ignored, so a whole dmesg can be given. The time stamp is kept as written;
where a line carries both a wall-clock time (syslog, ISO, `dmesg -T`, klog) and dmesg's
seconds since boot, the wall-clock time is kept. The kernel names the GPU by bus id; the device
plugin names it by UUID, which stays in the message. Either resolves to the GPU's index once
the node's GPUs are known (see resolve_gpu_indexes).
"""

import re

from poc.probes.facts import GpuFacts, NodeFacts, XidEvent, new_node

from . import values as v

SOURCE = "kernel log"

_NVRM_XID = re.compile(r"NVRM: Xid \(([^()]{1,40})\): ?(\d{1,5})\b,? ?", re.IGNORECASE)
_PLUGIN_XID = re.compile(r"\bXid=(\d{1,5})\b[;,]? ?")
_UUID = re.compile(r"GPU-[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}")
_STAMPS = (
    re.compile(r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)"),
    re.compile(r"\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]"),
    re.compile(r"([A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2})"),
    re.compile(r"(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)"),
    re.compile(r"^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9})"),
    re.compile(r"\[\s*(\d{1,10}\.\d{1,9})\]"),
)
# The prefix before the Xid holds the time stamp; a longer one is not a log line prefix.
_MAX_PREFIX = 200
_MAX_MESSAGE = 500


def find_xid(line: str) -> tuple[re.Match[str], str | None] | None:
    """The Xid match in a line and the bus id it names, or None if the line holds no Xid."""
    if "xid" not in line.lower():
        return None
    match = _NVRM_XID.search(line)
    if match is not None:
        return match, match.group(1).strip()
    match = _PLUGIN_XID.search(line)
    if match is not None:
        return match, None
    return None


def _stamp(prefix: str) -> str | None:
    prefix = prefix[-_MAX_PREFIX:]
    for pattern in _STAMPS:
        match = pattern.search(prefix)
        if match is not None:
            return match.group(1)
    return None


def parse_kernel_log(text: str) -> NodeFacts:
    """The Xid events in a log; a log without any is a node with no events."""
    events: list[XidEvent] = []
    for line in text.split("\n"):
        found = find_xid(line)
        if found is None:
            continue
        match, bus = found
        code = match.group(2) if match.re is _NVRM_XID else match.group(1)
        events.append(
            {
                "code": int(code),
                "pci_bus_id": bus,
                "gpu_index": None,
                "message": line[match.end() :].strip()[:_MAX_MESSAGE],
                "timestamp": _stamp(line[: match.start()]),
            }
        )
    return new_node(xid_events=events, sources=[SOURCE])


def resolve_gpu_indexes(events: list[XidEvent], gpus: list[GpuFacts]) -> None:
    """Fill each event's gpu_index from the GPU its bus id (or the UUID in it) names."""
    by_bus: dict[tuple[int, int, int], int] = {}
    by_uuid: dict[str, int] = {}
    for gpu in gpus:
        key = v.bus_key(gpu["pci_bus_id"])
        if key is not None and gpu["index"] is not None:
            by_bus[key] = gpu["index"]
        uuid = v.usable_uuid(gpu["uuid"])
        if uuid is not None and gpu["index"] is not None:
            by_uuid[uuid.lower()] = gpu["index"]
    for event in events:
        if event["gpu_index"] is not None:
            continue
        key = v.bus_key(event["pci_bus_id"])
        if key is not None and key in by_bus:
            event["gpu_index"] = by_bus[key]
            continue
        named = _UUID.search(event["message"])
        if named is not None:
            event["gpu_index"] = by_uuid.get(named.group(0).lower())
