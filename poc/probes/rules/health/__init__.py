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

A module per subject: `memory`, `links`, `state`, `notices`, `kernel_log`; `base` (what a
verdict and a rule are made of) and `judging` (the rules in order, and a node judged by them).
"""

from poc.probes.rules.health.base import (
    VERDICT_RANK,
    Findings,
    GpuCheck,
    GpuHealth,
    NodeCheck,
    NodeHealth,
    Problem,
    Rule,
    Severity,
    Unchecked,
    Verdict,
    gpu_rule,
    node_rule,
)
from poc.probes.rules.health.judging import (
    RULES,
    Assessment,
    all_problems,
    assess_node,
    fully_checked,
    judge_node,
    worst,
)
from poc.probes.rules.health.kernel_log import (
    INIT_FAILURE_WARNING,
    KERNEL_LOG_WORDS,
    SXID_WARNING,
    gpu_init_failures,
    init_failures,
    kernel_log_read,
    nvswitch_errors,
    switch_errors,
    xid_events,
)
from poc.probes.rules.health.links import (
    BUSY_PERCENT,
    NVLINK_ERROR_WORDS,
    NVLINK_NOT_ERRORS,
    NVLINK_STATUS_SOURCES,
    fabric,
    nvlink,
    nvlink_error_counter,
    nvlink_read,
    nvlink_status_known,
    pcie_link,
)
from poc.probes.rules.health.memory import (
    RETIRED_PAGES_LIMIT,
    ecc_errors,
    ecc_mode,
    remapped_rows,
    retired_pages,
)
from poc.probes.rules.health.notices import (
    INFOROM_NOTICE,
    UNREACHABLE_NOTICE,
    SmiNotice,
    bus_key,
    inforom,
    smi_notices,
    unreachable_gpus,
)
from poc.probes.rules.health.state import (
    SLOWDOWN_REASONS,
    clock_events,
    dcgm,
    gpu_count,
    recovery_action,
)

__all__ = [
    "Assessment",
    "BUSY_PERCENT",
    "Findings",
    "GpuCheck",
    "GpuHealth",
    "INFOROM_NOTICE",
    "INIT_FAILURE_WARNING",
    "KERNEL_LOG_WORDS",
    "NVLINK_ERROR_WORDS",
    "NVLINK_NOT_ERRORS",
    "NVLINK_STATUS_SOURCES",
    "NodeCheck",
    "NodeHealth",
    "Problem",
    "RETIRED_PAGES_LIMIT",
    "RULES",
    "Rule",
    "SLOWDOWN_REASONS",
    "SXID_WARNING",
    "Severity",
    "SmiNotice",
    "UNREACHABLE_NOTICE",
    "Unchecked",
    "VERDICT_RANK",
    "Verdict",
    "all_problems",
    "assess_node",
    "bus_key",
    "clock_events",
    "dcgm",
    "ecc_errors",
    "ecc_mode",
    "fabric",
    "fully_checked",
    "gpu_count",
    "gpu_init_failures",
    "gpu_rule",
    "inforom",
    "init_failures",
    "judge_node",
    "kernel_log_read",
    "node_rule",
    "nvlink",
    "nvlink_error_counter",
    "nvlink_read",
    "nvlink_status_known",
    "nvswitch_errors",
    "pcie_link",
    "recovery_action",
    "remapped_rows",
    "retired_pages",
    "smi_notices",
    "switch_errors",
    "unreachable_gpus",
    "worst",
    "xid_events",
]
