"""Storing what a run read, node by node: raw outputs as evidence, facts,
health, the cluster's own facts."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from django.db import transaction

from poc.probes.facts import NodeFacts, new_node
from poc.probes.models import (
    Cluster,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
)
from poc.probes.rules import health
from poc.probes.services.probes import (
    NodeInput,
    RawOutput,
    store,
    store_nodes,
)
from workbench.storage import StoredFile, files_removed_on_failure
from workbench.typing import JSON, JSONObject

if TYPE_CHECKING:
    pass

MAX_CITED = 12  # raw outputs a result cites; the run's page has them all


@dataclass
class Collected:
    facts: list[NodeFacts]
    cited: list[StoredFile]
    verdicts: list[str]
    failed: list[str]
    unreachable: int = 0
    position: int = 0


def store_failed_node(
    run: ProbeRun, collected: Collected, host: str, error: str, outputs: list[RawOutput]
) -> None:
    with files_removed_on_failure() as created, transaction.atomic():
        node = ProbeNode.objects.create(
            run=run,
            host=host[:255],
            position=collected.position,
            facts=new_node(host=host),
            health={},
            verdict="",
            error=error[:2000],
        )
        _store_outputs(run, node, [o for o in outputs if o.text or o.error], created)
    collected.position += 1
    collected.failed.append(f"{host}: {error}")


def store_read_node(run: ProbeRun, collected: Collected, node: NodeInput) -> None:
    judged = health.judge_node(node.facts)
    with files_removed_on_failure() as created, transaction.atomic():
        cited = store_nodes(run, [(node, judged)], created, several=True, start=collected.position)
    collected.position += 1
    collected.facts.append(node.facts)
    collected.verdicts.append(judged["verdict"])
    room = MAX_CITED - len(collected.cited)
    if room > 0:
        collected.cited.extend(cited[:room])


def _int_or_none(value: JSON) -> int | None:
    return value if isinstance(value, int) else None


def raw_outputs(outputs: list[JSONObject]) -> list[RawOutput]:
    """An SSH node's command outputs (bundle-shaped) as raw outputs to keep."""
    return [
        RawOutput(
            str(o.get("name") or "output")[:500],
            str(o.get("stdout") or ""),
            _int_or_none(o.get("exit_code")),
            str(o.get("error") or o.get("stderr") or "")[:2000]
            if not o.get("stdout")
            else str(o.get("error") or ""),
        )
        for o in outputs
    ]


def command_failures(outputs: list[JSONObject]) -> str:
    """Why the GPU commands of a node gave nothing: their own errors, first ones first."""
    reasons = []
    for output in outputs:
        if not str(output.get("name", "")).startswith("nvidia-smi"):
            continue
        if output.get("error"):
            reasons.append(f"{str(output['name'])[:40]}: {output['error']}")
        elif output.get("exit_code") not in (0, None):
            detail = str(output.get("stderr") or output.get("stdout") or "").strip().splitlines()
            reasons.append(
                f"{str(output['name'])[:40]}: exit status {output['exit_code']}"
                + (f" ({detail[0][:160]})" if detail else "")
            )
    return "; ".join(reasons[:3])


def _store_outputs(
    run: ProbeRun, node: ProbeNode | None, outputs: list[RawOutput], created: list[str]
) -> None:
    """Raw outputs kept as evidence of the run (of one node, or of the run as a whole), after
    the ones it already has."""
    base = ProbeOutput.objects.filter(run=run).count()
    rows = []
    for offset, output in enumerate(outputs):
        stored = store(run.project, output.text, created) if output.text else None
        rows.append(
            ProbeOutput(
                run=run,
                node=node,
                name=output.name[:500],
                exit_code=output.exit_code,
                error=output.error[:2000],
                file=stored[0] if stored else "",
                sha256=stored[1] if stored else "",
                size=stored[2] if stored else 0,
                position=base + offset,
            )
        )
    ProbeOutput.objects.bulk_create(rows)


def store_raw(run: ProbeRun, raw: list[JSONObject], prefix: str = "") -> None:
    """A connector's raw responses, kept as evidence of the run (no node of their own)."""
    outputs = [
        RawOutput(
            f"{prefix}{item.get('name') or 'response'}",
            str(item.get("text") or ""),
            _int_or_none(item.get("status")),
            str(item.get("note") or ""),
        )
        for item in raw
    ]
    with files_removed_on_failure() as created, transaction.atomic():
        _store_outputs(run, None, outputs, created)


# What the Kubernetes and Slurm connectors read: a JSON document, except its "gpu_nodes", the
# GPU nodes found, which are NodeFacts documents.
type ConnectorFacts = dict[str, JSON | list[NodeFacts]]


def gpu_nodes_of(facts: ConnectorFacts) -> list[NodeFacts]:
    return cast("list[NodeFacts]", facts.get("gpu_nodes", []))


def keep_facts(run: ProbeRun, facts: ConnectorFacts, extra: JSONObject | None = None) -> None:
    kept = {k: v for k, v in facts.items() if k not in ("raw", "gpu_nodes")}
    if extra:
        kept.update(extra)
    ProbeRun.objects.filter(pk=run.pk, work_started_at=run.work_started_at).update(
        cluster_facts=kept
    )
    run.cluster_facts = kept


def store_gpu_nodes(
    run: ProbeRun, cluster: Cluster, collected: Collected, gpu_nodes: list[NodeFacts]
) -> None:
    ProbeRun.objects.filter(pk=run.pk).update(progress_total=max(len(gpu_nodes), 1))
    for facts in gpu_nodes:
        if cluster.expected_gpus_per_node and facts.get("expected_gpu_count") is None:
            facts["expected_gpu_count"] = cluster.expected_gpus_per_node
        store_read_node(run, collected, NodeInput(facts, []))
