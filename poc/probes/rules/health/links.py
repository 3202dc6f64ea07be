"""Links: PCIe width and speed, the NVLink fabric and links, their error counters."""

import re

from django.utils.translation import gettext as _

from poc.probes.facts import GpuFacts, NodeFacts
from poc.probes.rules.health.base import Findings

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
