"""The check catalogue: fixed, parameterized checks that an acceptance action can be bound to.

A check reads the facts of every node of one probe run and answers "passed", "failed" or
"unable" (it could not run: the facts it needs were not reported, there was no benchmark, the
GPU has no published peak...). It never guesses: a fact that was not reported makes a check
unable unless a definite failure was already found elsewhere in the run. There are no free-form
expressions: a binding names a check of `CHECKS` and gives its parameters, which
`validate_params` checks against the check's schema.

    validate_params(key, params) -> dict        # cleaned params, or CheckParamsError
    run_check(key, params, nodes) -> CheckOutcome
    describe(key, params) -> str                # "GPU count ≥ 8"

    CheckOutcome = {"status": "passed" | "failed" | "unable",
                    "measured": str,   # what was measured, human-readable
                    "detail": str,     # why it failed, or why it could not run
                    "check": str}      # the check as a statement with its parameters

Each check's semantics are documented under "Probe rules" in docs/probes.md.

A module per subject: `inventory` (what the nodes have), `gpu_health`, `performance`,
`scheduling` (what a cluster run read); `base` (what a check is made of), `catalogue` (every
check, the one mapping from facts to acceptance checks) and `params` (validating, describing,
running).
"""

from poc.probes.rules.checks.base import Check, CheckOutcome, CheckParamsError, Param, Status
from poc.probes.rules.checks.catalogue import CHECKS, CHECKS_BY_KEY
from poc.probes.rules.checks.params import describe, kind_text, run_check, validate_params

__all__ = [
    "CHECKS",
    "CHECKS_BY_KEY",
    "Check",
    "CheckOutcome",
    "CheckParamsError",
    "Param",
    "Status",
    "describe",
    "kind_text",
    "run_check",
    "validate_params",
]
