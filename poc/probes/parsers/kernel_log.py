"""Xid events from a kernel log (dmesg, journalctl -k, syslog) or the k8s device plugin's log.

    [  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has ...
    Dec  1 10:00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, ...
    2026-12-01T10:00:00.123+00:00 node kernel: NVRM: Xid (0000:3b:00): 13, Graphics Exception
    I1201 10:00:00.123456  1 health.go:159] XidCriticalError: Xid=48 on Device=GPU-e3db...; ...

NVSwitch errors ("nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 12028, Non-fatal, Link 43 ...") are
no GPU's Xid: each code seen on a switch becomes one entry of `sxid_events`, with its severity,
and one of the node's warnings. A GPU the driver could not initialise ("NVRM: GPU 0000:3b:00.0:
RmInitAdapter failed!") becomes one entry of `init_failures` and a warning.
Every other line is ignored, so a whole dmesg can be given. The time stamp is kept as written;
where a line carries both a wall-clock time (syslog, ISO, `dmesg -T`, klog) and dmesg's
seconds since boot, the wall-clock time is kept. The kernel names the GPU by bus id; the device
plugin names it by UUID, which stays in the message. Either resolves to the GPU's index once
the node's GPUs are known (see resolve_gpu_indexes).

The JSON forms are read too: `journalctl -o json` (one object a line) or `-o json-pretty`,
whose records hold the line in "MESSAGE" and the time in "__REALTIME_TIMESTAMP" (microseconds
since the epoch, given here in ISO 8601, UTC), and `dmesg --json`, {"dmesg": [{"pri": 4,
"time": 100.000000, "msg": "..."}]}.

The registry's `kernel-log` entry (formats.py) says how this output is recognised and
which commands make it.
"""

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime

from poc.probes.facts import GpuFacts, InitFailure, NodeFacts, SxidEvent, XidEvent, new_node

from . import values as v

SOURCE = "kernel log"

_NVRM_XID = re.compile(r"NVRM: Xid \(([^()]{1,40})\): ?(\d{1,5})\b,? ?", re.IGNORECASE)
_PLUGIN_XID = re.compile(r"\bXid=(\d{1,5})\b[;,]? ?")
# NVSwitch errors (fabric systems): "nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 12028,
# Non-fatal, Link 43 ...". One error prints several lines with the same code (the first names
# the severity, the next ones its engine and data).
SXID_LINE = re.compile(r"\bSXid \(([^()]{1,40})\): ?(\d{1,6})\b,? ?", re.IGNORECASE)
_SXID_SEVERITY = re.compile(r"(Non-fatal|Fatal)\b,? ?", re.IGNORECASE)
# A GPU the driver could not bring up (it is then missing from nvidia-smi's output):
# "NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1463)".
# Drivers before about R470 name no GPU: "NVRM: RmInitAdapter failed! (0x30:0xffff:660)".
_INIT_FAILED = re.compile(
    r"NVRM: (?:GPU ((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]): )?"
    r"RmInitAdapter failed!(.{0,100})"
)
# At most this many NVSwitch errors are listed among the warnings (the rest are counted).
_MAX_SXID = 20
# The device plugin names a MIG device by its own UUID (R470 and newer drivers), which
# resolves to the GPU holding it; the older "MIG-GPU-<uuid>/1/0" form holds the GPU's UUID.
_UUID = re.compile(r"(?:GPU|MIG)-[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}")
_STAMPS = (
    re.compile(r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)"),
    re.compile(r"\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]"),
    # syslog, journalctl's short and short-precise ("Dec 01 10:00:00.123456")
    re.compile(r"([A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)"),
    re.compile(r"(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)"),
    re.compile(r"^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9})"),
    # dmesg -H: "[Dec 1 10:00]" when the minute changes (the "[  +0.000123]" lines between
    # are offsets from the line before, no time of their own)
    re.compile(r"\[([A-Z][a-z]{2}[ \d]\d \d{2}:\d{2})\]"),
    re.compile(r"\[\s*(\d{1,10}\.\d{1,9})\]"),
    # journalctl -o short-unix: seconds since the epoch
    re.compile(r"^(\d{9,11}\.\d{1,9}) "),
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


def _lines(text: str) -> Iterator[tuple[str, str | None]]:
    """Each line of the log and, for a JSON record, its time (a text line carries its own)."""
    if text.lstrip()[:1] != "{":
        for line in text.split("\n"):
            yield line, None
        return
    decoder = json.JSONDecoder()
    position = len(text) - len(text.lstrip())
    while position < len(text):
        start = position
        try:
            value, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            # Not JSON after all, or a record cut off: the rest is read as lines of text.
            for line in text[start:].split("\n"):
                yield line, None
            return
        records = value.get("dmesg") if isinstance(value, dict) else None
        found = False
        for record in records if isinstance(records, list) else [value]:
            message = _record_message(record) if isinstance(record, dict) else None
            if message is not None:
                found = True
                for line in message.split("\n"):
                    yield line, _record_stamp(record)
        if not found:
            # A record of another shape: its text is searched as it stands.
            for line in text[start:position].split("\n"):
                yield line, None
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1


def _record_message(record: dict[str, object]) -> str | None:
    """The logged line of a JSON record: journalctl's MESSAGE, dmesg's msg, or the container
    log line of Docker's json-file driver ({"log": "...", "stream": ..., "time": ...})."""
    message = record.get("MESSAGE", record.get("msg", record.get("log")))
    if isinstance(message, list) and all(
        isinstance(byte, int) and 0 <= byte < 256 for byte in message
    ):
        # journalctl writes a message that is not UTF-8 as its bytes.
        message = bytes(message).decode("utf-8", "replace")
    return message if isinstance(message, str) else None


def _record_stamp(record: dict[str, object]) -> str | None:
    realtime = record.get("__REALTIME_TIMESTAMP")
    if isinstance(realtime, str) and realtime.isdigit() and len(realtime) <= 19:
        try:
            moment = datetime.fromtimestamp(int(realtime) / 1_000_000, tz=UTC)
        except (ValueError, OverflowError, OSError):
            return None
        return moment.isoformat(timespec="microseconds")
    since_boot = record.get("time")
    if isinstance(since_boot, float | int) and not isinstance(since_boot, bool):
        return f"{since_boot:.6f}"
    if isinstance(since_boot, str) and since_boot.strip():
        return since_boot.strip()[:40]
    return None


def parse_kernel_log(text: str) -> NodeFacts:
    """The Xid events in a log; a log without any is a node with no events."""
    events: list[XidEvent] = []
    sxids: dict[tuple[str, int], _SwitchError] = {}
    init_failures: dict[str, str] = {}
    for line, stamp in _lines(text):
        found = find_xid(line)
        if found is None:
            if "sxid" in line.lower():
                _switch_error(line, stamp, sxids)
            elif "RmInitAdapter failed" in line:
                failed = _INIT_FAILED.search(line)
                if failed is not None:
                    init_failures.setdefault(
                        (failed.group(1) or "").lower(), failed.group(2).strip()
                    )
            continue
        match, bus = found
        code = match.group(2) if match.re is _NVRM_XID else match.group(1)
        events.append(
            {
                "code": int(code),
                "pci_bus_id": bus,
                "gpu_index": None,
                "message": line[match.end() :].strip()[:_MAX_MESSAGE],
                "timestamp": stamp or _stamp(line[: match.start()]),
            }
        )
    failures: list[InitFailure] = [
        {"pci_bus_id": bus or None, "detail": detail[:_MAX_MESSAGE]}
        for bus, detail in list(init_failures.items())[:_MAX_SXID]
    ]
    warnings = [
        f"kernel log: the driver could not initialise {_gpu_named(failure['pci_bus_id'])}"
        f": RmInitAdapter failed! {failure['detail']}".rstrip()[:_MAX_MESSAGE]
        for failure in failures
    ]
    return new_node(
        xid_events=events,
        sxid_events=_switch_events(sxids),
        init_failures=failures,
        sources=[SOURCE],
        warnings=warnings + _switch_warnings(sxids),
        gpus_listed=False,  # a kernel log names GPUs that had events, not the node's GPUs
    )


def _gpu_named(bus: str | None) -> str:
    return f"the GPU at {bus}" if bus else "a GPU"


class _SwitchError:
    """The lines of one NVSwitch error code on one switch."""

    def __init__(self, timestamp: str | None) -> None:
        self.lines = 0
        self.severity: str | None = None
        self.message = ""
        self.timestamp = timestamp


def _switch_error(line: str, stamp: str | None, found: dict[tuple[str, int], _SwitchError]) -> None:
    match = SXID_LINE.search(line)
    if match is None:
        return
    key = (match.group(1).strip(), int(match.group(2)))
    error = found.get(key)
    if error is None:
        error = found[key] = _SwitchError(stamp or _stamp(line[: match.start()]))
    error.lines += 1
    rest = line[match.end() :].strip()
    severity = _SXID_SEVERITY.match(rest)
    if severity is not None:
        word = "Fatal" if severity.group(1).lower() == "fatal" else "Non-fatal"
        # A fatal line of the code outweighs its non-fatal ones.
        if error.severity != "Fatal":
            error.severity = word
        if not error.message or word == "Fatal":
            error.message = rest[severity.end() :].strip()
    elif not error.message:
        error.message = rest


def _switch_events(found: dict[tuple[str, int], _SwitchError]) -> list[SxidEvent]:
    """The NVSwitch errors as facts: one per code and switch, the first _MAX_SXID of them."""
    return [
        {
            "switch_bus_id": bus,
            "code": code,
            "severity": error.severity,
            "timestamp": error.timestamp,
            "lines": error.lines,
            "message": error.message[:_MAX_MESSAGE],
        }
        for (bus, code), error in list(found.items())[:_MAX_SXID]
    ]


def _switch_warnings(found: dict[tuple[str, int], _SwitchError]) -> list[str]:
    """One warning per NVSwitch error code and switch: they are no GPU's Xid events."""
    warnings: list[str] = []
    for (bus, code), error in list(found.items())[:_MAX_SXID]:
        severity = f" ({error.severity})" if error.severity else ""
        stamp = f", first at {error.timestamp}" if error.timestamp else ""
        lines = f", {error.lines} lines" if error.lines > 1 else ""
        warnings.append(
            f"kernel log: NVSwitch SXid {code}{severity} on {bus}{stamp}{lines}: {error.message}"[
                :_MAX_MESSAGE
            ]
        )
    if len(found) > _MAX_SXID:
        warnings.append(f"kernel log: {len(found) - _MAX_SXID} more NVSwitch SXid codes not listed")
    return warnings


def resolve_gpu_indexes(events: list[XidEvent], gpus: list[GpuFacts]) -> None:
    """Fill each event's gpu_index from the GPU its bus id (or the UUID in it) names."""
    by_bus: dict[tuple[int, int, int], int] = {}
    by_uuid: dict[str, int] = {}
    for gpu in gpus:
        key = v.bus_key(gpu["pci_bus_id"])
        if key is not None and gpu["index"] is not None:
            by_bus[key] = gpu["index"]
        if gpu["index"] is None:
            continue
        for listed in [gpu["uuid"]] + [device["uuid"] for device in gpu["mig_devices"]]:
            uuid = v.usable_uuid(listed)
            if uuid is not None:
                by_uuid.setdefault(uuid.lower(), gpu["index"])
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
