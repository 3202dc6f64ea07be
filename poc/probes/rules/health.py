"""Health rules: the verdict on a GPU node from its fact document (poc/probes/facts.py).

`judge_node(facts)` runs every rule of `RULES` and returns a plain JSON document:

    {"verdict": "healthy" | "degraded" | "failed",
     "problems": [Problem, ...],           # node-level: GPU count, Xid/DCGM/nvidia-smi notices
                                           # not tied to a GPU
     "could_not_check": [Unchecked, ...],  # node-level
     "gpus": [{"index", "uuid", "verdict", "problems", "could_not_check"}, ...]}

A problem names the value that caused it; "failed" means the GPU or node should not be accepted
as it is, "degraded" that it works but needs a look (or an action such as a reset). A verdict is
the worst of its problems, and the node's the worst of its own and its GPUs'.

"healthy" means "no problem found in what could be checked", nothing more: a fact that was not
reported is never taken as fine. Every check whose input is unknown is listed in
`could_not_check` with the reason, and `fully_checked(health)` says whether that list is empty
everywhere. The thresholds, their sources and the choices made are documented under "Probe rules" in
docs/probes.md.

A rule is one function that reads the facts and records what it found in a `Findings`; adding a
rule is writing that function and listing it in `RULES`.
"""

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import GpuFacts, InitFailure, NodeFacts, SxidEvent
from poc.probes.rules import xid as xid_catalogue

Verdict = Literal["healthy", "degraded", "failed"]
Severity = Literal["degraded", "failed"]

VERDICT_RANK: dict[str, int] = {"healthy": 0, "degraded": 1, "failed": 2}

# Legacy dynamic page retirement keeps at most 64 retired pages per GPU ("Supported a maximum of
# 64 retirements for the frame buffer": NVIDIA, GPU Memory Error Management, Row Remapping,
# https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/row-remapping.html). A GPU at the limit
# can retire no further page, whatever the cause of the retirements.
RETIRED_PAGES_LIMIT = 64

# Clock event reasons that mean the GPU is being slowed by something wrong with it or around it
# (heat, power delivery). gpu_idle, sw_power_cap, applications_clocks_setting, sync_boost and
# display_clock_setting are normal operation.
SLOWDOWN_REASONS = (
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
)

# A source (facts["sources"]) whose name holds one of these words is a kernel log: Xid errors
# were looked for. Parsers name sources by the command or file they read ("dmesg",
# "journalctl -k", "kernel log").
KERNEL_LOG_WORDS = ("dmesg", "kernel", "journal", "syslog", "messages", "xid")

# A source naming one of these read the NVLink link status (`nvidia-smi nvlink -s`); error counters
# alone (`nvlink -e`) say nothing about whether a link is up.
NVLINK_STATUS_SOURCES = ("nvlink -s", "nvlink --status", "nvlink-status", "nvlink status")

# NVLink counters (`nvidia-smi nvlink -e`) that count errors, by a word in their name: replay,
# recovery and CRC errors, and whatever newer drivers call "... errors". Packet and byte
# counters are not errors.
NVLINK_ERROR_WORDS = ("replay", "recovery", "crc", "error", "discard")
# NVLink 5 counters that hold no error count, under the names the parser gives them and those
# facts stored before it did: the FEC histogram (bin 0 counts clean codewords, the others the
# codewords corrected), the lanes' errors before correction (non-zero on healthy links), and
# the total of recovery events (the successful and failed ones, each counted already).
NVLINK_NOT_ERRORS = re.compile(
    r"fec_bin_\d+|pre_fec_lane_\d+|fec_errors?_\d+|raw_errors?_lane_\d+|total_link_recovery_events"
)


def nvlink_error_counter(name: str) -> bool:
    """Whether an NVLink counter (`nvidia-smi nvlink -e`) counts errors."""
    lowered = name.lower()
    if NVLINK_NOT_ERRORS.fullmatch(lowered):
        return False
    return any(word in lowered for word in NVLINK_ERROR_WORDS)


# nvidia-smi's notices about a troubled GPU, as the parsers keep them among the node's warnings
# ("nvidia-smi: WARNING: infoROM is corrupted at gpu 0000:3B:00.0", "nvidia-smi: Unable to
# determine the device handle for GPU 0000:3B:00.0: Unknown Error"; docs/probes.md, "Notices
# about a troubled GPU"). Some drivers write no space between "GPU" and the bus id.
_NOTICE_BUS = (
    r"(?P<bus>(?:PCI:)?(?:[0-9A-Fa-f]{1,8}:)?[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(?:\.[0-7])?)"
)
INFOROM_NOTICE = re.compile(r"infoROM is corrupted(?: at gpu\s*" + _NOTICE_BUS + r")?", re.I)
UNREACHABLE_NOTICE = re.compile(
    r"Unable to determine the device handle for gpu\s*" + _NOTICE_BUS + r"?\s*:?\s*(?P<error>.*)",
    re.I,
)
# A bus id in any of the spellings that name the same GPU: nvidia-smi's notices print a 4-digit
# domain ("0000:3B:00.0"), the facts hold the driver's 8-digit one ("00000000:3B:00.0").
_BUS_PARTS = re.compile(
    r"(?:PCI:)?(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})(?:\.([0-7]))?$"
)


class Problem(TypedDict):
    code: str
    severity: Severity
    gpu_index: int | None
    value: Any  # JSON: the value that caused the problem
    message: str


class Unchecked(TypedDict):
    code: str
    gpu_index: int | None
    reason: str


class GpuHealth(TypedDict):
    index: int | None
    uuid: str | None
    verdict: Verdict
    problems: list[Problem]
    could_not_check: list[Unchecked]


class NodeHealth(TypedDict):
    verdict: Verdict
    problems: list[Problem]
    could_not_check: list[Unchecked]
    gpus: list[GpuHealth]


class Findings:
    """What one rule found about one GPU, or about the node."""

    def __init__(self, gpu_index: int | None) -> None:
        self.gpu_index = gpu_index
        self.problems: list[Problem] = []
        self.unchecked: list[Unchecked] = []
        self.not_applicable = False

    def problem(
        self,
        code: str,
        severity: Severity,
        value: Any,
        message: str,
        *,
        gpu_index: int | None = None,
    ) -> None:
        """Record a problem. Node rules pass `gpu_index` to tie it to a GPU of the node."""
        self.problems.append(
            {
                "code": code,
                "severity": severity,
                "gpu_index": self.gpu_index if gpu_index is None else gpu_index,
                "value": value,
                "message": message,
            }
        )

    def unknown(self, code: str, reason: str, *, gpu_index: int | None = None) -> None:
        """Record a check that could not be made, and why."""
        self.unchecked.append(
            {
                "code": code,
                "gpu_index": self.gpu_index if gpu_index is None else gpu_index,
                "reason": reason,
            }
        )

    def skip(self) -> None:
        """Say the rule does not apply here (no NVLink on this GPU, say): neither checked nor
        unknown."""
        self.not_applicable = True

    @property
    def conclusive(self) -> bool:
        """Whether the rule reached a conclusion: a problem, or nothing wrong in a full check."""
        return bool(self.problems) or (not self.unchecked and not self.not_applicable)


GpuCheck = Callable[[GpuFacts, NodeFacts, Findings], None]
NodeCheck = Callable[[NodeFacts, Findings], None]


@dataclass(frozen=True)
class Rule:
    """A health rule: run once per GPU (`gpu`) or once per node (`node`)."""

    name: str
    gpu: GpuCheck | None = None
    node: NodeCheck | None = None


def gpu_rule(check: GpuCheck) -> Rule:
    return Rule(name=check.__name__, gpu=check)


def node_rule(check: NodeCheck) -> Rule:
    return Rule(name=check.__name__, node=check)


# --- GPU rules ----------------------------------------------------------------------------------


def ecc_mode(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """ECC disabled on a GPU that has it: degraded. Memory errors then go uncorrected and
    uncounted, and rows can be neither remapped nor pages retired."""
    mode = gpu["ecc_mode_current"]
    if mode is None:
        found.unknown("ecc_mode", _("ECC mode was not reported (the GPU may not support ECC)."))
    elif mode is False:
        if gpu["ecc_mode_pending"]:
            message = _("ECC is disabled; it is set to be enabled at the next GPU reset.")
        else:
            message = _("ECC is disabled: memory errors are neither corrected nor counted.")
        found.problem("ecc_disabled", "degraded", False, message)


def ecc_errors(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Uncorrected ECC errors since the driver loaded: failed (data may have been corrupted and
    the GPU needs a reset). Uncorrected errors only in the lifetime count: degraded (they
    happened before the last reset, and the memory has been retired or remapped since)."""
    volatile = gpu["ecc_volatile_uncorrected"]
    aggregate = gpu["ecc_aggregate_uncorrected"]
    if volatile is not None and volatile > 0:
        found.problem(
            "ecc_uncorrected_volatile",
            "failed",
            volatile,
            ngettext(
                "%(count)s uncorrected ECC error since the driver loaded.",
                "%(count)s uncorrected ECC errors since the driver loaded.",
                volatile,
            )
            % {"count": volatile},
        )
        return
    if aggregate is not None and aggregate > 0:
        found.problem(
            "ecc_uncorrected_aggregate",
            "degraded",
            aggregate,
            ngettext(
                "%(count)s uncorrected ECC error over the GPU's lifetime (none since the driver "
                "loaded).",
                "%(count)s uncorrected ECC errors over the GPU's lifetime (none since the driver "
                "loaded).",
                aggregate,
            )
            % {"count": aggregate},
        )
    if volatile is None:
        if gpu["ecc_mode_current"] is False:
            reason = _("ECC is disabled, so memory errors are not counted.")
        else:
            reason = _("The count of uncorrected ECC errors was not reported.")
        found.unknown("ecc_errors", reason)


def _retired_pages_reported(gpu: GpuFacts) -> bool:
    return any(
        gpu[key] is not None
        for key in ("retired_pages_single_bit", "retired_pages_double_bit", "retired_pages_pending")
    )


def _remapped_rows_reported(gpu: GpuFacts) -> bool:
    return any(
        gpu[key] is not None
        for key in (
            "remapped_rows_correctable",
            "remapped_rows_uncorrectable",
            "remapped_rows_pending",
            "remapped_rows_failure",
        )
    )


def remapped_rows(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Row remapping (Ampere and newer): a remapping failure is failed (NVIDIA's policy: replace
    the GPU); a pending remapping is degraded (a GPU reset activates it); rows remapped after
    uncorrectable errors are degraded (handled, but a history of uncorrectable errors is worth a
    look before acceptance)."""
    if not _remapped_rows_reported(gpu):
        if _retired_pages_reported(gpu):
            found.skip()  # an older GPU: it retires pages instead, see retired_pages
        else:
            found.unknown(
                "remapped_rows",
                _(
                    "Row remapping was not reported (Ampere and newer datacenter GPUs report it; "
                    "the driver hides it while MIG instances exist)."
                ),
            )
        return
    failure = gpu["remapped_rows_failure"]
    pending = gpu["remapped_rows_pending"]
    uncorrectable = gpu["remapped_rows_uncorrectable"]
    if failure:
        found.problem(
            "remapped_rows_failure",
            "failed",
            True,
            _("A row remapping has failed: the GPU's memory cannot be repaired (replace the GPU)."),
        )
    if pending:
        found.problem(
            "remapped_rows_pending",
            "degraded",
            True,
            _("Rows are waiting to be remapped: the GPU needs a reset."),
        )
    if uncorrectable is not None and uncorrectable > 0:
        found.problem(
            "remapped_rows_uncorrectable",
            "degraded",
            uncorrectable,
            ngettext(
                "%(count)s row was remapped after an uncorrectable error.",
                "%(count)s rows were remapped after uncorrectable errors.",
                uncorrectable,
            )
            % {"count": uncorrectable},
        )
    if failure is None or pending is None:
        found.unknown(
            "remapped_rows",
            _("Whether a row remapping is pending or has failed was not reported."),
        )


def retired_pages(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Dynamic page retirement (before Ampere): 64 retired pages (the most a GPU can retire) is
    failed; pages retired after double-bit errors are degraded; retirements waiting for a
    driver reload or reset are degraded."""
    if not _retired_pages_reported(gpu):
        if _remapped_rows_reported(gpu):
            found.skip()  # Ampere and newer remap rows instead, see remapped_rows
        else:
            found.unknown(
                "retired_pages",
                _("Retired pages were not reported (GPUs before Ampere report them)."),
            )
        return
    single = gpu["retired_pages_single_bit"]
    double = gpu["retired_pages_double_bit"]
    pending = gpu["retired_pages_pending"]
    total = (single or 0) + (double or 0)
    if total >= RETIRED_PAGES_LIMIT:
        found.problem(
            "retired_pages_limit",
            "failed",
            total,
            _(
                "%(count)s pages retired: the GPU has reached the limit of %(limit)s and cannot "
                "retire more."
            )
            % {"count": total, "limit": RETIRED_PAGES_LIMIT},
        )
    elif double is not None and double > 0:
        found.problem(
            "retired_pages_double_bit",
            "degraded",
            double,
            ngettext(
                "%(count)s page was retired after a double-bit ECC error.",
                "%(count)s pages were retired after double-bit ECC errors.",
                double,
            )
            % {"count": double},
        )
    if pending:
        found.problem(
            "retired_pages_pending",
            "degraded",
            True,
            _("Pages are waiting to be retired: the driver must be reloaded or the GPU reset."),
        )
    if (single is None or double is None) and total < RETIRED_PAGES_LIMIT:
        found.unknown(
            "retired_pages",
            _("Not every retired-page count was reported, so the limit could not be checked."),
        )
    if pending is None:
        found.unknown(
            "retired_pages", _("Whether pages are waiting to be retired was not reported.")
        )


# Utilization under which a GPU that holds a process is not busy for the link rule.
BUSY_PERCENT = 10


def pcie_link(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """A PCIe link below the GPU's maximum width is degraded. Below its maximum generation it is
    degraded only when the GPU is busy: idle GPUs lower the link generation to save power (the
    width stays), and so do GPUs that hold a process but compute nothing (the driver then no
    longer reports them idle; utilization under BUSY_PERCENT says so). The maximum is the GPU's
    own, so a Gen5 GPU in a Gen4 slot shows too."""
    width, width_max = gpu["pcie_width_current"], gpu["pcie_width_max"]
    if width is None or width_max is None:
        found.unknown(
            "pcie_width", _("The PCIe link width (current and maximum) was not reported.")
        )
    elif width < width_max:
        found.problem(
            "pcie_width_reduced",
            "degraded",
            width,
            _("The PCIe link runs at x%(current)s of x%(max)s.")
            % {"current": width, "max": width_max},
        )
    gen, gen_max = gpu["pcie_gen_current"], gpu["pcie_gen_max"]
    if gen is None or gen_max is None:
        found.unknown(
            "pcie_gen", _("The PCIe link generation (current and maximum) was not reported.")
        )
    elif gen < gen_max:
        idle = gpu["clock_event_reasons"].get("gpu_idle")
        values = {"current": gen, "max": gen_max}
        utilization = gpu["utilization_gpu_pct"]
        if idle is False and utilization is not None and utilization < BUSY_PERCENT:
            # A process holds the GPU (so it is not "idle") but runs nothing on it: the link
            # saves power as on an idle GPU.
            return
        if idle is False:
            found.problem(
                "pcie_gen_reduced",
                "degraded",
                gen,
                _("The PCIe link runs at Gen %(current)s of Gen %(max)s while the GPU is busy.")
                % values,
            )
        elif idle is None:
            found.unknown(
                "pcie_gen",
                _(
                    "The PCIe link runs at Gen %(current)s of Gen %(max)s, and whether the GPU "
                    "was idle (idle GPUs lower the link speed) was not reported."
                )
                % values,
            )
        # idle is True: the link speed drops to save power, nothing wrong.


def clock_events(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Hardware slowdown, hardware thermal slowdown, hardware power brake and software thermal
    slowdown are degraded: the GPU runs slower than it should because of heat or power delivery.
    Software thermal slowdown counts too: the GPU is above its thermal target, which in a
    datacenter means cooling that is short of what the GPU needs."""
    reasons = gpu["clock_event_reasons"]
    messages = {
        "hw_slowdown": _("Hardware slowdown is active: clocks are cut by half or more."),
        "hw_thermal_slowdown": _("Hardware thermal slowdown is active: the GPU is too hot."),
        "hw_power_brake_slowdown": _(
            "Hardware power brake slowdown is active: the system asked the GPU to cut power."
        ),
        "sw_thermal_slowdown": _(
            "Software thermal slowdown is active: the GPU is above its thermal target."
        ),
    }
    missing = [reason for reason in SLOWDOWN_REASONS if reason not in reasons]
    for reason in SLOWDOWN_REASONS:
        if reasons.get(reason):
            found.problem(f"clock_{reason}", "degraded", reason, messages[reason])
    if missing:
        found.unknown(
            "clock_event_reasons",
            _("Clock event reasons not reported: %(reasons)s.") % {"reasons": ", ".join(missing)},
        )


def fabric(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """NVSwitch systems: a fabric status naming an error is failed (the GPU cannot join the
    NVLink fabric, and CUDA refuses to start on it); a state other than Completed is degraded
    (the fabric manager has not finished, or is not running). GPUs without a fabric report
    "Not Supported" or nothing, and the rule does not apply to them."""
    state, status = gpu["fabric_state"], gpu["fabric_status"]
    if state is None or state.strip().lower() in ("not supported", "n/a"):
        if state is None and gpu["nvlink_links"]:
            found.unknown(
                "fabric",
                _("The GPU has NVLink links but its fabric state was not reported."),
            )
        else:
            found.skip()
        return
    if status is not None and status.strip().lower() not in ("success", "n/a"):
        found.problem(
            "fabric_error",
            "failed",
            status,
            _("NVLink fabric registration failed: %(status)s.") % {"status": status},
        )
    elif state.strip().lower() != "completed":
        found.problem(
            "fabric_not_completed",
            "degraded",
            state,
            _(
                "The NVLink fabric state is %(state)s, not Completed: the fabric manager has not "
                "finished setting up this GPU."
            )
            % {"state": state},
        )


def recovery_action(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """The recovery action the driver reports for the GPU (from R570; before, its reset
    status): GPU Reset Required or Node Reboot Required is failed (the GPU is unusable until it
    is reset, or the node rebooted); Drain P2P or Drain and Reset is degraded (running work can
    finish first); another action is degraded (needs review); None is fine. These are the
    verdicts of an Xid 154 naming the same action (rules/xid.py). Not reported: the rule does
    not apply, since older drivers lack both fields."""
    action = gpu.get("recovery_action")
    if action is None:
        found.skip()
        return
    values = {"action": action}
    if action == "None":
        return
    if action == "GPU Reset Required":
        found.problem(
            "recovery_gpu_reset",
            "failed",
            action,
            _(
                "The driver reports the recovery action %(action)s: the GPU is unusable until "
                "it is reset."
            )
            % values,
        )
    elif action == "Node Reboot Required":
        found.problem(
            "recovery_node_reboot",
            "failed",
            action,
            _(
                "The driver reports the recovery action %(action)s: the GPU is unusable until "
                "the node is rebooted."
            )
            % values,
        )
    elif action == "Drain P2P":
        found.problem(
            "recovery_drain_p2p",
            "degraded",
            action,
            _(
                "The driver reports the recovery action %(action)s: peer-to-peer traffic must "
                "be drained from the GPU; running work can finish first."
            )
            % values,
        )
    elif action == "Drain and Reset":
        found.problem(
            "recovery_drain_and_reset",
            "degraded",
            action,
            _(
                "The driver reports the recovery action %(action)s: the GPU should be reset once "
                "its running work has been drained."
            )
            % values,
        )
    else:
        found.problem(
            "recovery_action_unknown",
            "degraded",
            action,
            _(
                "The driver reports the recovery action %(action)s, which is not known here: "
                "needs review."
            )
            % values,
        )


def nvlink_status_known(node: NodeFacts) -> bool:
    """Whether the facts say which NVLink links are up: the link status was read, or some link
    is reported active (counters alone leave every link "not active")."""
    if any(name in source.lower() for source in node["sources"] for name in NVLINK_STATUS_SOURCES):
        return True
    return any(link["active"] for gpu in node["gpus"] for link in gpu["nvlink_links"])


def nvlink(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Some NVLink links inactive while others are active: degraded (a link is down). All links
    inactive is not judged: PCIe cards that can take an NVLink bridge report their links
    inactive when no bridge is fitted. Error counters above zero (replay, recovery, CRC):
    degraded. They count since the driver loaded; a node being accepted should start clean, and
    a reset clears them."""
    links = gpu["nvlink_links"]
    if not links:
        found.skip()  # no NVLink, or not read: the node rule nvlink_read says which
        return
    inactive = sorted(link["link"] for link in links if not link["active"])
    # With counters alone every link reads inactive; nvlink_read lists the missing status.
    if nvlink_status_known(node) and inactive and len(inactive) < len(links):
        found.problem(
            "nvlink_inactive",
            "degraded",
            len(inactive),
            _("%(inactive)s of %(total)s NVLink links are inactive (links %(links)s).")
            % {
                "inactive": len(inactive),
                "total": len(links),
                "links": ", ".join(str(number) for number in inactive),
            },
        )
    if not any(link["errors"] for link in links):
        found.unknown("nvlink_errors", _("NVLink error counters were not read."))
        return
    errors: dict[str, int] = {}
    for link in links:
        for name, count in link["errors"].items():
            if count and nvlink_error_counter(name):
                errors[name] = errors.get(name, 0) + count
    if errors:
        found.problem(
            "nvlink_errors",
            "degraded",
            sum(errors.values()),
            _("NVLink error counters are above zero: %(counters)s.")
            % {"counters": ", ".join(f"{name} {count}" for name, count in sorted(errors.items()))},
        )


# --- node rules ---------------------------------------------------------------------------------


def gpu_count(node: NodeFacts, found: Findings) -> None:
    """No GPU at all, or fewer GPUs than the operator said the node has: failed."""
    count = len(node["gpus"])
    expected = node["expected_gpu_count"]
    if count == 0:
        found.problem("no_gpus", "failed", 0, _("No GPU was found."))
    elif expected is not None and count < expected:
        found.problem(
            "fewer_gpus",
            "failed",
            count,
            ngettext(
                "%(count)s GPU found, %(expected)s expected",
                "%(count)s GPUs found, %(expected)s expected",
                count,
            )
            % {"count": count, "expected": expected},
        )
    elif expected is None:
        found.unknown(
            "gpu_count",
            _("No expected GPU count was given, so a missing GPU would go unnoticed."),
        )


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


def bus_key(raw: str | None) -> tuple[int, int, int, int] | None:
    """(domain, bus, device, function) of a PCI bus id, whatever its spelling: "0000:3B:00.0"
    and "00000000:3b:00.0" give the same key. None when it is not a bus id."""
    match = _BUS_PARTS.match(raw.strip()) if raw else None
    if match is None:
        return None
    domain, bus, device, function = match.groups()
    return (int(domain or "0", 16), int(bus, 16), int(device, 16), int(function or "0", 16))


@dataclass
class SmiNotice:
    """The notices nvidia-smi printed about one GPU (by bus id), of one kind."""

    bus: str | None  # as the notice prints it; None when the notice names no bus id
    gpu_index: int | None  # the GPU of the facts with that bus id, if any
    errors: list[str]  # the error texts, for a GPU nvidia-smi cannot reach


def smi_notices(node: NodeFacts, pattern: re.Pattern[str]) -> list[SmiNotice]:
    """The node's warnings matching `pattern`, one entry per GPU (by normalised bus id). A GPU
    of the facts with that bus id gives its index."""
    index_of: dict[tuple[int, int, int, int], int | None] = {}
    for gpu in node["gpus"]:
        key = bus_key(gpu["pci_bus_id"])
        if key is not None:
            index_of.setdefault(key, gpu["index"])
    found: dict[object, SmiNotice] = {}
    for warning in node["warnings"]:
        match = pattern.search(warning)
        if match is None:
            continue
        bus = match.group("bus")
        key = bus_key(bus)
        notice = found.setdefault(
            key if key is not None else bus,
            SmiNotice(bus=bus, gpu_index=index_of.get(key) if key else None, errors=[]),
        )
        error = match.groupdict().get("error")
        error = " ".join(error.split()).rstrip(".") if error else ""
        if error and error not in notice.errors:
            notice.errors.append(error)
    return list(found.values())


def _gpu_at(bus: str | None) -> str:
    if bus:
        return _("the GPU at %(bus)s") % {"bus": bus}
    return _("a GPU it does not name")


def inforom(node: NodeFacts, found: Findings) -> None:
    """nvidia-smi's "infoROM is corrupted at gpu ..." notice: degraded, on the GPU with that
    bus id (else on the node). The GPU works, but the records its infoROM keeps (ECC error
    counts, retired pages) cannot be trusted; NVIDIA's guidance is to reflash the infoROM or have
    the board serviced. Without a notice the rule does not apply: not every output keeps
    nvidia-smi's notices, so their absence is no finding (and no unknown either)."""
    notices = smi_notices(node, INFOROM_NOTICE)
    if not notices:
        found.skip()
        return
    for notice in notices:
        found.problem(
            "inforom_corrupted",
            "degraded",
            notice.bus,
            _(
                "nvidia-smi reports a corrupted infoROM on %(gpu)s: the GPU works, but its ECC "
                "and retired-page records cannot be trusted; the infoROM should be reflashed or "
                "the board serviced."
            )
            % {"gpu": _gpu_at(notice.bus)},
            gpu_index=notice.gpu_index,
        )


def unreachable_gpus(node: NodeFacts, found: Findings) -> None:
    """nvidia-smi's "Unable to determine the device handle for GPU ..." notice: failed. The GPU
    has fallen off the bus or the driver has lost it, as with Xid 79 (NVIDIA's action: restart
    the machine). The problem names the bus id and nvidia-smi's error; it stays with the node,
    or goes to the GPU with that bus id where the facts list one (an output read before the GPU
    was lost). Without a notice the rule does not apply, as for `inforom`; a GPU missing from
    the facts is judged by `gpu_count`."""
    notices = smi_notices(node, UNREACHABLE_NOTICE)
    if not notices:
        found.skip()
        return
    for notice in notices:
        found.problem(
            "gpu_unreachable",
            "failed",
            notice.bus,
            _(
                "nvidia-smi cannot reach %(gpu)s (%(error)s): the GPU has fallen off the bus or "
                "the driver has lost it; as for Xid 79, the machine must be restarted and the GPU "
                "checked."
            )
            % {
                "gpu": _gpu_at(notice.bus),
                "error": "; ".join(notice.errors) or _("no error given"),
            },
            gpu_index=notice.gpu_index,
        )


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
        values = {"gpu": _gpu_at(bus), "detail": detail or _("no code given")}
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


def dcgm(node: NodeFacts, found: Findings) -> None:
    """A DCGM diagnostic that failed is failed; one that warned is degraded. No results at all,
    or only skipped tests, means DCGM did not check anything."""
    tests = node["dcgm"]
    if not tests:
        found.unknown("dcgm", _("DCGM diagnostics were not run (no dcgmi diag results)."))
        return
    ran = False
    for test in tests:
        result = test["result"].strip().lower()
        ran = ran or result in ("pass", "fail", "warn")
        values = {"name": test["name"], "info": test["info"] or test["result"]}
        if result == "fail":
            found.problem(
                "dcgm_fail",
                "failed",
                test["name"],
                _("DCGM diagnostic %(name)s failed: %(info)s") % values,
                gpu_index=test["gpu_index"],
            )
        elif result == "warn":
            found.problem(
                "dcgm_warn",
                "degraded",
                test["name"],
                _("DCGM diagnostic %(name)s warned: %(info)s") % values,
                gpu_index=test["gpu_index"],
            )
    if not ran:
        found.unknown("dcgm", _("DCGM ran no test: every test was skipped or not run."))


def nvlink_read(node: NodeFacts, found: Findings) -> None:
    """NVLink link status (`nvidia-smi nvlink -s`) not read: listed as unknown. Once it was
    read, the GPU rule nvlink judges the links (a node without NVLink has none to judge)."""
    if nvlink_status_known(node):
        found.skip()
        return
    found.unknown(
        "nvlink",
        _(
            "NVLink link status (nvidia-smi nvlink -s) was not read (GPUs without NVLink have "
            "nothing to check here)."
        ),
    )


RULES: list[Rule] = [
    gpu_rule(ecc_mode),
    gpu_rule(ecc_errors),
    gpu_rule(remapped_rows),
    gpu_rule(retired_pages),
    gpu_rule(pcie_link),
    gpu_rule(clock_events),
    gpu_rule(fabric),
    gpu_rule(nvlink),
    gpu_rule(recovery_action),
    node_rule(gpu_count),
    node_rule(xid_events),
    node_rule(inforom),
    node_rule(unreachable_gpus),
    node_rule(nvswitch_errors),
    node_rule(gpu_init_failures),
    node_rule(dcgm),
    node_rule(nvlink_read),
]


# --- judging ------------------------------------------------------------------------------------


def worst(verdicts: Iterable[str]) -> Verdict:
    """The worst of some verdicts or severities; "healthy" when there are none."""
    result: Verdict = "healthy"
    for verdict in verdicts:
        if VERDICT_RANK[verdict] > VERDICT_RANK[result]:
            result = "failed" if verdict == "failed" else "degraded"
    return result


@dataclass(frozen=True)
class Assessment:
    """A node's health, and how many rule evaluations reached a conclusion (found a problem, or
    checked everything they look at and found nothing wrong)."""

    health: NodeHealth
    conclusive: int


def _position(position_of: dict[int, int], gpu_index: int | None) -> int | None:
    return None if gpu_index is None else position_of.get(gpu_index)


def assess_node(facts: NodeFacts, rules: list[Rule] | None = None) -> Assessment:
    """Run the rules on a node's facts; see `judge_node`."""
    gpus: list[GpuHealth] = [
        {
            "index": gpu["index"],
            "uuid": gpu["uuid"],
            "verdict": "healthy",
            "problems": [],
            "could_not_check": [],
        }
        for gpu in facts["gpus"]
    ]
    problems: list[Problem] = []
    unchecked: list[Unchecked] = []
    conclusive = 0
    # Node rules may name a GPU by its index: the first GPU with that index takes the finding;
    # an index that matches no GPU stays with the node (and keeps its gpu_index).
    position_of: dict[int, int] = {}
    for position, gpu in enumerate(facts["gpus"]):
        if gpu["index"] is not None:
            position_of.setdefault(gpu["index"], position)

    for rule in RULES if rules is None else rules:
        if rule.gpu is not None:
            for position, gpu in enumerate(facts["gpus"]):
                found = Findings(gpu["index"])
                rule.gpu(gpu, facts, found)
                gpus[position]["problems"].extend(found.problems)
                gpus[position]["could_not_check"].extend(found.unchecked)
                conclusive += found.conclusive
        if rule.node is not None:
            found = Findings(None)
            rule.node(facts, found)
            conclusive += found.conclusive
            for problem in found.problems:
                at = _position(position_of, problem["gpu_index"])
                (problems if at is None else gpus[at]["problems"]).append(problem)
            for item in found.unchecked:
                at = _position(position_of, item["gpu_index"])
                (unchecked if at is None else gpus[at]["could_not_check"]).append(item)

    for gpu_health in gpus:
        gpu_health["verdict"] = worst(problem["severity"] for problem in gpu_health["problems"])
    verdict = worst(
        [problem["severity"] for problem in problems]
        + [gpu_health["verdict"] for gpu_health in gpus]
    )
    health: NodeHealth = {
        "verdict": verdict,
        "problems": problems,
        "could_not_check": unchecked,
        "gpus": gpus,
    }
    return Assessment(health=health, conclusive=conclusive)


def judge_node(facts: NodeFacts) -> NodeHealth:
    """The health of one node: its verdict, its problems and what could not be checked, node-level
    and per GPU (in the order of facts["gpus"]). Plain JSON."""
    return assess_node(facts).health


def fully_checked(health: NodeHealth) -> bool:
    """Whether every check could be made, on the node and on each GPU: only then does "healthy"
    mean that nothing is wrong rather than that nothing wrong was found."""
    return not health["could_not_check"] and not any(
        gpu["could_not_check"] for gpu in health["gpus"]
    )


def all_problems(health: NodeHealth) -> list[Problem]:
    """The node's problems followed by each GPU's, in order."""
    return health["problems"] + [p for gpu in health["gpus"] for p in gpu["problems"]]
