"""The rules in order, and judging a node with them: a verdict per GPU and node,
each problem, what could not be checked."""

from collections.abc import Iterable
from dataclasses import dataclass

from poc.probes.facts import NodeFacts
from poc.probes.rules.health.base import (
    VERDICT_RANK,
    Findings,
    GpuHealth,
    NodeHealth,
    Problem,
    Rule,
    Unchecked,
    Verdict,
    gpu_rule,
    node_rule,
)
from poc.probes.rules.health.kernel_log import gpu_init_failures, nvswitch_errors, xid_events
from poc.probes.rules.health.links import fabric, nvlink, nvlink_read, pcie_link
from poc.probes.rules.health.memory import ecc_errors, ecc_mode, remapped_rows, retired_pages
from poc.probes.rules.health.notices import inforom, unreachable_gpus
from poc.probes.rules.health.state import clock_events, dcgm, gpu_count, recovery_action

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
