"""The software and hardware combinations a probe run saw running: GPU model, driver, CUDA,
container runtime, platform (Kubernetes or the node's operating system) and scheduler version,
one per distinct set, with the hosts it ran on and whether any of them failed its checks.

The compatibility matrix (reports/procurement) reads these as "verified" (or "failed") claims,
each pointing at its run: nothing is typed for what a probe has read.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from poc.probes.models import ProbeRun, Verdict

FIELDS = ("gpu_model", "driver", "cuda", "runtime", "platform", "scheduler")


@dataclass(frozen=True)
class Observed:
    gpu_model: str
    driver: str
    cuda: str
    runtime: str
    platform: str
    scheduler: str
    hosts: tuple[str, ...]
    failed: bool  # a node of this combination failed its checks

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(getattr(self, name) for name in FIELDS)


def _text(value: object) -> str:
    return str(value).strip()[:120] if isinstance(value, str | int | float) and value else ""


def _cluster_nodes(facts: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    nodes = facts.get("nodes")
    if not isinstance(nodes, list):
        return {}
    return {
        str(n["name"]): n
        for n in nodes
        if isinstance(n, Mapping) and isinstance(n.get("name"), str)
    }


def observed(run: ProbeRun, nodes: Iterable[Any] | None = None) -> list[Observed]:
    """The combinations `run` read, in the order their first node was read. A node that could
    not be read, or whose GPU stack told nothing (no model, driver or CUDA), adds none."""
    facts = run.cluster_facts if isinstance(run.cluster_facts, Mapping) else {}
    k8s = _cluster_nodes(facts)
    server = _text(facts.get("server_version"))
    slurm = _text(facts.get("slurm_version"))
    found: dict[tuple[str, ...], tuple[list[str], bool]] = {}
    for node in nodes if nodes is not None else run.nodes.all():
        if node.error or not isinstance(node.facts, Mapping):
            continue
        gpus = node.facts.get("gpus") or []
        model = next(
            (_text(g.get("name")) for g in gpus if isinstance(g, Mapping) and g.get("name")), ""
        )
        cluster_node = k8s.get(node.host, {})
        key = (
            model or _text(cluster_node.get("model")),
            _text(node.facts.get("driver_version")),
            _text(node.facts.get("cuda_version")),
            _text(cluster_node.get("container_runtime")),
            f"Kubernetes {server}" if server else _text(cluster_node.get("os_image")),
            f"Slurm {slurm}" if slurm else "",
        )
        if not any(key[:3]):
            continue
        hosts, failed = found.get(key, ([], False))
        hosts.append(node.host or f"node {node.position}")
        found[key] = (hosts, failed or node.verdict == Verdict.FAILED)
    return [
        Observed(**dict(zip(FIELDS, key, strict=True)), hosts=tuple(hosts), failed=failed)
        for key, (hosts, failed) in found.items()
    ]
