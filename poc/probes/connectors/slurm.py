"""Slurm: what the cluster declares about its GPUs, read through slurmrestd or Slurm's commands.

Two ways in, one result. `probe_slurm_rest` asks slurmrestd (JWT in `X-SLURM-USER-NAME` /
`X-SLURM-USER-TOKEN`); an SSH connector runs `CLI_COMMANDS` on a login node and hands their
output to `facts_from_cli`. Both return the same facts document (FACTS_FORMAT):

    {"format", "api_version" (None from the CLI), "slurm_version",
     "nodes": [{"name", "state", "state_flags", "reason", "partitions", "gres", "gres_used",
                "gpus_total", "gpus_used", "cpus", "real_memory_mb"}],
     "partitions": [{"name", "state", "nodes", "default", "total_cpus", "total_nodes",
                     "gpus_total", "max_gpus_per_job"}],
     "jobs_pending_reasons": {reason: count}, "controllers": [...], "diag": {...} | None,
     "could_not_check": [{"what", "reason"}], "raw": [{"name", "status", "text"}],
     "gpu_nodes": [NodeFacts, ...]}

`state` is the base state in lower case ("idle", "mixed", "allocated", "down"), `state_flags`
the rest in upper case ("DRAIN", "NOT_RESPONDING"), whatever the source spelled ("drng",
"RESERVED", "IDLE+DRAIN", ["IDLE", "DRAIN"]); `state` is None where a one-word spelling hides a
base state it does not pin down ("INVAL", "REBOOT^"). A partition's `default` is None where the
source does not say (slurmrestd v0.0.39 and later leave partition flags out). GRES entries
are `{"name", "type", "count", "indexes"}` ("gpu:h200:3(IDX:0-2)" -> gpu, h200, 3, "0-2").
`gpus_total` / `gpus_used` are None where the source did not say (never 0 for unknown); a node
Slurm declares no GRES on has 0. `max_gpus_per_job` is always None here: Slurm keeps per-job
GPU limits in QOS records, which only slurmdbd serves. `gpu_nodes` holds one GPU fact document
(poc/probes/facts.py) per node with GPUs: one GPU per declared GRES gpu, named by its type,
everything else unknown, because Slurm knows no more about them.

The controlled failure (`over_quota_rest`, `over_quota_command` + `parse_over_quota_output`)
submits a real job asking for more GPUs than any node has; a healthy controller refuses it at
submit ("Requested node configuration is not available"). A job accepted nonetheless is
cancelled and the result says so. (22.05 still keeps a FAILED record of the refused request,
Reason=BadConstraints, until MinJobAge passes: nothing runs or waits.)

Measured against slurmrestd 22.05 (openapi/v0.0.36-v0.0.38): a token slurmctld rejects is not
a 401 there but a 500 on every path ("Unspecified error"; "Zero Bytes were transmitted or
received" on submit); only a request without credentials gets 401. The reasons say so.
Shapes of v0.0.39 and later (lists for states, numbers as {"set", "number"}) are read where
they are known from Slurm's documentation; they were not measured.

Pure Python, no Django: the network guard is the caller's `resolve(host, port)`.
"""

from __future__ import annotations

import http.client
import json
import re
import shlex
import socket
import ssl
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from poc.probes.facts import GpuFacts, NodeFacts, new_gpu, new_node

FACTS_FORMAT = "workbench-slurm-facts/1"
SCENARIO = "more_gpus_than_any_node"
# Newest first. 22.05 serves v0.0.36-v0.0.38; later releases drop the old ones.
KNOWN_API_VERSIONS = tuple(f"v0.0.{n}" for n in range(43, 35, -1))
# Versions of later releases (25.11 adds v0.0.44), tried after the known ones when slurmrestd
# does not serve its OpenAPI document: a server that dropped every known version still answers.
LATER_API_VERSIONS = tuple(f"v0.0.{n}" for n in range(44, 50))
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
RAW_TEXT_LIMIT = 1_000_000
MAX_GPUS_PER_NODE = 1024  # more declared GPUs than this is a typo, not hardware

# "Field:|" prints the field unpadded and untruncated, followed by "|". Reason goes last: it
# is free text and may itself hold "|".
SINFO_FIELDS = ("NodeList", "Partition", "StateComplete", "Gres", "GresUsed", "CPUs", "Memory")
SINFO_COMMAND = 'sinfo -N -h -O "' + ",".join(f"{f}:|" for f in (*SINFO_FIELDS, "Reason")) + '"'
SCONTROL_NODES_COMMAND = "scontrol -d show node -o"  # -d adds GresUsed
SCONTROL_PARTITIONS_COMMAND = "scontrol show partition -o"
SQUEUE_PENDING_COMMAND = 'squeue -a -h -t PENDING -o "%r"'
VERSION_COMMAND = "scontrol version"
CLI_COMMANDS = (
    VERSION_COMMAND,
    SINFO_COMMAND,
    SCONTROL_NODES_COMMAND,
    SCONTROL_PARTITIONS_COMMAND,
    SQUEUE_PENDING_COMMAND,
)


class ConnectorError(Exception):
    """Nothing could be read; the message is one readable line and never holds the token."""


@dataclass
class SlurmRestTarget:
    """Where slurmrestd listens and who asks: `url` like http://slurm.example.com:6820."""

    url: str
    user: str
    token: str
    timeout: float = 20.0

    def __repr__(self) -> str:  # the token stays out of logs and tracebacks
        return f"SlurmRestTarget(url={self.url!r}, user={self.user!r}, token='***')"


# --- values -----------------------------------------------------------------------------

_NULLS = frozenset({"", "(null)", "n/a", "none", "null", "unknown"})
_STATE_SUFFIXES = {
    "*": "NOT_RESPONDING",
    "~": "POWERED_DOWN",
    "#": "POWERING_UP",
    "%": "POWERING_DOWN",
    "!": "POWER_DOWN",
    "$": "MAINTENANCE",
    "@": "REBOOT_REQUESTED",
    "^": "REBOOT_ISSUED",
    "-": "PLANNED",
}
# One-word states: what node_state_string() prints (sinfo %T, scontrol up to 21.08, slurmrestd
# v0.0.36) and node_state_string_compact() (sinfo %t), as the base state and flag they stand
# for. Where the word hides a base state that Slurm's choice of word does not pin down, the base
# is None rather than a guess ("INVAL", "FAIL", "REBOOT", "COMPLETING"); a flag printed alone
# means the base state is UNKNOWN ("CLOUD", "POWERED_DOWN").
_BASE_STATES: dict[str, tuple[str | None, str | None]] = {
    "alloc": ("allocated", None),
    "mix": ("mixed", None),
    "unk": ("unknown", None),
    "futr": ("future", None),
    "drain": ("idle", "DRAIN"),
    "drained": ("idle", "DRAIN"),
    "drng": ("allocated", "DRAIN"),
    "draining": ("allocated", "DRAIN"),
    "resv": ("idle", "RESERVED"),
    "reserved": ("idle", "RESERVED"),
    "plnd": ("idle", "PLANNED"),
    "planned": ("idle", "PLANNED"),
    "npc": ("idle", "PERFCTRS"),
    "perfctrs": ("idle", "PERFCTRS"),
    "maint": ("idle", "MAINTENANCE"),
    "failg": ("allocated", "FAIL"),
    "failing": ("allocated", "FAIL"),
    "fail": (None, "FAIL"),
    "comp": (None, "COMPLETING"),
    "completing": (None, "COMPLETING"),
    "boot": (None, "REBOOT_REQUESTED"),
    "reboot": (None, "REBOOT_REQUESTED"),
    "inval": (None, "INVALID_REG"),
    "resm": (None, "RESUME"),
    "resume": (None, "RESUME"),
    "cloud": ("unknown", "CLOUD"),
    "pow_dn": ("unknown", "POWER_DOWN"),
    "power_down": ("unknown", "POWER_DOWN"),
    "pow_up": ("unknown", "POWER_UP"),
    "power_up": ("unknown", "POWER_UP"),
    "powring_dn": ("unknown", "POWERING_DOWN"),
    "powering_down": ("unknown", "POWERING_DOWN"),
    "powered_dn": ("unknown", "POWERED_DOWN"),
    "powered_down": ("unknown", "POWERED_DOWN"),
    "powering_up": ("unknown", "POWERING_UP"),
    "reboot_issued": ("unknown", "REBOOT_ISSUED"),
    "canc_r": ("unknown", "CANCEL_REBOOT"),
    "cancel_reboot": ("unknown", "CANCEL_REBOOT"),
}
# Flags under an older name: scontrol of Slurm 20.11 and older prints "+POWER" for a node that
# power saving has shut down (the flag later releases call POWERED_DOWN).
_FLAG_NAMES = {"POWER": "POWERED_DOWN", "POWER_SAVE": "POWERED_DOWN"}
# "(S:0,1,IDX:0-1,3)": a key, then everything up to the next "KEY:" (values hold commas).
_GRES_EXTRA = re.compile(r"([A-Za-z]+):(.*?)(?=,[A-Za-z]+:|$)")
_COUNT = re.compile(r"^(\d+)([kmgtp]?)$", re.IGNORECASE)
_GRES_TYPE = re.compile(r"^[A-Za-z0-9][\w.\-]{0,63}$")
_NULL_TYPE = re.compile(r":\(null\)(?=:|\(|$)", re.IGNORECASE)
_SUBMITTED = re.compile(r"^(?:Submitted batch job\s+)?(\d+)(?:;\S*)?$")
_TOOL_ERROR = re.compile(r"\b(?:sbatch|srun|salloc): error:\s*(.+)$")
_SUBMIT_REFUSED = re.compile(
    r"error:\s*(?:Batch job submission failed|Unable to allocate resources|"
    r"Job submit/allocate failed):\s*(.+)$"
)


# Submit failures that say nothing about the request: the controller was not reached or did
# not accept the caller. They are errors of the check, not the refusal it looks for.
_NOT_A_REFUSAL = (
    "unable to contact",
    "socket timed out",
    "authentication",
    "communication",
    "connection",
    "unspecified error",
    "invalid user",
    "access denied",
    "zero bytes were transmitted",
)


def _is_refusal(reason: str) -> bool:
    low = reason.lower()
    return bool(low) and not any(marker in low for marker in _NOT_A_REFUSAL)


# Refusals of the way the request was written (a site that demands a GPU type, a GRES syntax
# the configuration does not take): the controller never weighed the GPU count, so the
# scenario did not run. The site's own message says what it wants.
_REQUEST_FORM = (
    "invalid generic resource",
    "gres specification",
    "unsupported by configured",
    "specify a type",
    "gres format",
    "invalid gres",
    "trackable resource (tres) specification",
)


def _form_refusal(texts: Iterable[str]) -> bool:
    return any(marker in text.lower() for text in texts for marker in _REQUEST_FORM)


# Slurm's refusals of the submitter, not of the size of the request (slurm_errno.c): the account,
# partition, QOS, time limit or reservation, or submissions closed. The GPU count was never
# weighed. ("Job violates accounting/QOS policy" is not among them: a GPU limit says that too.)
_NOT_THE_GPU_COUNT = (
    "invalid account",
    "invalid partition",
    "invalid qos",
    "invalid wckey",
    "time limit is invalid",
    "no partition specified",
    "access/permission denied",
    "not permitted to use this partition",
    "partition not available",
    "partition in down state",
    "requested reservation",
    "submissions disabled",
    "qos usage threshold",
)


def _other_refusal(texts: Iterable[str]) -> bool:
    return any(marker in text.lower() for text in texts for marker in _NOT_THE_GPU_COUNT)


def _text(value: Any) -> str | None:
    """A string value with Slurm's "nothing" markers as None."""
    if value is None:
        return None
    text = str(value).strip()
    return None if text.lower() in _NULLS else text


def _int(value: Any) -> int | None:
    """An integer from JSON or text; v0.0.40+ wraps numbers as {"set", "infinite", "number"}."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return int(value)
    match = re.match(r"^\s*(\d+)", str(value))
    return int(match.group(1)) if match else None


def _state(raw: Any, flags: Iterable[str] = ()) -> tuple[str | None, list[str]]:
    """Base state (lower case) and flags (upper case) from "MIXED+DRAIN", "idle*", "resv",
    "ALLOCATED+" (completing), a list."""
    completing = False
    if isinstance(raw, list):
        parts = [str(p) for p in raw]
    else:
        text = str(raw or "").strip()
        completing = text.endswith("+")  # node_state_string(): "ALLOCATED+", "alloc+"
        parts = text.rstrip("+").split("+")
    parts = [p.strip() for p in parts if p and p.strip()]
    out_flags: list[str] = []
    base: str | None = None
    for i, part in enumerate(parts):
        while part and part[-1] in _STATE_SUFFIXES:
            out_flags.append(_STATE_SUFFIXES[part[-1]])
            part = part[:-1]
        if i == 0:
            base, flag = _BASE_STATES.get(part.lower(), (part.lower() or None, None))
            # "REBOOT^" is a reboot issued, not one still waiting to be.
            if flag == "REBOOT_REQUESTED" and "REBOOT_ISSUED" in out_flags:
                flag = None
            if flag:
                out_flags.append(flag)
        elif part:
            out_flags.append(part.upper())
    if completing:
        out_flags.append("COMPLETING")
    out_flags.extend(str(f).upper() for f in flags)
    return base, list(dict.fromkeys(_FLAG_NAMES.get(f, f) for f in out_flags))


def _split_top(text: str) -> list[str]:
    """Split at commas outside parentheses: "gpu:2(S:0,1),mps:100" -> two items."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def _count(text: str) -> int | None:
    match = _COUNT.match(text.strip())
    if not match:
        return None
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
    return int(match.group(1)) * scale[match.group(2).lower()]


def parse_gres(text: str | None) -> list[dict[str, Any]]:
    """GRES entries from a Slurm GRES string.

    Reads "gpu:h200:8", "gpu:8", "gpu:h200:8(S:0-1)", "gpu:h200:3(IDX:0-2)",
    "gpu:tesla:2,mps:200", job forms ("gres:gpu:h200:3", "gres/gpu=2"), "(null)" and "".
    A name without a count means one, as in Slurm. Each entry is
    {"name", "type", "count", "indexes"}; `indexes` is the "IDX:" part of used GRES.
    """
    if _text(text) is None:
        return []
    entries = []
    for item in _split_top(str(text)):
        # "gpu:(null):4(IDX:0-3)": a GRES without a type (sinfo and slurmrestd print it so).
        item = _NULL_TYPE.sub("", item)
        head, _, tail = item.partition("(")
        extras = dict(_GRES_EXTRA.findall(tail.rstrip(")")))
        head = head.strip().replace("=", ":")
        if head.startswith("gres/"):
            head = head[len("gres/") :]
        parts = [p for p in head.split(":") if p]
        if len(parts) > 1 and parts[0] == "gres":
            parts = parts[1:]
        if not parts:
            continue
        name, rest = parts[0], [p for p in parts[1:] if p.lower() != "no_consume"]
        count: int | None = 1
        if rest and _count(rest[-1]) is not None:
            count = _count(rest[-1])
            rest = rest[:-1]
        indexes = _text(extras.get("IDX"))
        entries.append(
            {"name": name, "type": ":".join(rest) or None, "count": count, "indexes": indexes}
        )
    return entries


def _gpu_count(entries: list[dict[str, Any]]) -> int:
    return sum(e["count"] or 0 for e in entries if e["name"] == "gpu")


def _node(
    *,
    name: str,
    state: Any,
    flags: Iterable[str] = (),
    reason: Any = None,
    partitions: Iterable[str] = (),
    gres: str | None,
    gres_used: str | None,
    cpus: Any = None,
    memory: Any = None,
) -> dict[str, Any]:
    """One node of the facts document; gres/gres_used None: the source did not carry them."""
    base, state_flags = _state(state, flags)
    gres_list = parse_gres(gres)
    used_list = parse_gres(gres_used)
    total = None if gres is None else _gpu_count(gres_list)
    used: int | None = None
    if gres_used is not None and (_text(gres_used) is not None or not total):
        used = _gpu_count(used_list)
    return {
        "name": name,
        "state": base,
        "state_flags": state_flags,
        "reason": _text(reason),
        "partitions": [p for p in partitions if p],
        "gres": gres_list,
        "gres_used": used_list,
        "gpus_total": total,
        "gpus_used": used,
        "cpus": _int(cpus),
        "real_memory_mb": _int(memory),
    }


def gpu_nodes(nodes: list[dict[str, Any]], source: str) -> list[NodeFacts]:
    """One GPU fact document per node that declares GPUs: one GPU per GRES gpu."""
    documents = []
    for node in nodes:
        if not node["gpus_total"]:
            continue
        gpus: list[GpuFacts] = []
        warnings = ["GPUs as Slurm declares them (GRES): no model, memory or health from Slurm"]
        for entry in node["gres"]:
            if entry["name"] != "gpu":
                continue
            count = entry["count"] or 0
            if len(gpus) + count > MAX_GPUS_PER_NODE:
                warnings.append(f"GRES declares {count} GPUs of one type; kept none of them")
                continue
            gpus.extend(new_gpu(name=entry["type"]) for _ in range(count))
        documents.append(
            new_node(host=node["name"], gpus=gpus, sources=[source], warnings=warnings)
        )
    return documents


def _facts(api_version: str | None) -> dict[str, Any]:
    return {
        "format": FACTS_FORMAT,
        "api_version": api_version,
        "slurm_version": None,
        "nodes": [],
        "partitions": [],
        "jobs_pending_reasons": {},
        "controllers": [],
        "diag": None,
        "could_not_check": [],
        "raw": [],
        "gpu_nodes": [],
    }


# --- command-line outputs ---------------------------------------------------------------

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
            _node(
                name=pairs["NodeName"],
                state=pairs.get("State"),
                reason=_REASON_STAMP.sub("", reason) if reason else None,
                partitions=(pairs.get("Partitions") or "").split(","),
                gres=pairs.get("Gres"),
                gres_used=used,
                cpus=pairs.get("CPUTot"),
                memory=pairs.get("RealMemory"),
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
            return _count(value)
        if key.startswith("gres/gpu:"):
            typed = (typed or 0) + (_count(value) or 0)
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
            _partition(
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


def _partition(
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
        "state": _text(states[0]) if states else None,
        "nodes": _text(nodes),
        "default": default,
        "total_cpus": _int(total_cpus),
        "total_nodes": _int(total_nodes),
        "gpus_total": _tres_gpus(_text(tres)),
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
        nodes[name] = _node(
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
                _partition(
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
    facts = _facts(None)
    for command, text in outputs.items():
        facts["raw"].append({"name": command, "status": None, "text": text[:RAW_TEXT_LIMIT]})

    def output(command: str, what: str) -> str | None:
        text = outputs.get(command)
        if text is None:
            facts["could_not_check"].append({"what": what, "reason": f"`{command}` not run"})
        return text

    version = output(VERSION_COMMAND, "slurm_version")
    if version and version.split():
        facts["slurm_version"] = version.split()[-1]
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
    return facts


def _pending_reason(text: str) -> str:
    """A pending job's reason as squeue's %r prints it, without the nodes it names: the
    scheduler's description "ReqNodeNotAvail, UNAVAILABLE NODES:gpu[01-02]" counts with every
    other job held for the same reason, whichever nodes are down."""
    reason = text.strip().strip("()")
    head, found, _nodes = reason.partition(", UNAVAILABLE NODES:")
    return head if found else reason


# --- slurmrestd -------------------------------------------------------------------------


@dataclass
class _Answer:
    status: int
    content_type: str
    text: str
    data: Any  # the parsed JSON, None when the body is not JSON

    def not_json(self) -> str:
        first = " ".join(self.text.split())[:80]
        return f"slurmrestd answered {self.content_type or 'no content type'}, not JSON: {first}"

    def errors(self) -> str:
        """Slurm's own error texts in a JSON answer, joined."""
        found = []
        if isinstance(self.data, dict):
            for error in self.data.get("errors") or []:
                if isinstance(error, dict):
                    texts = [error.get("error"), error.get("description")]
                    found.append(": ".join(str(t) for t in texts if t))
        return "; ".join(f for f in found if f)

    def error_codes(self) -> list[int]:
        """Slurm's error numbers in a JSON answer (2000-2999: the controller's own refusals)."""
        codes = []
        if isinstance(self.data, dict):
            for error in self.data.get("errors") or []:
                if isinstance(error, dict):
                    for key in ("error_code", "error_number", "errno"):
                        if isinstance(error.get(key), int):
                            codes.append(error[key])
        return codes


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to an address already checked, verifying the certificate for the original name."""

    def __init__(
        self, ip: str, port: int, *, server_hostname: str, context: ssl.SSLContext, timeout: float
    ) -> None:
        super().__init__(ip, port, timeout=timeout, context=context)
        self._server_hostname = server_hostname
        self._pinned_context = context

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._pinned_context.wrap_socket(sock, server_hostname=self._server_hostname)


class _Rest:
    """One slurmrestd: resolved once through the caller's guard, every request to that IP."""

    def __init__(self, target: SlurmRestTarget, resolve: Callable[[str, int], str]) -> None:
        self.target = target
        parts = urlsplit(target.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConnectorError(f"not an http(s) URL: {target.url[:100]!r}")
        if any(c in target.user + target.token for c in "\r\n\0"):
            raise ConnectorError("the user name or token holds characters a header cannot carry")
        self.host = parts.hostname
        try:
            explicit_port = parts.port
        except ValueError as exc:
            raise ConnectorError(f"bad port in {target.url[:100]!r}") from exc
        self.port = explicit_port or (443 if parts.scheme == "https" else 80)
        self.https = parts.scheme == "https"
        self.prefix = parts.path.rstrip("/")
        name = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = f"{name}:{explicit_port}" if explicit_port else name
        self.where = f"{parts.scheme}://{self.host_header}"
        self.ip = resolve(self.host, self.port)
        self.raw: list[dict[str, Any]] = []

    def redact(self, text: str) -> str:
        token = self.target.token
        return text.replace(token, "***") if len(token) >= 4 else text

    def error(self, message: str) -> ConnectorError:
        return ConnectorError(self.redact(message))

    def request(
        self, method: str, path: str, body: Any = None, *, keep: int = RAW_TEXT_LIMIT
    ) -> _Answer:
        """One request; transport failures raise ConnectorError, HTTP errors are answers."""
        timeout = self.target.timeout
        connection: http.client.HTTPConnection
        if self.https:
            context = ssl.create_default_context()
            connection = _PinnedHTTPSConnection(
                self.ip, self.port, server_hostname=self.host, context=context, timeout=timeout
            )
        else:
            connection = http.client.HTTPConnection(self.ip, self.port, timeout=timeout)
        headers = {"Host": self.host_header, "Accept": "application/json"}
        # Empty credentials are not sent: slurmrestd then answers 401, which says what is wrong.
        if self.target.user:
            headers["X-SLURM-USER-NAME"] = self.target.user
        if self.target.token:
            headers["X-SLURM-USER-TOKEN"] = self.target.token
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, self.prefix + path, body=payload, headers=headers)
            response = connection.getresponse()
            blob = response.read(MAX_RESPONSE_BYTES + 1)
            status, content_type = response.status, response.getheader("Content-Type") or ""
        except ssl.SSLCertVerificationError as exc:
            raise self.error(
                f"{self.where}: certificate not trusted: {exc.verify_message}"
            ) from exc
        except (OSError, http.client.HTTPException) as exc:
            reason = str(exc) or type(exc).__name__
            raise self.error(f"could not talk to slurmrestd at {self.where}: {reason}") from exc
        finally:
            connection.close()
        if len(blob) > MAX_RESPONSE_BYTES:
            raise self.error(f"{method} {path}: answer larger than {MAX_RESPONSE_BYTES} bytes")
        text = self.redact(blob.decode("utf-8", errors="replace"))
        data = None
        if text.lstrip()[:1] in ("{", "["):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
        self.raw.append({"name": f"{method} {path}", "status": status, "text": text[:keep]})
        return _Answer(status, content_type.split(";")[0].strip(), text, data)

    def failure(self, answer: _Answer, label: str) -> str | None:
        """Why an answer holds nothing usable, or None when it is a JSON object with no error."""
        if answer.status in (401, 403):
            first = " ".join(answer.text.split())[:80]
            return f"{label}: HTTP {answer.status} {first} (slurmrestd refused the credentials)"
        if not isinstance(answer.data, dict):
            return f"{label}: HTTP {answer.status}: {answer.not_json()}"
        errors = answer.errors()
        if answer.status == 200 and not errors:
            return None
        reason = f"{label}: HTTP {answer.status}: {errors or 'no error text'}"
        if "Unspecified error" in errors or "Zero Bytes were transmitted" in errors:
            reason += " (slurmrestd reports a token slurmctld rejects this way: check user/token)"
        return reason


def _served_versions(rest: _Rest) -> list[str]:
    """API versions listed in slurmrestd's OpenAPI document, newest first; [] if unreadable."""
    for path in ("/openapi/v3", "/openapi"):
        answer = rest.request("GET", path, keep=2000)
        if answer.status == 200 and isinstance(answer.data, dict):
            found = set()
            for key in answer.data.get("paths") or {}:
                match = re.match(r"^/slurm/(v\d+\.\d+\.\d+)/ping/?$", str(key))
                if match:
                    found.add(match.group(1))
            return sorted(found, key=_version_key, reverse=True)
    return []


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def _discover(rest: _Rest) -> tuple[str, _Answer]:
    """The API version to use and its ping answer (maybe a refusal): the newest the OpenAPI
    document lists, else the first that answers of the known versions (newest first) and then
    of later ones."""
    candidates = _served_versions(rest) or [*KNOWN_API_VERSIONS, *LATER_API_VERSIONS]
    for version in candidates:
        answer = rest.request("GET", f"/slurm/{version}/ping")
        if answer.status == 404:
            continue
        if answer.status not in (401, 403) and not isinstance(answer.data, dict):
            raise rest.error(f"{rest.where}: GET /slurm/{version}/ping: {answer.not_json()}")
        return version, answer
    low, high = min(candidates, key=_version_key), max(candidates, key=_version_key)
    tried = f"{high}..{low}" if len(candidates) > 1 else candidates[0]
    raise rest.error(f"{rest.where}: no Slurm REST API version answered ping (tried {tried})")


def _slurm_release(data: Any) -> str | None:
    meta = data.get("meta") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        return None
    slurm = meta.get("Slurm") or meta.get("slurm") or {}
    return _text(slurm.get("release")) if isinstance(slurm, dict) else None


def _rest_node(item: dict[str, Any]) -> dict[str, Any]:
    return _node(
        name=str(item.get("name") or item.get("hostname") or ""),
        state=item.get("state"),
        flags=item.get("state_flags") or [],
        reason=item.get("reason"),
        partitions=[str(p) for p in item.get("partitions") or []],
        gres=item.get("gres") if "gres" in item else None,
        gres_used=item.get("gres_used") if "gres_used" in item else None,
        cpus=item.get("cpus"),
        memory=item.get("real_memory"),
    )


def _rest_partition(item: dict[str, Any]) -> dict[str, Any]:
    inner: dict[str, Any] = item["partition"] if isinstance(item.get("partition"), dict) else {}
    # v0.0.39 and later leave a partition's flags out: which one is the default is not said.
    said = "flags" in item or "flags" in inner
    flags = [str(f).lower() for f in item.get("flags") or inner.get("flags") or []]
    nodes = item.get("nodes")
    if isinstance(nodes, dict):  # v0.0.40+: {"configured": "gpu[01-04]", "total": 4}
        nodes = nodes.get("configured")
    tres = item.get("tres")
    if isinstance(tres, dict):
        tres = tres.get("configured")
    cpus, total_nodes = item.get("total_cpus"), item.get("total_nodes")
    if isinstance(item.get("cpus"), dict):
        cpus = item["cpus"].get("total")
    if isinstance(item.get("nodes"), dict):
        total_nodes = item["nodes"].get("total")
    return _partition(
        name=str(item.get("name") or ""),
        state=item.get("state") or inner.get("state"),
        nodes=nodes,
        default="default" in flags if said else None,
        total_cpus=cpus,
        total_nodes=total_nodes,
        tres=tres,
    )


def _job_state(job: dict[str, Any]) -> str:
    state = job.get("job_state")
    if isinstance(state, list):
        state = state[0] if state else ""
    return str(state or "").upper()


def probe_slurm_rest(
    target: SlurmRestTarget, *, resolve: Callable[[str, int], str]
) -> dict[str, Any]:
    """The facts document read through slurmrestd: ping, diag, nodes, partitions, jobs.

    `resolve(host, port)` is the caller's network guard, called once; every request goes to
    the address it returns. Parts that fail land in could_not_check; ConnectorError when
    nothing at all could be read (unreachable, not slurmrestd, every request refused).
    """
    rest = _Rest(target, resolve)
    version, ping = _discover(rest)
    facts = _facts(version)
    read_any = False
    problems = []

    def get(what: str) -> Any:
        nonlocal read_any
        answer = ping if what == "ping" else rest.request("GET", f"/slurm/{version}/{what}")
        reason = rest.failure(answer, f"GET /slurm/{version}/{what}")
        if reason is not None:
            facts["could_not_check"].append({"what": what, "reason": reason})
            problems.append(reason)
            return None
        read_any = True
        facts["slurm_version"] = facts["slurm_version"] or _slurm_release(answer.data)
        return answer.data

    pings = get("ping")
    if pings:
        for item in pings.get("pings") or []:
            state = item.get("ping") or item.get("pinged")
            facts["controllers"].append({"host": item.get("hostname"), "state": state})
    diag = get("diag")
    if diag:
        stats = diag.get("statistics") or {}
        keep = ("server_thread_count", "agent_queue_size", "jobs_pending", "jobs_running")
        facts["diag"] = {k: _int(stats.get(k)) for k in keep if k in stats}
    nodes = get("nodes")
    if nodes:
        facts["nodes"] = [_rest_node(n) for n in nodes.get("nodes") or [] if isinstance(n, dict)]
        facts["gpu_nodes"] = gpu_nodes(facts["nodes"], f"slurmrestd: GET /slurm/{version}/nodes")
    partitions = get("partitions")
    if partitions:
        items = partitions.get("partitions") or []
        facts["partitions"] = [_rest_partition(p) for p in items if isinstance(p, dict)]
    jobs = get("jobs")
    if jobs:
        pending = [j for j in jobs.get("jobs") or [] if _job_state(j) == "PENDING"]
        reasons = Counter(str(j.get("state_reason") or "None") for j in pending)
        facts["jobs_pending_reasons"] = dict(reasons)
    facts["raw"] = rest.raw
    if not read_any:
        raise rest.error(f"{rest.where}: nothing could be read: {problems[0]}")
    return facts


def check_slurm_rest(
    target: SlurmRestTarget, *, resolve: Callable[[str, int], str]
) -> dict[str, Any]:
    """What "test connection" says: the newest API version slurmrestd serves, and whether it
    accepts the user and token (its ping answer). Raises ConnectorError when it cannot be
    reached or is not slurmrestd."""
    rest = _Rest(target, resolve)
    version, ping = _discover(rest)
    reason = rest.failure(ping, f"GET /slurm/{version}/ping")
    return {
        "server": rest.where,
        "api_version": version,
        "slurm_version": _slurm_release(ping.data),
        "accepted": reason is None,
        "reason": reason or "",
    }


# --- controlled failure -----------------------------------------------------------------


def _result(
    state: str, reason: str | None, job_id: int | None, seconds: float, gpus: int | None = None
) -> dict[str, Any]:
    return {
        "scenario": SCENARIO,
        "gpus_requested": gpus,
        "clean": state == "refused",
        "state": state,
        "reason": reason,
        "job_id": job_id,
        "seconds": round(seconds, 3),
        "cancelled": False,
        "note": "",
        "raw": [],
    }


def _submit_body(
    version: str, gpus: int, partition: str | None, gpu_type: str | None = None
) -> dict[str, Any]:
    script = "#!/bin/sh\ntrue\n"
    job: dict[str, Any] = {
        "name": "workbench-over-quota",
        "current_working_directory": "/tmp",
        "standard_output": "/dev/null",
        "standard_error": "/dev/null",
    }
    asked = f"gpu:{gpu_type}:{gpus}" if gpu_type else f"gpu:{gpus}"
    if _version_key(version) <= (0, 0, 38):
        job.update(gres=asked, environment={"PATH": "/bin:/usr/bin"})
    else:  # v0.0.39+ (from Slurm's OpenAPI documentation; not measured here)
        job.update(tres_per_node=f"gres/{asked}", environment=["PATH=/bin:/usr/bin"])
    if partition:
        job["partition"] = partition
    return {"job": job, "script": script}


def oversized_request(
    nodes: list[dict[str, Any]], partition: str | None = None
) -> tuple[int, str | None] | None:
    """(GPUs, GPU type or None) one more than the largest node has; None without GPU nodes.

    The type is named when the largest node's GPUs are all of one type, so that sites which
    refuse an untyped request weigh the count instead of the form.
    """
    candidates = [
        n for n in nodes if n["gpus_total"] and (partition is None or partition in n["partitions"])
    ]
    if not candidates:
        return None
    largest = max(candidates, key=lambda n: n["gpus_total"])
    types = {e["type"] for e in largest["gres"] if e["name"] == "gpu"}
    gpu_type = types.pop() if len(types) == 1 else None
    if gpu_type is not None and not _GRES_TYPE.match(gpu_type):
        gpu_type = None
    return largest["gpus_total"] + 1, gpu_type


def over_quota_rest(
    target: SlurmRestTarget,
    *,
    resolve: Callable[[str, int], str],
    gpus: int | None = None,
    partition: str | None = None,
) -> dict[str, Any]:
    """Submit, through slurmrestd, a job asking for more GPUs than any node has.

    `gpus` defaults to one more than the largest node declares (in `partition` when given).
    A refusal at submit is the expected, clean outcome; a job accepted anyway is read once
    (pending and why), cancelled, and reported with clean False.
    """
    rest = _Rest(target, resolve)
    version, _ = _discover(rest)
    gpu_type = None
    if gpus is None:
        answer = rest.request("GET", f"/slurm/{version}/nodes")
        reason = rest.failure(answer, f"GET /slurm/{version}/nodes")
        nodes = [] if reason else [_rest_node(n) for n in answer.data.get("nodes") or []]
        # Without a GPU node, one GPU is already more than any node has.
        sized = None if reason or not nodes else oversized_request(nodes, partition) or (1, None)
        if sized is None:
            result = _result("error", reason or "no node to size the request from", None, 0.0)
            result["raw"] = rest.raw
            return result
        gpus, gpu_type = sized
    if gpus < 1:
        raise ConnectorError("gpus must be at least 1")
    started = time.monotonic()
    answer = rest.request(
        "POST", f"/slurm/{version}/job/submit", _submit_body(version, gpus, partition, gpu_type)
    )
    seconds = time.monotonic() - started
    data = answer.data if isinstance(answer.data, dict) else {}
    job_id = _int(data.get("job_id"))
    if answer.status == 200 and job_id is not None:
        result = _accepted_rest(rest, version, job_id, seconds)
    elif answer.status in (401, 403) or not data:
        result = _result("error", rest.failure(answer, "POST job/submit"), None, seconds)
    else:
        errors, codes = answer.errors(), answer.error_codes()
        if _form_refusal([errors]):
            reason = "refused for the way the request is written, not for the GPU count: "
            result = _result("error", reason + errors[:400], None, seconds)
        elif _other_refusal([errors]):
            reason = "refused for another reason, not for the GPU count: "
            result = _result("error", reason + errors[:400], None, seconds)
        elif any(2000 <= c < 3000 for c in codes) or (not codes and _is_refusal(errors)):
            result = _result("refused", errors, None, seconds)
        else:
            result = _result("error", rest.failure(answer, "POST job/submit"), None, seconds)
    result["gpus_requested"] = gpus
    result["raw"] = rest.raw
    return result


def _accepted_rest(rest: _Rest, version: str, job_id: int, seconds: float) -> dict[str, Any]:
    look = rest.request("GET", f"/slurm/{version}/job/{job_id}")
    jobs = look.data.get("jobs") if isinstance(look.data, dict) else None
    job = jobs[0] if jobs and isinstance(jobs[0], dict) else {}
    state = "pending" if _job_state(job) == "PENDING" else "accepted"
    result = _result(state, _text(job.get("state_reason")), job_id, seconds)
    cancel = rest.request("DELETE", f"/slurm/{version}/job/{job_id}")
    result["cancelled"] = cancel.status == 200 and not cancel.errors()
    if result["cancelled"]:
        outcome = "it was cancelled"
    elif "already completing or completed" in cancel.errors().lower():
        outcome = "it ended before it could be cancelled"
    else:
        outcome = f"cancelling it FAILED ({cancel.errors() or cancel.status}): cancel it by hand"
    result["note"] = f"the controller accepted job {job_id}; {outcome}"
    return result


def over_quota_command(
    gpus: int, *, partition: str | None = None, gpu_type: str | None = None
) -> str:
    """The sbatch line for the SSH variant: a real submit of `true` asking for `gpus` GPUs
    (of `gpu_type` when given: some sites refuse a GPU request without a type)."""
    if gpus < 1:
        raise ValueError("gpus must be at least 1")
    if gpu_type is not None and not _GRES_TYPE.match(gpu_type):
        raise ValueError("not a GRES type name")
    words = [
        "sbatch",
        "--parsable",
        "--job-name=workbench-over-quota",
        "--chdir=/tmp",
        "--output=/dev/null",
        f"--gres=gpu:{gpu_type}:{int(gpus)}" if gpu_type else f"--gres=gpu:{int(gpus)}",
    ]
    if partition:
        words.append(f"--partition={partition}")
    words.append("--wrap=true")
    return shlex.join(words)


def scancel_command(job_id: int) -> str:
    """The command that cancels a job the SSH variant got accepted."""
    return f"scancel {int(job_id)}"


def parse_over_quota_output(
    exit_code: int, stdout: str, stderr: str, *, seconds: float = 0.0, command: str = "sbatch"
) -> dict[str, Any]:
    """The controlled-failure result from the submit command's exit status and output.

    Refused: sbatch/srun/salloc's "... submission failed: <reason>" (the text a user reads).
    Accepted: a job id ("Submitted batch job 12" or --parsable's "12"); the result then holds
    `cancel_command`, which the caller runs, and clean False.
    """
    lines = [line.strip() for line in (stderr + "\n" + stdout).splitlines() if line.strip()]
    refused = [m.group(1).strip() for line in lines if (m := _SUBMIT_REFUSED.search(line))]
    job_ids = [
        int(m.group(1)) for line in stdout.splitlines() if (m := _SUBMITTED.match(line.strip()))
    ]
    # What the submit command said before its verdict: a site's job_submit plugin explains a
    # refusal there ("You must always specify a type when requesting gpu GRES") and the
    # verdict itself may only say "Unspecified error".
    said = [
        m.group(1).strip()
        for line in lines
        if (m := _TOOL_ERROR.search(line)) and not _SUBMIT_REFUSED.search(line)
    ]
    if refused and _form_refusal([*said, refused[-1]]):
        result = _result(
            "error",
            "refused for the way the request is written, not for the GPU count: "
            + "; ".join([*said[-2:], refused[-1]])[:400],
            None,
            seconds,
        )
    elif refused and _other_refusal([refused[-1]]):
        result = _result(
            "error",
            "refused for another reason, not for the GPU count: "
            + "; ".join([*said[-2:], refused[-1]])[:400],
            None,
            seconds,
        )
    elif refused and said and not _is_refusal(refused[-1]):
        result = _result(
            "error",
            "refused by the site's submit rules, not for the GPU count: "
            + "; ".join([*said[-2:], refused[-1]])[:400],
            None,
            seconds,
        )
    elif refused and _is_refusal(refused[-1]):
        result = _result("refused", refused[-1], None, seconds)
    elif exit_code == 0 and job_ids:
        result = _result("accepted", None, job_ids[-1], seconds)
        result["cancel_command"] = scancel_command(job_ids[-1])
        result["note"] = f"the controller accepted job {job_ids[-1]}: cancel it"
    else:
        last = refused[-1] if refused else lines[-1] if lines else "no output"
        result = _result("error", f"exit {exit_code}: {last[:300]}", None, seconds)
    asked = re.search(r"--gres=(?:gres/)?gpu:(?:[^:\s]+:)?(\d+)\b", command)
    result["gpus_requested"] = int(asked.group(1)) if asked else None
    result["raw"] = [{"name": command, "status": exit_code, "text": (stdout + stderr)[:20000]}]
    return result
