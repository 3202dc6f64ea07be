"""What a verdict is made of: problems, what could not be checked, the findings a
rule adds to, and rules on a GPU or a node."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from poc.probes.facts import GpuFacts, NodeFacts

Verdict = Literal["healthy", "degraded", "failed"]
Severity = Literal["degraded", "failed"]

VERDICT_RANK: dict[str, int] = {"healthy": 0, "degraded": 1, "failed": 2}


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
