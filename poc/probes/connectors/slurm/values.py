"""Reading Slurm's values: node states and flags, GRES strings, counts; the facts
document and its GPU nodes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from poc.probes.connectors.slurm.versions import version_in
from poc.probes.facts import GpuFacts, NodeFacts, new_gpu, new_node

FACTS_FORMAT = "workbench-slurm-facts/1"
RAW_TEXT_LIMIT = 1_000_000
MAX_GPUS_PER_NODE = 1024  # more declared GPUs than this is a typo, not hardware


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
_NULL_TYPE = re.compile(r":\(null\)(?=:|\(|$)", re.IGNORECASE)


def as_text(value: Any) -> str | None:
    """A string value with Slurm's "nothing" markers as None."""
    if value is None:
        return None
    text = str(value).strip()
    return None if text.lower() in _NULLS else text


def as_int(value: Any) -> int | None:
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


def count_of(text: str) -> int | None:
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
    if as_text(text) is None:
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
        if rest and count_of(rest[-1]) is not None:
            count = count_of(rest[-1])
            rest = rest[:-1]
        indexes = as_text(extras.get("IDX"))
        entries.append(
            {"name": name, "type": ":".join(rest) or None, "count": count, "indexes": indexes}
        )
    return entries


def _gpu_count(entries: list[dict[str, Any]]) -> int:
    return sum(e["count"] or 0 for e in entries if e["name"] == "gpu")


def node_facts(
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
    version: Any = None,
) -> dict[str, Any]:
    """One node of the facts document; gres/gres_used None: the source did not carry them.
    `version` is the Slurm version the node's slurmd reports (None where not said)."""
    base, state_flags = _state(state, flags)
    gres_list = parse_gres(gres)
    used_list = parse_gres(gres_used)
    total = None if gres is None else _gpu_count(gres_list)
    used: int | None = None
    if gres_used is not None and (as_text(gres_used) is not None or not total):
        used = _gpu_count(used_list)
    return {
        "name": name,
        "state": base,
        "state_flags": state_flags,
        "reason": as_text(reason),
        "partitions": [p for p in partitions if p],
        "gres": gres_list,
        "gres_used": used_list,
        "gpus_total": total,
        "gpus_used": used,
        "cpus": as_int(cpus),
        "real_memory_mb": as_int(memory),
        "version": version_in(as_text(version)),
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


def empty_facts(api_version: str | None) -> dict[str, Any]:
    return {
        "format": FACTS_FORMAT,
        "api_version": api_version,
        "slurm_version": None,
        # What each source said: "controller" (scontrol show config), "slurmrestd" (its
        # answers' meta), "client" (scontrol version), "nodes" ({version: [node names]}),
        # and "taken_from": which of them slurm_version is (versions.settle_versions).
        "slurm_versions": {"controller": None, "slurmrestd": None, "client": None, "nodes": {}},
        "warnings": [],
        "nodes": [],
        "partitions": [],
        "jobs_pending_reasons": {},
        "controllers": [],
        "diag": None,
        "could_not_check": [],
        "raw": [],
        "gpu_nodes": [],
    }
