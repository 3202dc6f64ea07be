"""The GPU's and the node's state: clock events, the recovery action nvidia-smi
asks for, the GPU count, DCGM diagnostics."""

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import GpuFacts, NodeFacts
from poc.probes.rules.health.base import Findings

# Clock event reasons that mean the GPU is being slowed by something wrong with it or around it
# (heat, power delivery). gpu_idle, sw_power_cap, applications_clocks_setting, sync_boost and
# display_clock_setting are normal operation.
SLOWDOWN_REASONS = (
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
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


def gpu_count(node: NodeFacts, found: Findings) -> None:
    """No GPU at all, or fewer GPUs than the operator said the node has: failed. When no
    output read lists the node's GPUs (a kernel log alone, a -q fragment, nvidia-smi
    --version), the inventory is unknown: the count could not be checked."""
    count = len(node["gpus"])
    expected = node["expected_gpu_count"]
    if not node.get("gpus_listed", True):
        found.unknown(
            "gpu_count",
            _(
                "The inventory is unknown: no output read lists the node's GPUs (a kernel log "
                "or a fragment of nvidia-smi output alone)."
            ),
        )
    elif count == 0:
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
