"""The kernel log: Xid events, NVSwitch SXid errors, GPUs that failed to
initialise."""

import re

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import InitFailure, NodeFacts, SxidEvent
from poc.probes.rules import xid as xid_catalogue
from poc.probes.rules.health.base import Findings
from poc.probes.rules.health.notices import bus_key, gpu_at

# A source (facts["sources"]) whose name holds one of these words is a kernel log: Xid errors
# were looked for. Parsers name sources by the command or file they read ("dmesg",
# "journalctl -k", "kernel log").
KERNEL_LOG_WORDS = ("dmesg", "kernel", "journal", "syslog", "messages", "xid")


def kernel_log_read(node: NodeFacts) -> bool:
    """Whether a kernel log was read for this node, so that Xid errors were looked for."""
    if node["xid_events"]:
        return True
    return any(word in source.lower() for source in node["sources"] for word in KERNEL_LOG_WORDS)


def xid_events(node: NodeFacts, found: Findings) -> None:
    """Each Xid code that the catalogue (rules/xid.py) counts as a problem, once per GPU and
    code, with the catalogue's severity; codes not in the catalogue are degraded (needs review).
    Xid 154 counts as the recovery action named by the GPU's last one (`xid.current_events`).
    Events name their GPU by `gpu_index` where the parser could tell."""
    if not kernel_log_read(node):
        found.unknown("xid", _("The kernel log was not read, so Xid errors could not be checked."))
        return
    seen: dict[tuple[int | None, str | None, int], int] = {}
    severities: dict[tuple[int | None, str | None, int], xid_catalogue.Severity | None] = {}
    recovery: dict[tuple[int | None, str | None, int], int | None] = {}
    for event, severity in xid_catalogue.current_events(node["xid_events"]):
        bus = None if event["gpu_index"] is not None else event["pci_bus_id"]
        key = (event["gpu_index"], bus, event["code"])
        seen[key] = seen.get(key, 0) + 1
        if event["code"] == xid_catalogue.RECOVERY_ACTION_XID:
            # Only the GPU's last Xid 154 counts: it names the recovery action now due.
            if severity is not None or key not in severities:
                severities[key] = severity
                recovery[key] = xid_catalogue.recovery_action(event["message"])
        else:
            severities[key] = severity
    for (gpu_index, bus, code), count in seen.items():
        severity = severities[(gpu_index, bus, code)]
        if severity is None:
            continue
        info = xid_catalogue.xid_info(code)
        if bus:
            subject = _("Xid %(code)s on %(bus)s") % {"code": code, "bus": bus}
        else:
            subject = _("Xid %(code)s") % {"code": code}
        if info is None:
            message = ngettext(
                "%(xid)s, %(count)s event: not in the catalogue, needs review.",
                "%(xid)s, %(count)s events: not in the catalogue, needs review.",
                count,
            ) % {"xid": subject, "count": count}
            found.problem("xid_unknown", severity, code, message, gpu_index=gpu_index)
            continue
        action = info.action
        named = recovery.get((gpu_index, bus, code))
        if named is not None and named in xid_catalogue.RECOVERY_ACTIONS:
            action = _("recovery action %(action)s") % {
                "action": xid_catalogue.RECOVERY_ACTIONS[named][0]
            }
        message = ngettext(
            "%(xid)s (%(description)s), %(count)s event; NVIDIA's action: %(action)s.",
            "%(xid)s (%(description)s), %(count)s events; NVIDIA's action: %(action)s.",
            count,
        ) % {
            "xid": subject,
            "description": info.description,
            "count": count,
            "action": action,
        }
        found.problem("xid", severity, code, message, gpu_index=gpu_index)


# The kernel-log parser's warnings for NVSwitch errors and GPUs the driver could not initialise
# (poc/probes/parsers/kernel_log.py). Documents that lack the structured fields `sxid_events`
# and `init_failures` (stored before they were added, or combined without them) are judged from
# these warnings instead.
SXID_WARNING = re.compile(
    r"^kernel log: NVSwitch SXid (?P<code>\d{1,6})(?: \((?P<severity>Fatal|Non-fatal)\))? on "
    r"(?P<bus>[^\s,:]+(?::[0-9A-Fa-f.]+)*)(?:, first at (?P<time>.+?))?"
    r"(?:, (?P<lines>\d+) lines)?: (?P<message>.*)$"
)
INIT_FAILURE_WARNING = re.compile(
    r"^kernel log: the driver could not initialise (?:the GPU at (?P<bus>\S+)|a GPU): "
    r"RmInitAdapter failed!\s*(?P<detail>.*)$"
)


def switch_errors(node: NodeFacts) -> list[SxidEvent]:
    """The node's NVSwitch errors: `sxid_events`, and those only its warnings name."""
    events: list[SxidEvent] = [dict(event) for event in node.get("sxid_events", [])]  # type: ignore[misc]
    known = {
        (bus_key(event["switch_bus_id"]) or event["switch_bus_id"], event["code"])
        for event in events
    }
    for warning in node["warnings"]:
        match = SXID_WARNING.match(warning)
        if match is None:
            continue
        key = (bus_key(match["bus"]) or match["bus"], int(match["code"]))
        if key in known:
            continue
        known.add(key)
        events.append(
            {
                "switch_bus_id": match["bus"],
                "code": int(match["code"]),
                "severity": match["severity"],
                "timestamp": match["time"],
                "lines": int(match["lines"] or 1),
                "message": match["message"],
            }
        )
    return events


def init_failures(node: NodeFacts) -> list[InitFailure]:
    """The GPUs the driver could not initialise: `init_failures`, and those only its warnings
    name."""
    failures: list[InitFailure] = [dict(item) for item in node.get("init_failures", [])]  # type: ignore[misc]
    known = {bus_key(item["pci_bus_id"]) or item["pci_bus_id"] for item in failures}
    for warning in node["warnings"]:
        match = INIT_FAILURE_WARNING.match(warning)
        if match is None:
            continue
        key = bus_key(match["bus"]) or match["bus"]
        if key in known:
            continue
        known.add(key)
        failures.append({"pci_bus_id": match["bus"], "detail": match["detail"].strip()})
    return failures


def nvswitch_errors(node: NodeFacts, found: Findings) -> None:
    """NVSwitch errors (SXid) in the kernel log, one problem per switch and code: a Fatal one is
    failed (the switch stops carrying NVLink traffic until it, in practice the node, is reset);
    a Non-fatal one is degraded (the switch recovered, but a link or the switch needs a look);
    one whose lines name no severity is degraded (needs review). Without a kernel log the rule
    does not apply: `xid_events` already lists the log as not read."""
    if not kernel_log_read(node):
        found.skip()
        return
    for error in switch_errors(node):
        values = {
            "code": error["code"],
            "bus": error["switch_bus_id"],
            "detail": error["message"] or _("no detail given"),
        }
        if error["severity"] == "Fatal":
            found.problem(
                "sxid_fatal",
                "failed",
                error["code"],
                _(
                    "Fatal NVSwitch error SXid %(code)s on the switch at %(bus)s (%(detail)s): "
                    "the NVLink fabric through that switch is down until the switch is reset, "
                    "which in practice means resetting or rebooting the node."
                )
                % values,
            )
        elif error["severity"] == "Non-fatal":
            found.problem(
                "sxid_non_fatal",
                "degraded",
                error["code"],
                _(
                    "Non-fatal NVSwitch error SXid %(code)s on the switch at %(bus)s "
                    "(%(detail)s): the switch recovered, but the link or switch needs a look."
                )
                % values,
            )
        else:
            found.problem(
                "sxid",
                "degraded",
                error["code"],
                _(
                    "NVSwitch error SXid %(code)s on the switch at %(bus)s (%(detail)s): the log "
                    "does not say whether it was fatal; needs review."
                )
                % values,
            )


def gpu_init_failures(node: NodeFacts, found: Findings) -> None:
    """A GPU the driver could not initialise ("RmInitAdapter failed!" in the kernel log): failed,
    since the GPU is missing from the node. When the facts still list a GPU with that bus id (it
    came up later, e.g. after a driver reload, or the log holds an earlier boot), the failure is
    degraded on that GPU: it is there now, but the failure needs a look. Without a kernel log
    the rule does not apply, as for `nvswitch_errors`."""
    if not kernel_log_read(node):
        found.skip()
        return
    index_of: dict[tuple[int, int, int, int], int | None] = {}
    for gpu in node["gpus"]:
        key = bus_key(gpu["pci_bus_id"])
        if key is not None:
            index_of.setdefault(key, gpu["index"])
    for failure in init_failures(node):
        bus = failure["pci_bus_id"]
        key = bus_key(bus)
        detail = failure["detail"].strip()
        if detail.startswith("(") and detail.endswith(")"):
            detail = detail[1:-1].strip()  # the driver's "(0x26:0xffff:1463)"
        values = {"gpu": gpu_at(bus), "detail": detail or _("no code given")}
        if key is not None and key in index_of:
            found.problem(
                "gpu_init_failed_earlier",
                "degraded",
                bus,
                _(
                    "The kernel log says the driver could not initialise %(gpu)s (RmInitAdapter "
                    "failed, %(detail)s); the GPU is present now, but the failure needs a look."
                )
                % values,
                gpu_index=index_of[key],
            )
            continue
        found.problem(
            "gpu_init_failed",
            "failed",
            bus,
            _(
                "The driver could not initialise %(gpu)s (RmInitAdapter failed, %(detail)s): the "
                "GPU is missing from the node; check its seating and power, then reload the "
                "driver or restart the machine."
            )
            % values,
        )
