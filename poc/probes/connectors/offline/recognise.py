"""What a document is, told from its content (never its file name): Kubernetes objects as YAML
or JSON, kubectl's text for people, Slurm's commands' outputs, slurmrestd's or a command's JSON.
A document may hold several pieces (YAML's `---`, `scontrol show` of nodes and partitions); one
that is none of these is refused with what it looks like and what is accepted."""

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from poc.probes import parsers
from poc.probes.connectors.kubernetes.describe import (
    describe_pod,
    described_kind,
    is_kubectl_error,
    quota_scenario,
)
from poc.probes.connectors.kubernetes.documents import (
    KINDS,
    KubeObject,
    PodEvidence,
    split_api_version,
)
from poc.probes.connectors.offline.loading import DocumentError, load_json, load_yaml
from poc.probes.connectors.slurm.cli import (
    SCONTROL_CONFIG_COMMAND,
    SCONTROL_NODES_COMMAND,
    SCONTROL_PARTITIONS_COMMAND,
    SINFO_COMMAND,
    SINFO_FIELDS,
    VERSION_COMMAND,
    parse_scontrol_nodes,
    parse_scontrol_partitions,
)
from poc.probes.connectors.slurm.documents import is_sinfo_summary, submit_scenario
from poc.probes.connectors.slurm.versions import command_version, config_version

ACCEPTED = (
    "accepted: Kubernetes objects as YAML or JSON, a List or single objects (kubectl get "
    "nodes / queues / podgroups / pods -o yaml: Node, Volcano and KAI Queue, PodGroup, Pod, "
    "ResourceQuota, ClusterPolicy, DataScienceCluster), kubectl describe pod, scontrol show "
    "nodes / partitions, sinfo, slurmrestd's JSON answers and sinfo --json"
)
KUBE_KINDS = ", ".join(sorted({f"{kind} ({group or 'v1'})" for group, kind in KINDS}))
# A YAML document of Kubernetes objects: one of these keys at the start of a line.
_YAML_KEYS = re.compile(r"^(?:apiVersion|kind|items)\s*:", re.MULTILINE)
_SLURM_JSON = (
    ("nodes", "nodes"),
    ("partitions", "partitions"),
    ("jobs", "jobs"),
    ("pings", "ping"),
    ("statistics", "diag"),
    ("sinfo", "sinfo"),
)
_SUBMIT = re.compile(r"\b(?:sbatch|srun|salloc): error:|^Submitted batch job \d+", re.MULTILINE)
_RECORD = re.compile(r"^\s*(NodeName|PartitionName)=")
_LOG_STAMP = re.compile(r"\[\s*\d+\.\d+\]")  # dmesg's "[  12.345678]", not JSON
_TABLE = re.compile(r"(?:NAMESPACE\s{2,})?NAME\s{2,}[A-Z]")
_PLURALS = {"Pod": "pods", "PodGroup": "podgroups", "Queue": "queues", "Node": "nodes"}


@dataclass
class Piece:
    """One thing a document holds, for the platform it tells about."""

    document: str  # the document's name, and which of its YAML documents
    platform: str  # "kubernetes" or "slurm"
    kind: str  # what it is, in words
    objects: list[KubeObject] = field(default_factory=list)
    pods: list[PodEvidence] = field(default_factory=list)
    scenarios: list[dict[str, Any]] = field(default_factory=list)
    command: str = ""  # the Slurm command whose output `text` is
    text: str = ""
    what: str = ""  # a Slurm JSON document: what it answers ("nodes", ..., "sinfo")
    data: dict[str, Any] = field(default_factory=dict)
    summary: str = ""  # sinfo's default summary
    source: str = ""  # the name of the document given


def pieces_of(name: str, text: str) -> list[Piece]:
    """What a document holds; DocumentError when it is nothing that is read."""
    pieces = _pieces(name, text)
    for piece in pieces:
        piece.source = name
    return pieces


def _pieces(name: str, text: str) -> list[Piece]:
    stripped = text.strip()
    if not stripped:
        raise DocumentError(name, f"the document is empty; {ACCEPTED}")
    if stripped[0] == "{" or (stripped[0] == "[" and not _LOG_STAMP.match(stripped)):
        documents, form = load_json(name, stripped), "JSON"
    elif _YAML_KEYS.search(text):
        documents, form = [d for d in load_yaml(name, text) if d is not None], "YAML"
    else:
        return _text_pieces(name, text)
    several = len(documents) > 1
    pieces = []
    for number, document in enumerate(documents, start=1):
        label = f"{name} ({form} document {number})" if several else name
        pieces += _structured(label, document, form)
    return pieces


def _structured(name: str, value: Any, form: str) -> list[Piece]:
    if isinstance(value, dict) and ("kind" in value or "apiVersion" in value):
        return [_kube_piece(name, value, form)]
    if isinstance(value, dict) and any(
        isinstance(value.get(k), list | dict) for k, _w in _SLURM_JSON
    ):
        return _slurm_json(name, value)
    if isinstance(value, dict) and "workbench-probe-bundle/" in str(value.get("format")):
        raise DocumentError(name, "the push agent's bundle of one node: upload it as probe output")
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:8]) or "none"
        looks = f"{form} that is neither a Kubernetes object nor a Slurm answer (keys: {keys})"
    else:
        looks = f"{form} holding a {type(value).__name__}, not an object"
    raise DocumentError(name, f"{looks}; {ACCEPTED}")


def _kube_piece(name: str, value: dict[str, Any], form: str) -> Piece:
    kind = str(value.get("kind") or "")
    listed = kind == "List" or (kind.endswith("List") and "items" in value)
    if not listed:
        found = _object(name, value)
        label = f"Kubernetes {kind} ({value.get('apiVersion')}, {form})"
        return Piece(name, "kubernetes", label, objects=[found])
    items = value.get("items")
    if not isinstance(items, list):
        raise DocumentError(name, f"a Kubernetes {kind} without a list of items")
    group_version, item_kind = value.get("apiVersion"), kind.removesuffix("List")
    objects = []
    for item in items:
        if not isinstance(item, dict):
            raise DocumentError(name, f"an item of the {kind} is not an object")
        if item_kind and "kind" not in item:  # the API server's lists leave them out
            item = {"apiVersion": group_version, "kind": item_kind, **item}
        objects.append(_object(name, item))
    counts = Counter(o.data["kind"] for o in objects)
    held = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no item"
    return Piece(name, "kubernetes", f"Kubernetes {kind} ({held}, {form})", objects=objects)


def _object(name: str, data: dict[str, Any]) -> KubeObject:
    found = KubeObject(name, data)
    for part in ("metadata", "spec", "status"):
        if part in data and not isinstance(data[part], dict | None):
            raise DocumentError(name, f"a Kubernetes {found.key[1]} whose {part} is not a mapping")
    if found.key not in KINDS:
        group = split_api_version(data.get("apiVersion"))[0] or "v1"
        raise DocumentError(
            name,
            f"a Kubernetes {found.key[1] or 'object without a kind'} ({group}) is not read; "
            f"the kinds read: {KUBE_KINDS}",
        )
    return found


def _slurm_json(name: str, value: dict[str, Any]) -> list[Piece]:
    pieces = []
    for key, what in _SLURM_JSON:
        held = value.get(key)
        if isinstance(held, list | dict) and (held or not value.get("errors")):
            count = f"{len(held)} {key}" if isinstance(held, list) else key
            label = "sinfo --json" if what == "sinfo" else "Slurm JSON"
            pieces.append(Piece(name, "slurm", f"{label} ({count})", what=what, data=value))
    if not pieces:
        errors = "; ".join(
            str(e.get("error") or e.get("description") or e) if isinstance(e, dict) else str(e)
            for e in value.get("errors") or []
        )
        raise DocumentError(name, f"a Slurm answer that holds only errors: {errors[:300]}")
    return pieces


def _text_pieces(name: str, text: str) -> list[Piece]:
    described = described_kind(text)
    if described == "Pod":
        return [Piece(name, "kubernetes", "kubectl describe pod", pods=[describe_pod(text, name)])]
    if described == "":
        raise DocumentError(
            name,
            f"kubectl describe output of an object other than a pod, which is not read; {ACCEPTED}",
        )
    if described:
        plural = _PLURALS.get(described, described.lower() + "s")
        scope = "" if described == "Node" else " -A"
        raise DocumentError(
            name,
            f"kubectl describe output of a {described}, which is not read: give "
            f"kubectl get {plural}{scope} -o yaml instead",
        )
    if _TABLE.match(text.lstrip()):
        raise DocumentError(
            name, "a kubectl get table, which is not read: run kubectl get with -o yaml or -o json"
        )
    if is_kubectl_error(text):
        scenario = quota_scenario(text, name)
        if scenario is None:
            raise DocumentError(name, f"a kubectl error that is no quota refusal; {ACCEPTED}")
        kind = "the API server's quota refusal"
        return [Piece(name, "kubernetes", kind, scenarios=[scenario])]
    if _SUBMIT.search(text):
        kind = "a Slurm job submission's answer"
        return [Piece(name, "slurm", kind, scenarios=[submit_scenario(text, name)])]
    pieces = _slurm_text(name, text)
    if pieces:
        return pieces
    try:
        node_kind = parsers.detect(text)
    except parsers.ParseError:
        node_kind = None
    if node_kind is not None:
        raise DocumentError(
            name,
            f"output of a node's GPU tools ({node_kind}), not of a cluster: upload it as "
            "probe output",
        )
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")[:60]
    raise DocumentError(name, f"not recognised (it begins {first!r}); {ACCEPTED}")


def _slurm_text(name: str, text: str) -> list[Piece]:
    """Slurm's commands' outputs in a text: scontrol's node and partition records (split where
    one text holds both), scontrol show config or version, sinfo."""
    blocks: dict[str, list[str]] = {"NodeName": [], "PartitionName": []}
    current: list[str] | None = None
    for line in text.splitlines():
        record = _RECORD.match(line)
        if record:
            current = blocks[record.group(1)]
        if current is not None:
            current.append(line)
    pieces = []
    nodes_text, partitions_text = "\n".join(blocks["NodeName"]), "\n".join(blocks["PartitionName"])
    if nodes_text:
        count = len(parse_scontrol_nodes(nodes_text))
        kind = f"scontrol show nodes ({count} nodes)"
        pieces.append(Piece(name, "slurm", kind, command=SCONTROL_NODES_COMMAND, text=nodes_text))
    if partitions_text:
        count = len(parse_scontrol_partitions(partitions_text))
        kind = f"scontrol show partitions ({count} partitions)"
        command = SCONTROL_PARTITIONS_COMMAND
        pieces.append(Piece(name, "slurm", kind, command=command, text=partitions_text))
    if pieces:
        return pieces
    lines = [line for line in text.splitlines() if line.strip()]
    if config_version(text):
        kind = "scontrol show config"
        return [Piece(name, "slurm", kind, command=SCONTROL_CONFIG_COMMAND, text=text)]
    if len(lines) <= 2 and command_version(text):
        return [Piece(name, "slurm", "scontrol version", command=VERSION_COMMAND, text=text)]
    rows = [line for line in lines if len(line.split("|")) > len(SINFO_FIELDS)]
    if rows and len(rows) >= len(lines) - 1:
        rows = [r for r in rows if r.split("|")[0].strip().upper() != "NODELIST"]
        kind = f"sinfo ({len(rows)} lines)"
        return [Piece(name, "slurm", kind, command=SINFO_COMMAND, text="\n".join(rows))]
    if is_sinfo_summary(text):
        return [Piece(name, "slurm", "sinfo (partition summary)", summary=text)]
    if lines and lines[0].split()[:1] in (["NODELIST"], ["PARTITION"], ["HOSTNAMES"]):
        raise DocumentError(
            name,
            f"sinfo output in a layout that is not read: give the output of {SINFO_COMMAND} "
            "or of scontrol show nodes",
        )
    return []
