"""Rules that judge GPU node facts: health verdicts (health.py), the Xid catalogue (xid.py) and
the catalogue of checks that acceptance actions are bound to (checks.py)."""

from poc.probes.rules.checks import (
    CHECKS,
    CHECKS_BY_KEY,
    CheckOutcome,
    CheckParamsError,
    describe,
    run_check,
    validate_params,
)
from poc.probes.rules.health import (
    RULES,
    GpuHealth,
    NodeHealth,
    Problem,
    Unchecked,
    fully_checked,
    judge_node,
)
from poc.probes.rules.xid import XIDS, XidInfo, severity_for, xid_info

__all__ = [
    "CHECKS",
    "CHECKS_BY_KEY",
    "RULES",
    "XIDS",
    "CheckOutcome",
    "CheckParamsError",
    "GpuHealth",
    "NodeHealth",
    "Problem",
    "Unchecked",
    "XidInfo",
    "describe",
    "fully_checked",
    "judge_node",
    "run_check",
    "severity_for",
    "validate_params",
    "xid_info",
]
