"""Slurm's command-line outputs (scontrol, sinfo, squeue) read into the facts
document; the commands an SSH connector runs."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from poc.probes.connectors.slurm.values import (
    RAW_TEXT_LIMIT,
    as_int,
    as_text,
    count_of,
    empty_facts,
    gpu_nodes,
    node_facts,
)
from poc.probes.connectors.slurm.versions import command_version, config_version, settle_versions

# "Field:|" prints the field unpadded and untruncated, followed by "|". Reason goes last: it
# is free text and may itself hold "|".
SINFO_FIELDS = ("NodeList", "Partition", "StateComplete", "Gres", "GresUsed", "CPUs", "Memory")
SINFO_COMMAND = 'sinfo -N -h -O "' + ",".join(f"{f}:|" for f in (*SINFO_FIELDS, "Reason")) + '"'
SCONTROL_NODES_COMMAND = "scontrol -d show node -o"  # -d adds GresUsed
SCONTROL_PARTITIONS_COMMAND = "scontrol show partition -o"
SQUEUE_PENDING_COMMAND = 'squeue -a -h -t PENDING -o "%r"'
VERSION_COMMAND = "scontrol version"
# The same answer under the other spellings a caller may have run ("slurm 23.11.4").
VERSION_COMMANDS = (VERSION_COMMAND, "scontrol --version", "scontrol -V")
# slurmctld's own version ("SLURM_VERSION = 23.11.4"), where scontrol version is the login
# node's: the two differ while a cluster is upgraded.
SCONTROL_CONFIG_COMMAND = "scontrol show config"
CLI_COMMANDS = (
    VERSION_COMMAND,
    SCONTROL_CONFIG_COMMAND,
    SINFO_COMMAND,
    SCONTROL_NODES_COMMAND,
    SCONTROL_PARTITIONS_COMMAND,
    SQUEUE_PENDING_COMMAND,
)


_KEY = re.compile(r"(?:^|\s+)([A-Za-z][\w:/.]*)=")
_FREE_TEXT_KEYS = frozenset({"Reason", "Comment", "Extra", "OS"})
# Keys of `scontrol show node -o` (22.05 to 24.x); only used to tell keys from free text.
_NODE_KEY_NAMES = (
    "NodeName Arch CoresPerSocket CPUAlloc CPUEfctv CPUTot CPULoad AvailableFeatures "
    "ActiveFeatures Gres GresDrain GresUsed NodeAddr NodeHostName Port Version OS "
    "RealMemory AllocMem FreeMem Sockets Boards State ThreadsPerCore TmpDisk Weight Owner "
    "MCS_label Partitions BootTime SlurmdStartTime LastBusyTime ResumeAfterTime CfgTRES "
    "AllocTRES CapWatts CurrentWatts AveWatts ExtSensorsJoules ExtSensorsWatts "
    "ExtSensorsTemp Reason Comment Extra MemSpecLimit CoreSpecCount CPUSpecList NextState "
    "Topology InstanceId InstanceType ReservationName LastBusy Features"
)
_NODE_KEYS = frozenset(_NODE_KEY_NAMES.split())
_REASON_STAMP = re.compile(r"\s*\[[^\]\[]*@[^\]\[]*\]\s*$")


def parse_key_values(line: str, known: frozenset[str] = _NODE_KEYS) -> dict[str, str]:
    """The key=value pairs of one `scontrol show ... -o` line.

    Values may hold spaces ("OS=Linux 6.1.0 #1 SMP", "Reason=Not responding [root@...]") and
    "=" (CfgTRES=cpu=2,gres/gpu=8). A word=... after free text (Reason, Comment, Extra, OS)
    that is not a known key stays part of that text ("Reason=bad GPU Xid=79").
    """
    matches = list(_KEY.finditer(line))
    pairs: dict[str, str] = {}
    last: str | None = None
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        key, value = match.group(1), line[match.end() : end]
        if last in _FREE_TEXT_KEYS and key not in known:
            pairs[last] += line[match.start() : end]
            continue
        pairs[key] = value.strip()
        last = key
    if last is not None:
        pairs[last] = pairs[last].strip()
    return pairs


def _lines(text: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().lower().startswith("no ")  # "No nodes in ..."
    ]


def _records(text: str, first_key: str) -> list[str]:
    """One line per record of `scontrol show ...`: `-o` prints one already; without it a record
    runs over several indented lines ("NodeName=gpu1 Arch=x86_64 ...", "   Gres=gpu:4", ...),
    which are joined. A record starts at a line beginning with `first_key`=."""
    records: list[str] = []
    for line in _lines(text):
        if line.startswith(first_key + "=") or not records:
            records.append(line)
        else:
            records[-1] += " " + line
    return records


def parse_scontrol_nodes(text: str) -> list[dict[str, Any]]:
    """Nodes from `scontrol show node` (one line per node with -o, or the multi-line form);
    `-d` adds GresUsed."""
    nodes = []
    for line in _records(text, "NodeName"):
        pairs = parse_key_values(line)
        if "NodeName" not in pairs:
            continue
        reason = pairs.get("Reason")
        used = pairs.get("GresUsed")
        if used is None and "AllocTRES" in pairs and _tres_gpus(pairs.get("CfgTRES")) is not None:
            # Without -d there is no GresUsed; AllocTRES names the GPUs in use (none: empty),
            # but only where TRES tracks GPUs at all, which CfgTRES shows.
            used = f"gpu:{_tres_gpus(pairs['AllocTRES']) or 0}"
        nodes.append(
            node_facts(
                name=pairs["NodeName"],
                state=pairs.get("State"),
                reason=_REASON_STAMP.sub("", reason) if reason else None,
                partitions=(pairs.get("Partitions") or "").split(","),
                gres=pairs.get("Gres"),
                gres_used=used,
                cpus=pairs.get("CPUTot"),
                memory=pairs.get("RealMemory"),
                version=pairs.get("Version"),
            )
        )
    return nodes


def _tres_gpus(tres: str | None) -> int | None:
    """GPUs in a TRES string: "gres/gpu=8", else the sum of typed entries ("gres/gpu:a100=4",
    tracked alone where AccountingStorageTRES names only types); None without either."""
    typed: int | None = None
    for item in (tres or "").split(","):
        key, _, value = item.partition("=")
        key = key.strip()
        if key == "gres/gpu":
            return count_of(value)
        if key.startswith("gres/gpu:"):
            typed = (typed or 0) + (count_of(value) or 0)
    return typed


def parse_scontrol_partitions(text: str) -> list[dict[str, Any]]:
    """Partitions from `scontrol show partition` (one line per partition with -o, or the
    multi-line form)."""
    partitions = []
    for line in _records(text, "PartitionName"):
        pairs = parse_key_values(line, frozenset())
        if "PartitionName" not in pairs:
            continue
        partitions.append(
            partition_facts(
                name=pairs["PartitionName"],
                state=pairs.get("State"),
                nodes=pairs.get("Nodes"),
                default=pairs.get("Default", "").upper() == "YES",
                total_cpus=pairs.get("TotalCPUs"),
                total_nodes=pairs.get("TotalNodes"),
                tres=pairs.get("TRES"),
            )
        )
    return partitions


def partition_facts(
    *,
    name: str,
    state: Any,
    nodes: Any,
    default: bool | None,
    total_cpus: Any,
    total_nodes: Any,
    tres: Any,
) -> dict[str, Any]:
    states = state if isinstance(state, list) else [state]
    return {
        "name": name,
        "state": as_text(states[0]) if states else None,
        "nodes": as_text(nodes),
        "default": default,
        "total_cpus": as_int(total_cpus),
        "total_nodes": as_int(total_nodes),
        "gpus_total": _tres_gpus(as_text(tres)),
        "max_gpus_per_job": None,  # a QOS limit: needs slurmdbd
    }


def parse_sinfo_nodes(text: str) -> list[dict[str, Any]]:
    """Nodes from SINFO_COMMAND's output: one line per node and partition, "|" after each
    field, Reason last (it may hold "|" itself). Lines of one node merge their partitions."""
    nodes: dict[str, dict[str, Any]] = {}
    width = len(SINFO_FIELDS)
    for line in _lines(text):
        fields = line.split("|")
        if len(fields) < width + 1:
            continue
        name, partition, state, gres, gres_used, cpus, memory = fields[:width]
        reason = "|".join(fields[width:])
        reason = reason.removesuffix("|") if reason.endswith("|") else reason
        partition = partition.strip().rstrip("*")
        if name in nodes:
            if partition and partition not in nodes[name]["partitions"]:
                nodes[name]["partitions"].append(partition)
            continue
        nodes[name] = node_facts(
            name=name.strip(),
            state=state,
            reason=reason,
            partitions=[partition],
            gres=gres,
            gres_used=gres_used,
            cpus=cpus,
            memory=memory,
        )
    return list(nodes.values())


def _sinfo_partitions(text: str) -> list[dict[str, Any]]:
    """Partition names and the default marker from SINFO_COMMAND's output."""
    seen: dict[str, dict[str, Any]] = {}
    for line in _lines(text):
        fields = line.split("|")
        if len(fields) > 1 and fields[1].strip():
            raw = fields[1].strip()
            name = raw.rstrip("*")
            seen.setdefault(
                name,
                partition_facts(
                    name=name,
                    state=None,
                    nodes=None,
                    default=raw.endswith("*"),
                    total_cpus=None,
                    total_nodes=None,
                    tres=None,
                ),
            )
    return list(seen.values())


def facts_from_cli(outputs: dict[str, str]) -> dict[str, Any]:
    """The facts document from `{command: stdout}` of CLI_COMMANDS run on a login node.

    Nodes come from `scontrol -d show node -o`, filled in from sinfo where scontrol lacks a
    field (GresUsed without -d); a command missing from `outputs` lands in could_not_check.
    """
    facts = empty_facts(None)
    read_cli_outputs(facts, outputs)
    settle_versions(facts)
    return facts


def read_cli_outputs(facts: dict[str, Any], outputs: dict[str, str]) -> None:
    """Fill a facts document from `{command: stdout}` (the commands' outputs read over SSH or
    saved to files by a cluster's admin); the caller settles the versions afterwards."""
    for command, text in outputs.items():
        facts["raw"].append({"name": command, "status": None, "text": text[:RAW_TEXT_LIMIT]})

    def output(command: str, what: str) -> str | None:
        text = outputs.get(command)
        if text is None:
            facts["could_not_check"].append({"what": what, "reason": f"`{command}` not run"})
        return text

    said = facts["slurm_versions"]
    command = next((c for c in VERSION_COMMANDS if c in outputs), VERSION_COMMAND)
    said["client"] = command_version(output(command, "slurm_version"))
    said["controller"] = config_version(output(SCONTROL_CONFIG_COMMAND, "slurm_version"))
    sinfo_text = output(SINFO_COMMAND, "nodes (sinfo)")
    scontrol_text = output(SCONTROL_NODES_COMMAND, "nodes (scontrol)")
    sinfo = {n["name"]: n for n in parse_sinfo_nodes(sinfo_text or "")}
    nodes = parse_scontrol_nodes(scontrol_text or "")
    sources = []
    if nodes:
        sources.append("scontrol")
        for node in nodes:
            other = sinfo.get(node["name"])
            # sinfo's GresUsed names types and indexes: it beats a count read from AllocTRES.
            counted_only = all(
                e["indexes"] is None and e["type"] is None for e in node["gres_used"]
            )
            if (
                other
                and other["gpus_used"] is not None
                and (node["gpus_used"] is None or counted_only)
            ):
                node["gres_used"], node["gpus_used"] = other["gres_used"], other["gpus_used"]
                sources.append("sinfo")
    elif sinfo:
        nodes = list(sinfo.values())
        sources.append("sinfo")
    elif sinfo_text is not None or scontrol_text is not None:
        facts["could_not_check"].append({"what": "nodes", "reason": "no node in the output"})
    facts["nodes"] = nodes
    label = "/".join(dict.fromkeys(sources)) or "scontrol"
    facts["gpu_nodes"] = gpu_nodes(nodes, label)
    partitions_text = output(SCONTROL_PARTITIONS_COMMAND, "partitions")
    facts["partitions"] = parse_scontrol_partitions(partitions_text or "") or _sinfo_partitions(
        sinfo_text or ""
    )
    pending = output(SQUEUE_PENDING_COMMAND, "jobs")
    reasons = Counter(_pending_reason(line) for line in _lines(pending or ""))
    facts["jobs_pending_reasons"] = dict(reasons)


def _pending_reason(text: str) -> str:
    """A pending job's reason as squeue's %r prints it, without the nodes it names: the
    scheduler's description "ReqNodeNotAvail, UNAVAILABLE NODES:gpu[01-02]" counts with every
    other job held for the same reason, whichever nodes are down."""
    reason = text.strip().strip("()")
    head, found, _nodes = reason.partition(", UNAVAILABLE NODES:")
    return head if found else reason
