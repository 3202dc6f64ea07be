"""The capture format: several outputs of one node in one file, and how documents combine.

A capture file holds one section per command, in one of three layouts:

    ################################################################################
    # idle :: query (-q)
    # $ nvidia-smi -q
    ################################################################################
    <output>

    $ nvidia-smi -L
    <output>

    root@gpu01:~# sudo nvidia-smi -q -x
    <output>
    root@gpu01:~# dmesg -T | grep -i xid
    <output>

The third is a terminal transcript as pasted or as `script` records it: each command stands
after its shell prompt (user@host, `[user@host dir]$`, SUSE's `host:~ #`, `bash-5.1$`,
oh-my-zsh's arrow, PowerShell and cmd.exe prompts, or a bare `#`, `%` or `❯` before a tool
the parsers read; see transcripts.py). The typescript's "Script started/done" lines,
window titles and other terminal escapes are dropped; a prompt with no command ends a section.

Each section's command says what its output is (formats.command_kind); sections whose
command the parsers do not read (topo -m, pmon, the table view, help texts, uname) and
sections without a command (a file header) are ignored. A section that should parse but does
not becomes a warning.

Combining (merge_nodes): documents are merged in the order given, GPU by GPU, a known value
winning over None and a later known value over an earlier one. A capture taken idle and then
under load therefore yields one node whose changing readings (power, temperature, utilization,
clocks, clock event reasons) are those of the last phase, while values that do not change are
the same in every phase anyway.
"""

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from poc.probes.facts import GpuFacts, MigDevice, NodeFacts, NvLink, new_node

from . import values as v
from .kernel_log import resolve_gpu_indexes
from .transcripts import SCRIPT_END, prompt_command, strip_terminal
from .values import ParseError

SOURCE = "capture"
_MAX_LABEL = 80


@dataclass(frozen=True)
class Section:
    """One command's output in a capture."""

    command: str | None
    phase: str | None
    body: str
    line: int  # where the body starts in the capture, 1-based

    @property
    def label(self) -> str:
        """The phase and command, the command cut short (a --query-gpu list runs long)."""
        command = " ".join((self.command or "(no command)").split())
        if len(command) > _MAX_LABEL:
            command = command[: _MAX_LABEL - 3] + "..."
        return f"{self.phase}: {command}" if self.phase else command


def _is_rule(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("#####") and not stripped.strip("#")


def _hash_sections(lines: list[str]) -> list[Section]:
    sections: list[Section] = []
    position = 0
    while position < len(lines):
        if not _is_rule(lines[position]):
            position += 1
            continue
        # A header block: comment lines up to the closing rule.
        command: str | None = None
        phase: str | None = None
        position += 1
        while position < len(lines) and not _is_rule(lines[position]):
            comment = lines[position].strip()
            if not comment.startswith("#"):
                break
            comment = comment.lstrip("#").strip()
            if comment.startswith("$ ") or comment == "$":
                command = comment[1:].strip() or None
            elif " :: " in comment and phase is None:
                phase = comment.split(" :: ", 1)[0].strip() or None
            position += 1
        if position < len(lines) and _is_rule(lines[position]):
            position += 1
        start = position
        while position < len(lines) and not _is_rule(lines[position]):
            position += 1
        sections.append(Section(command, phase, "\n".join(lines[start:position]), start + 1))
    return sections


def _prompt_sections(lines: list[str]) -> list[Section]:
    """Sections opened by `$ command` or shell prompt lines; what comes before the first is
    dropped. A prompt without a command (the transcript's last line, a bare Enter), a command
    the parsers do not read and the end of a typescript open sections that are ignored."""
    sections: list[Section] = []
    command: str | None = None
    start: int | None = None
    for number, line in enumerate(lines):
        found = prompt_command(line)
        if found is None and not line.startswith(SCRIPT_END):
            continue
        if start is not None:
            sections.append(Section(command, None, "\n".join(lines[start:number]), start + 1))
        command = found or None
        start = number + 1
    if start is not None:
        sections.append(Section(command, None, "\n".join(lines[start:]), start + 1))
    return sections


def split_sections(text: str) -> list[Section]:
    """The sections of a capture, in file order."""
    lines = strip_terminal(v.clean_text(text)).split("\n")
    if any(_is_rule(line) for line in lines):
        sections = _hash_sections(lines)
        if any(section.command for section in sections):
            return sections
    return _prompt_sections(lines)


def parse_capture(text: str, *, read: Callable[[str, str], NodeFacts | None]) -> NodeFacts:
    """One node's facts from a capture file (see the module docstring). `read` gives the facts
    of one section's output from its command, None for a command whose output is not read
    (formats.parse_command_output)."""
    sections = split_sections(text)
    if not sections:
        raise ParseError("not a capture: no command sections")
    documents: list[NodeFacts] = []
    warnings: list[str] = []
    for section in sections:
        if section.command is None:
            continue
        try:
            document = read(section.command, section.body)
        except ParseError as exc:
            warnings.append(f"{section.label} (line {section.line}): {exc}")
            continue
        if document is None:
            continue
        document["sources"] = [section.label]
        documents.append(document)
    if not documents:
        reason = f": {warnings[0]}" if warnings else ""
        raise ParseError(f"capture holds no section the parsers read{reason}")
    node = merge_nodes(documents)
    node["warnings"] = _unique(node["warnings"] + warnings)
    return node


# --- merging -------------------------------------------------------------------------------


def _unique(items: Iterable[Any]) -> list[Any]:
    seen: set[str] = set()
    kept: list[Any] = []
    for item in items:
        key = json.dumps(item, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _identity(gpu: GpuFacts) -> tuple[str | None, tuple[int, int, int] | None, int | None]:
    return v.usable_uuid(gpu["uuid"]), v.bus_key(gpu["pci_bus_id"]), gpu["index"]


def _same_gpu(
    a: tuple[str | None, tuple[int, int, int] | None, int | None],
    b: tuple[str | None, tuple[int, int, int] | None, int | None],
) -> bool:
    """The first identity both documents know decides: UUID, then bus id, then index."""
    for mine, theirs in zip(a, b, strict=True):
        if mine is not None and theirs is not None:
            return mine == theirs
    return False


def _merge_mig(old: list[MigDevice], new: list[MigDevice]) -> list[MigDevice]:
    # Both lists are in MIG device index order (-q -x and -q by <index>, -L by "Device N"), so
    # the same position is the same device: -L supplies profile and UUID, the XML the ids.
    if not old:
        return [dict(device) for device in new]  # type: ignore[misc]
    if not new:
        return old
    if len(old) != len(new):
        return [dict(device) for device in new]  # type: ignore[misc]
    merged: list[MigDevice] = []
    for mine, theirs in zip(old, new, strict=True):
        device = dict(mine)
        device.update({key: value for key, value in theirs.items() if value is not None})
        merged.append(device)  # type: ignore[arg-type]
    return merged


def _copy_link(link: NvLink) -> NvLink:
    return {**link, "errors": dict(link["errors"])}


def _merge_links(old: list[NvLink], new: list[NvLink]) -> list[NvLink]:
    links = {link["link"]: _copy_link(link) for link in old}
    for link in new:
        current = links.get(link["link"])
        if current is None:
            links[link["link"]] = _copy_link(link)
            continue
        current["errors"].update(link["errors"])
        # A reading of counters only (nvlink -e) says nothing about the link being up.
        if not (link["errors"] and link["speed_gbps"] is None):
            current["active"] = link["active"]
            current["speed_gbps"] = link["speed_gbps"]
    return [links[number] for number in sorted(links)]


def _merge_gpu(old: GpuFacts, new: GpuFacts) -> None:
    target: dict[str, Any] = old  # type: ignore[assignment]
    for key, value in new.items():
        if key == "mig_devices":
            old["mig_devices"] = _merge_mig(old["mig_devices"], new["mig_devices"])
        elif key == "nvlink_links":
            old["nvlink_links"] = _merge_links(old["nvlink_links"], new["nvlink_links"])
        elif key == "clock_event_reasons":
            old["clock_event_reasons"].update(new["clock_event_reasons"])
        elif value is not None:
            target[key] = value


def _copy_gpu(gpu: GpuFacts) -> GpuFacts:
    copy: GpuFacts = {**gpu}  # type: ignore[typeddict-item]
    copy["mig_devices"] = [dict(device) for device in gpu["mig_devices"]]  # type: ignore[misc]
    copy["nvlink_links"] = [_copy_link(link) for link in gpu["nvlink_links"]]
    copy["clock_event_reasons"] = dict(gpu["clock_event_reasons"])
    return copy


def merge_nodes(docs: Sequence[NodeFacts]) -> NodeFacts:
    """One node's facts from several documents read from it (see the module docstring).

    GPUs are matched by UUID, else PCI bus id, else index (a masked all-zero UUID does not
    count); sources, warnings, Xid and SXid events, failed GPU initialisations, DCGM results
    and benchmarks are concatenated
    without duplicates. Xid events are then tied to GPU indexes by bus id or UUID.
    """
    node = new_node()
    gpus: list[GpuFacts] = []
    for doc in docs:
        for key in ("host", "driver_version", "cuda_version", "nvml_version"):
            text = doc.get(key)
            if isinstance(text, str):
                node[key] = text  # type: ignore[literal-required]
        if doc.get("expected_gpu_count") is not None:
            node["expected_gpu_count"] = doc["expected_gpu_count"]
        for gpu in doc.get("gpus", []):
            identity = _identity(gpu)
            match = next((old for old in gpus if _same_gpu(_identity(old), identity)), None)
            if match is None:
                gpus.append(_copy_gpu(gpu))
            else:
                _merge_gpu(match, gpu)
        node["xid_events"] += [dict(event) for event in doc.get("xid_events", [])]  # type: ignore[misc]
        node["sxid_events"] = node.get("sxid_events", []) + [
            dict(event)  # type: ignore[misc]
            for event in doc.get("sxid_events", [])
        ]
        node["init_failures"] = node.get("init_failures", []) + [
            dict(failure)  # type: ignore[misc]
            for failure in doc.get("init_failures", [])
        ]
        node["dcgm"] += doc.get("dcgm", [])
        node["benchmarks"] += doc.get("benchmarks", [])
        node["sources"] += doc.get("sources", [])
        node["warnings"] += doc.get("warnings", [])
    if all(gpu["index"] is not None for gpu in gpus):
        gpus.sort(key=lambda gpu: gpu["index"] or 0)
    node["gpus"] = gpus
    # The inventory is known when any output read lists the node's GPUs.
    node["gpus_listed"] = not docs or any(doc.get("gpus_listed", True) for doc in docs)
    resolve_gpu_indexes(node["xid_events"], gpus)
    node["xid_events"] = _unique(node["xid_events"])
    node["sxid_events"] = _unique(node.get("sxid_events", []))
    node["init_failures"] = _unique(node.get("init_failures", []))
    node["dcgm"] = _unique(node["dcgm"])
    node["benchmarks"] = _unique(node["benchmarks"])
    node["sources"] = _unique(node["sources"])
    node["warnings"] = _unique(node["warnings"])
    return node
