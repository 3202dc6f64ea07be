"""The Xid catalogue: what each Xid code means, the action NVIDIA recommends, and how it counts in
a node's health verdict.

Source: NVIDIA's "Xid Errors" documentation, page "Analyzing Xid Errors with the Xid Catalog",
https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (the catalogue for Ampere and
newer GPUs; also published as https://docs.nvidia.com/Xid-Catalog.xlsx). Per code it gives a
mnemonic, a description and a "Resolution Bucket (Immediate Action)": the action that returns the
system to service (IGNORE, RESTART_APP, RESET_GPU, RESTART_BM, WORKFLOW_XID_48, ...). `action`
below is that column, copied as written; `description` is the catalogue's description.

Every code listed here was checked against that page, as read in 2026: code, mnemonic, description
and immediate action. The one gap: Xid 61 is "Unused" there, and its meaning on Volta and older GPUs
(a separate, archived catalogue) was not checked.

`severity` is this project's decision, not NVIDIA's: how an event of this code in a node's kernel
log counts in the node's verdict (None: not a problem of the node). By default it follows the
action: a GPU that needs a reset or the machine a restart ("failed") is unusable until someone
acts, and the log does not say whether anyone has; workflows that need the event's registers
decoded, or that depend on other Xids, need a person to look ("degraded"); restarting the
application or ignoring the event says nothing about the node (None). Where the catalogue's own
text points at the hardware although the action is IGNORE or RESTART_APP, `severity` says so and
the entry's comment says why. A code missing from this table is "needs review" (degraded), never
ignored: see `severity_for`.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from poc.probes.facts import XidEvent

Severity = Literal["degraded", "failed"]

CATALOGUE_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"

# Immediate actions after which the node needs nothing from its operators: the application is
# restarted, or nothing is done at all.
NO_NODE_ACTION = frozenset({"IGNORE", "RESTART_APP"})

# The default verdict per immediate action (see the module docstring).
ACTION_SEVERITY: dict[str, Severity | None] = {
    "IGNORE": None,
    "RESTART_APP": None,
    "RESET_GPU": "failed",
    "RESTART_BM": "failed",
    "WORKFLOW_XID_48": "failed",
    # "A GPU reset or node reboot is needed to clear this error" (Xid 74).
    "WORKFLOW_NVLINK_ERR": "failed",
    # The action depends on the event's registers (Xid 144-150): a person decodes them.
    "WORKFLOW_NVLINK5_ERR": "degraded",
    # "Solo: RESTART_FM; not solo: IGNORE (follow the other Xid)".
    "WORKFLOW_XID_45": "degraded",
    # Xid 154 names the GPU's new recovery action; its events are judged by that action (see
    # RECOVERY_ACTIONS), and this is the verdict when the message names none known here.
    "XID_154": "degraded",
    "CHECK_MECHANICALS": "degraded",
    "UPDATE_SWFW": "degraded",
    "RESTART_VM": "degraded",
    "CHECK_UVM": "degraded",
    # Codes the catalogue marks unused on current GPUs: seeing one at all needs a look.
    "CONTACT_SUPPORT": "degraded",
}


@dataclass(frozen=True)
class XidInfo:
    """One row of the catalogue, with this project's verdict for it."""

    code: int
    mnemonic: str
    description: str | Promise  # translatable; str() it where a plain string is needed
    action: str  # NVIDIA's immediate action ("resolution bucket"), as written in the catalogue
    severity: Severity | None

    @property
    def needs_action(self) -> bool:
        """Whether NVIDIA's immediate action asks anything of the node's operators (more than
        restarting the application or ignoring the event)."""
        return self.action not in NO_NODE_ACTION


def _row(
    code: int,
    mnemonic: str,
    description: str | Promise,
    action: str,
    severity: Severity | None | Literal["default"] = "default",
) -> XidInfo:
    chosen = ACTION_SEVERITY.get(action, "degraded") if severity == "default" else severity
    return XidInfo(code, mnemonic, description, action, chosen)


_ROWS = [
    _row(8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", _("GPU stopped processing"), "RESTART_APP"),
    _row(
        11,
        "ROBUST_CHANNEL_GR_ERROR_MISSING_HW",
        _("Invalid or corrupted push buffer stream"),
        "RESTART_APP",
    ),
    # Usually an application fault (out-of-bounds access); repeats on the same GPU call for DCGM
    # diagnostics, which the dcgm rule covers when they were run.
    _row(13, "ROBUST_CHANNEL_GR_EXCEPTION", _("Graphics Engine Exception"), "RESTART_APP"),
    _row(
        25,
        "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY",
        _("Invalid or illegal push buffer stream"),
        "RESTART_APP",
    ),
    # A memory page fault, typically an application bug.
    _row(31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", _("GPU memory page fault"), "RESTART_APP"),
    # The catalogue's action is RESTART_APP, but its text says these "primarily involve quality
    # issues on PCI, and are generally not caused by user application actions": the link needs
    # a look.
    _row(
        32,
        "ROBUST_CHANNEL_PBDMA_ERROR",
        _("Invalid or corrupted push buffer stream"),
        "RESTART_APP",
        "degraded",
    ),
    _row(38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", _("Driver firmware error"), "IGNORE"),
    # "The GPU remains in a healthy state": a software-induced fault of the application.
    _row(43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", _("GPU stopped processing"), "IGNORE"),
    _row(
        44,
        "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW",
        _("Graphics Engine fault during context switch"),
        "IGNORE",
    ),
    _row(
        45,
        "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
        _("Preemptive cleanup, due to previous errors"),
        "WORKFLOW_XID_45",
    ),
    _row(46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", _("GPU stopped processing"), "RESET_GPU"),
    _row(48, "ROBUST_CHANNEL_GPU_ECC_DBE", _("Double Bit ECC Error"), "WORKFLOW_XID_48"),
    _row(
        54,
        "SILENT_RUNNING_PWR_REDUCED_CLOCKING",
        _("Auxiliary power is not connected to the GPU board"),
        "CHECK_MECHANICALS",
    ),
    # The catalogue lists it as unused on Ampere and newer GPUs (action CONTACT_SUPPORT); seeing it
    # at all needs a look. Its meaning on older GPUs (a micro-controller breakpoint, going by the
    # mnemonic) is in the archived catalogue for Volta and older, which was not checked here.
    _row(61, "PMU_BREAKPOINT", _("Unused on Ampere and newer GPUs"), "CONTACT_SUPPORT"),
    _row(62, "PMU_HALT_ERROR", _("Internal micro-controller halt"), "RESET_GPU"),
    # A row was remapped (or a page retired) successfully. Whether a reset is still pending is
    # judged from the remapped-rows and retired-pages facts, not from the log.
    _row(63, "INFOROM_DRAM_RETIREMENT_EVENT", _("GPU memory remapping event"), "IGNORE"),
    _row(64, "INFOROM_DRAM_RETIREMENT_FAILURE", _("GPU memory remapping failure"), "RESET_GPU"),
    _row(
        66, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", _("Illegal access by driver"), "IGNORE"
    ),
    _row(67, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", _("Illegal access by driver"), "IGNORE"),
    _row(68, "ROBUST_CHANNEL_NVDEC0_ERROR", _("NVDEC0 Exception"), "RESTART_APP"),
    _row(69, "ROBUST_CHANNEL_GR_CLASS_ERROR", _("Graphics Engine class error"), "RESTART_APP"),
    _row(74, "NVLINK_ERROR", _("NVLink Error"), "WORKFLOW_NVLINK_ERR"),
    _row(
        79,
        "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
        _("GPU has fallen off the bus"),
        "RESTART_BM",
    ),
    # Immediate action IGNORE, investigatory CONTACT_SUPPORT. A high single-bit error rate is the
    # usual forerunner of failing memory, so it is worth a look before the GPU is accepted.
    _row(92, "EXCESSIVE_SBE_INTERRUPTS", _("High single-bit ECC error rate"), "IGNORE", "degraded"),
    _row(
        93,
        "INFOROM_ERASE_LIMIT_EXCEEDED",
        _("Non-fatal violation of provisioned InfoROM wear limit"),
        "IGNORE",
    ),
    # Immediate action RESTART_APP, but the catalogue adds "It is recommended to reset the GPU
    # when convenient": a contained memory error is a memory error.
    _row(
        94, "ROBUST_CHANNEL_CONTAINED_ERROR", _("Contained memory error"), "RESTART_APP", "degraded"
    ),
    _row(95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", _("Uncontained memory error"), "RESET_GPU"),
    _row(109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", _("Context Switch Timeout Error"), "RESET_GPU"),
    _row(110, "SEC_FAULT_ERROR", _("Security Fault Error"), "RESET_GPU"),
    _row(119, "GSP_RPC_TIMEOUT", _("GSP RPC Timeout"), "RESET_GPU"),
    _row(120, "GSP_ERROR", _("GSP Error"), "RESET_GPU"),
    # Immediate action IGNORE (corrected errors on the C2C link to a Grace CPU), but "resetting
    # the GPU at an available service window will allow the GPU to retrain the link".
    _row(121, "C2C_ERROR", _("C2C Error"), "IGNORE", "degraded"),
    _row(136, "ALI_TRAINING_FAIL", _("Link Training Failed"), "RESET_GPU"),
    _row(137, "NVLINK_PRIV_ERR", _("NVLink Privilege Error"), "IGNORE"),
    _row(140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", _("ECC Unrecovered Error"), "RESET_GPU"),
    _row(143, "GPU_INIT_ERROR", _("GPU Initialization Error"), "RESET_GPU"),
    _row(144, "NVLINK_SAW_ERROR", _("NVLink: SAW Error"), "WORKFLOW_NVLINK5_ERR"),
    _row(145, "NVLINK_RLW_ERROR", _("NVLink: RLW Error"), "WORKFLOW_NVLINK5_ERR"),
    _row(146, "NVLINK_TLW_ERROR", _("NVLink: TLW Error"), "WORKFLOW_NVLINK5_ERR"),
    _row(147, "NVLINK_TREX_ERROR", _("NVLink: TREX Error"), "WORKFLOW_NVLINK5_ERR"),
    _row(148, "NVLINK_NVLPW_CTRL_ERROR", _("NVLink: NVLPW_CTRL Error"), "WORKFLOW_NVLINK5_ERR"),
    _row(149, "NVLINK_NETIR_ERROR", _("NVLink: NETIR Error"), "WORKFLOW_NVLINK5_ERR"),
    _row(150, "NVLINK_MSE_ERROR", _("NVLink: MSE Error"), "WORKFLOW_NVLINK5_ERR"),
    _row(154, "GPU_RECOVERY_ACTION_CHANGED", _("GPU Recovery Action Changed"), "XID_154"),
    _row(155, "NVLINK_SW_DEFINED_ERROR", _("NVLink: SW Defined Error"), "RESET_GPU"),
    _row(156, "RESOURCE_RETIREMENT_EVENT", _("Resource Retirement Event"), "RESET_GPU"),
    _row(157, "RESOURCE_RETIREMENT_FAILURE", _("Resource Retirement Failure"), "IGNORE"),
    _row(158, "GPU_FATAL_TIMEOUT", _("GPU Fatal Timeout"), "RESET_GPU"),
]

XIDS: dict[int, XidInfo] = {row.code: row for row in _ROWS}

# Xid 154 (R550 and newer drivers) says that the GPU's recovery action changed, e.g. "GPU recovery
# action changed from 0x0 (None) to 0x1 (GPU Reset Required)". The action is NVML's
# nvmlDeviceGpuRecoveryAction_t: the number and the name the driver prints for it, with the
# verdict an event naming it as the new action gets. A GPU that needs a reset, or whose node
# needs a reboot, is unusable until someone acts ("failed"); draining peer-to-peer traffic
# (and then resetting) can wait for running work to finish ("degraded"); None says the GPU is
# back to normal. Other values (newer drivers add some) keep the catalogue's "degraded".
RECOVERY_ACTION_XID = 154
RECOVERY_ACTIONS: dict[int, tuple[str, Severity | None]] = {
    0: ("None", None),
    1: ("GPU Reset Required", "failed"),
    2: ("Node Reboot Required", "failed"),
    3: ("Drain P2P", "degraded"),
    4: ("Drain and Reset", "degraded"),
}
# The new action: "to 0x1 (GPU Reset Required)", "to 0x1", or the name alone ("to GPU Reset
# Required").
_RECOVERY_TO = re.compile(
    r"\bchanged\b.{0,80}?\bto\s+"
    r"(?:(0x[0-9a-f]{1,8}|\d{1,3})\b\s*(?:\(([^()]{1,60})\))?|([A-Za-z][A-Za-z0-9 ]{1,60}))",
    re.IGNORECASE,
)


def recovery_action(message: str) -> int | None:
    """The recovery action an Xid 154 message names as the new one (its number in
    RECOVERY_ACTIONS, or another number the driver printed), or None when it names none."""
    match = _RECOVERY_TO.search(message)
    if match is None:
        return None
    number, _name, bare = match.groups()
    if number is not None:
        return int(number, 16) if number.lower().startswith("0x") else int(number)
    wanted = " ".join(bare.split()).lower()
    for value, (name, _severity) in RECOVERY_ACTIONS.items():
        if wanted.startswith(name.lower()):
            return value
    return None


def event_severity(code: int, message: str) -> Severity | None:
    """How one event counts in a verdict: `severity_for(code)`, except that an Xid 154 naming a
    known recovery action counts as that action (see RECOVERY_ACTIONS)."""
    if code == RECOVERY_ACTION_XID:
        action = recovery_action(message)
        if action in RECOVERY_ACTIONS:
            return RECOVERY_ACTIONS[action][1]
    return severity_for(code)


def current_events(events: Iterable[XidEvent]) -> list[tuple[XidEvent, Severity | None]]:
    """Each event with how it counts. An Xid 154 states the GPU's recovery action from then on,
    so only the last one of each GPU (by index, else bus id) counts; earlier ones count as
    nothing (a later "to 0x0 (None)" means the GPU is back to normal)."""
    listed = list(events)
    last: dict[tuple[int | None, str | None], int] = {}
    for position, event in enumerate(listed):
        if event["code"] == RECOVERY_ACTION_XID:
            last[_gpu_of(event)] = position
    judged: list[tuple[XidEvent, Severity | None]] = []
    for position, event in enumerate(listed):
        if event["code"] == RECOVERY_ACTION_XID and last[_gpu_of(event)] != position:
            judged.append((event, None))
        else:
            judged.append((event, event_severity(event["code"], event["message"])))
    return judged


def _gpu_of(event: XidEvent) -> tuple[int | None, str | None]:
    if event["gpu_index"] is not None:
        return event["gpu_index"], None
    return None, event["pci_bus_id"]


def xid_info(code: int) -> XidInfo | None:
    """The catalogue row of an Xid code, or None when the code is not in the catalogue here."""
    return XIDS.get(code)


def severity_for(code: int) -> Severity | None:
    """How an event of this code counts in a verdict: None (not a problem of the node),
    "degraded" or "failed". Codes not in the catalogue are "degraded": they need review."""
    info = XIDS.get(code)
    return "degraded" if info is None else info.severity
