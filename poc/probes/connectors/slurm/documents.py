"""Slurm's outputs a cluster's admin saved (`scontrol show nodes`, `sinfo`, slurmrestd's answers,
`sinfo --json`, a refused `sbatch`), read by the functions that read them live.

Command outputs go through `read_cli_outputs`, as over SSH; slurmrestd's answers (and the
`--json` outputs of the commands, which carry the same shapes) through `read_rest_answer`, as
from slurmrestd. Only two shapes have no live reader: the `sinfo` array of `sinfo --json` since
Slurm 23.02 (one element per node or group of nodes) and `sinfo`'s default summary (partitions
only); both are read into the same node and partition entries (`node_facts`,
`partition_facts`). What no document holds is "could not check: not among the uploaded
documents"."""

from __future__ import annotations

import re
from typing import Any

from poc.probes.connectors.slurm.cli import partition_facts, read_cli_outputs
from poc.probes.connectors.slurm.failure import parse_over_quota_output
from poc.probes.connectors.slurm.rest import REST_READS, read_rest_answer, rest_partition
from poc.probes.connectors.slurm.values import as_int, empty_facts, gpu_nodes, node_facts
from poc.probes.connectors.slurm.versions import meta_version, settle_versions

NOT_GIVEN = "not among the uploaded documents"
_API_VERSION = re.compile(r"v\d+\.\d+\.\d+")
_SUMMARY_HEADER = re.compile(r"^\s*PARTITION\s+AVAIL\s+TIMELIMIT\s+NODES\s+STATE\s+NODELIST\s*$")
_PROMPT = re.compile(r"^\s*\$\s*(\S.*)$")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def api_version(data: dict[str, Any]) -> str | None:
    """The OpenAPI or data parser version a JSON document names in its meta block."""
    plugin = _mapping(_mapping(data.get("meta")).get("plugin"))
    for key in ("type", "data_parser"):
        match = _API_VERSION.search(str(plugin.get(key) or ""))
        if match:
            return match.group(0)
    return None


def _said_by_a_command(data: dict[str, Any]) -> bool:
    """Whether a JSON document is a command's `--json` output rather than slurmrestd's answer:
    the commands name themselves in meta (Slurm 23.02 and later) and no OpenAPI plugin."""
    meta = _mapping(data.get("meta"))
    plugin = _mapping(meta.get("plugin"))
    return bool(meta.get("command")) or (bool(plugin) and not plugin.get("type"))


def sinfo_json(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Nodes and partitions of `sinfo --json` (Slurm 23.02 and later): each element of its
    `sinfo` array is one node (with -N) or a group of nodes alike, in one partition."""
    nodes: dict[str, dict[str, Any]] = {}
    partitions: dict[str, dict[str, Any]] = {}
    for item in data.get("sinfo") or []:
        if not isinstance(item, dict):
            continue
        partition = _mapping(item.get("partition"))
        if partition.get("name") and str(partition["name"]) not in partitions:
            partitions[str(partition["name"])] = rest_partition(partition)
        names = [str(n) for n in _mapping(item.get("nodes")).get("nodes") or [] if n]
        gres = _mapping(item.get("gres"))

        def alike(block: Any) -> Any:
            """A per-node figure of a group: its minimum where it equals its maximum."""
            if not isinstance(block, dict) or block.get("minimum") != block.get("maximum"):
                return None
            return as_int(block.get("minimum"))

        for name in names:
            if name in nodes:
                if partition.get("name") and partition["name"] not in nodes[name]["partitions"]:
                    nodes[name]["partitions"].append(str(partition["name"]))
                continue
            nodes[name] = node_facts(
                name=name,
                state=_mapping(item.get("node")).get("state"),
                reason=item.get("reason"),
                partitions=[str(partition.get("name") or "")],
                gres=gres.get("total") if "total" in gres else None,
                # What a group of nodes uses is summed over it: known for one node only.
                gres_used=gres.get("used") if "used" in gres and len(names) == 1 else None,
                cpus=alike(item.get("cpus")),
                memory=alike(item.get("memory")),
            )
    return list(nodes.values()), list(partitions.values())


def sinfo_summary_partitions(text: str) -> list[dict[str, Any]]:
    """Partitions of `sinfo`'s default output (PARTITION AVAIL TIMELIMIT NODES STATE
    NODELIST): its name ("*" marks the default), availability and nodes."""
    found: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or _SUMMARY_HEADER.match(line) or not fields[3].isdigit():
            continue
        raw, avail, _limit, count, _state, nodelist = fields[:6]
        name = raw.rstrip("*")
        entry = found.setdefault(
            name,
            partition_facts(
                name=name,
                state=avail,
                nodes=None,
                default=raw.endswith("*"),
                total_cpus=None,
                total_nodes=0,
                tres=None,
            ),
        )
        entry["total_nodes"] += int(count)
        entry["nodes"] = ",".join(n for n in (entry["nodes"], nodelist) if n)
    return list(found.values())


def is_sinfo_summary(text: str) -> bool:
    return any(_SUMMARY_HEADER.match(line) for line in text.splitlines()[:5])


def submit_scenario(text: str, document: str) -> dict[str, Any]:
    """The controlled failure as a refused (or accepted) sbatch / srun / salloc shows it, read
    by the live reader of the submit command's output; the command, when pasted with its
    prompt ("$ sbatch --gres=gpu:9 ..."), tells the GPUs asked for."""
    command = next((m.group(1) for line in text.splitlines() if (m := _PROMPT.match(line))), "")
    failed = "error:" in text
    outcome = parse_over_quota_output(
        1 if failed else 0, "" if failed else text, text if failed else "", command=command
    )
    outcome.pop("raw", None)
    outcome.pop("cancel_command", None)
    outcome["seconds"] = None
    outcome["note"] = f"read from {document} (not submitted by the workbench)"
    return outcome


def facts_from_documents(
    outputs: dict[str, str],
    answers: list[tuple[str, str, dict[str, Any]]],
    summary: str = "",
) -> dict[str, Any]:
    """The facts document of the live Slurm connectors, from commands' outputs ({command:
    text}, the commands of CLI_COMMANDS), JSON documents ((name, what, data): `what` one of
    REST_READS, or "sinfo" for the `sinfo` array of `sinfo --json`) and `sinfo`'s default
    summary, read for partitions where nothing else names them. Nodes come from one kind of
    document only: the caller refuses commands' and JSON nodes together."""
    facts = empty_facts(next((v for _n, _w, data in answers if (v := api_version(data))), None))
    said = facts["slurm_versions"]
    for _name, _what, data in answers:
        key = "client" if _said_by_a_command(data) else "slurmrestd"
        said[key] = said[key] or meta_version(data)
    json_version = said["client"] or said["slurmrestd"]
    if outputs:
        read_cli_outputs(facts, outputs)
        for entry in facts["could_not_check"]:
            entry["reason"] = str(entry["reason"]).replace(" not run", f" output: {NOT_GIVEN}")
    covered: set[str] = set()
    for what in REST_READS:
        given = [(name, data) for name, kind, data in answers if kind == what]
        if given:
            merged: dict[str, Any] = {key: [] for key in ("pings", "nodes", "partitions", "jobs")}
            for _name, data in given:
                for key in merged:
                    merged[key] += [i for i in data.get(key) or [] if isinstance(i, dict)]
            merged["statistics"] = next(
                (d["statistics"] for _n, d in given if "statistics" in d), {}
            )
            names = ", ".join(name for name, _d in given)
            read_rest_answer(facts, what, merged, f"slurm: {names}")
            covered.add(what)
    sinfo = [(name, data) for name, kind, data in answers if kind == "sinfo"]
    if sinfo:
        nodes: list[dict[str, Any]] = []
        partitions: dict[str, dict[str, Any]] = {}
        for _name, data in sinfo:
            found, parts = sinfo_json(data)
            nodes += found
            partitions.update({p["name"]: p for p in parts if p["name"] not in partitions})
        facts["nodes"] = nodes
        names = ", ".join(name for name, _d in sinfo)
        facts["gpu_nodes"] = gpu_nodes(nodes, f"slurm: {names} (sinfo --json)")
        facts["partitions"] = facts["partitions"] or list(partitions.values())
        covered |= {"nodes", "partitions"}
    if summary and not facts["partitions"]:
        facts["partitions"] = sinfo_summary_partitions(summary)
        covered.add("partitions")
    settle_versions(facts)
    topics = [str(c["what"]).split(" ")[0] for c in facts["could_not_check"]]
    facts["could_not_check"] = [
        entry
        for entry, topic in zip(facts["could_not_check"], topics, strict=True)
        if topic not in covered and not (topic == "slurm_version" and json_version)
    ]
    for what in ("slurm_version", "nodes", "partitions", "jobs"):
        # Commands' outputs name what they lacked themselves (read_cli_outputs).
        known = facts[what] if what == "slurm_version" else what in covered
        if not known and not outputs:
            facts["could_not_check"].append({"what": what, "reason": NOT_GIVEN})
    return facts
