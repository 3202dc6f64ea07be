"""Slurm's version from every place it appears, and which one the facts document names.

- the controller: `scontrol show config` prints slurmctld's own "SLURM_VERSION = 23.11.4";
- slurmrestd: every JSON answer's `meta` block, `meta.Slurm` up to v0.0.39 and
  `meta.slurm` from v0.0.40, holding `release` ("23.11.4") and `version` {major, micro, minor}
  (integers up to v0.0.39, strings from v0.0.40; minor "11" or 2 for "02"); `sinfo --json`
  and the other commands' JSON carry the same block;
- the commands on the login node: `scontrol version` / `scontrol --version` print
  "slurm 23.11.4" (Debian's build "slurm-wlm 22.05.8");
- each node's slurmd: `Version=` of `scontrol show node`, `slurmd_version` (slurmrestd up to
  v0.0.38) or `version` (v0.0.39 and later) of slurmrestd's nodes.

`slurm_version` is the controller's where it was read, else slurmrestd's, else the login
node's commands', else the newest slurmd's (slurmctld must be at least as new as every
slurmd). Nodes whose slurmd reports another version keep a warning."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import NodeFacts

_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+\.\d+(?:-[0-9A-Za-z][0-9A-Za-z.]*)?)(?![\w.])")
_COMMAND_VERSION = re.compile(r"\bslurm[\w-]*\s+v?(\d+\.\d+\.\d+\S*)", re.IGNORECASE)
_CONFIG_VERSION = re.compile(r"^\s*SLURM_VERSION\s*=\s*(\S+)", re.MULTILINE)
# Where slurm_version may come from, most trusted first.
SOURCES = ("controller", "slurmrestd", "client")
NAMED_NODES = 5  # a warning names this many nodes, then counts the rest


def version_in(text: Any) -> str | None:
    """The first Slurm release number ("23.11.4", "24.05.0-0rc1") in a text, else None."""
    if not isinstance(text, str | int | float) or isinstance(text, bool):
        return None
    match = _VERSION.search(str(text))
    return match.group(1) if match else None


def command_version(text: str | None) -> str | None:
    """The version `scontrol version` / `scontrol --version` printed ("slurm 23.11.4")."""
    if not text:
        return None
    match = _COMMAND_VERSION.search(text)
    return version_in(match.group(1)) if match else None


def config_version(text: str | None) -> str | None:
    """SLURM_VERSION of `scontrol show config`: the version of slurmctld that answered."""
    match = _CONFIG_VERSION.search(text or "")
    return version_in(match.group(1)) if match else None


def meta_version(data: Any) -> str | None:
    """The Slurm version in a slurmrestd (or `--json`) answer's meta block, whichever API
    version wrote it: `release`, else the numbers of `version`."""
    meta = data.get("meta") if isinstance(data, Mapping) else None
    if not isinstance(meta, Mapping):
        return None
    for key in ("slurm", "Slurm"):
        block = meta.get(key)
        if not isinstance(block, Mapping):
            continue
        release = version_in(block.get("release"))
        if release:
            return release
        numbers = block.get("version")
        if isinstance(numbers, Mapping):
            parts = [_number(numbers.get(name)) for name in ("major", "minor", "micro")]
            major, minor, micro = parts
            if major is not None and minor is not None and micro is not None:
                return f"{major}.{minor:02d}.{micro}"
    return None


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version.partition("-")[0]))


def settle_versions(facts: dict[str, Any]) -> None:
    """Set facts["slurm_version"] from facts["slurm_versions"] (what each source said) and the
    nodes' slurmd versions; warn (facts["warnings"] and each GPU node's document) where a
    node's slurmd reports another version than the one taken."""
    said = facts["slurm_versions"]
    by_version: dict[str, list[str]] = {}
    for node in facts["nodes"]:
        if node.get("version"):
            by_version.setdefault(node["version"], []).append(node["name"])
    said["nodes"] = by_version
    source = next((s for s in SOURCES if said.get(s)), None)
    if source is not None:
        version = said[source]
    elif by_version:
        source = "nodes"
        version = max(by_version, key=_key)
    else:
        return
    facts["slurm_version"] = version
    said["taken_from"] = source
    documents: dict[str, NodeFacts] = {d["host"]: d for d in facts["gpu_nodes"]}
    for node_version, names in sorted(by_version.items(), key=lambda item: _key(item[0])):
        if node_version == version:
            continue
        shown = ", ".join(names[:NAMED_NODES])
        if len(names) > NAMED_NODES:
            shown += " " + _("and %(count)s more") % {"count": len(names) - NAMED_NODES}
        values = {
            "nodes": shown,
            "count": len(names),
            "node_version": node_version,
            "version": version,
            "source": _source_name(source),
        }
        message = ngettext(
            "slurmd on %(count)s node reports Slurm %(node_version)s, not %(version)s as "
            "%(source)s does: %(nodes)s",
            "slurmd on %(count)s nodes reports Slurm %(node_version)s, not %(version)s as "
            "%(source)s does: %(nodes)s",
            len(names),
        )
        facts["warnings"].append(message % values)
        for name in names:
            document = documents.get(name)
            if document is not None:
                document["warnings"].append(
                    _(
                        "slurmd here reports Slurm %(node_version)s, not %(version)s as "
                        "%(source)s does"
                    )
                    % values
                )


def _source_name(source: str) -> str:
    if source == "nodes":
        return _("the newest nodes' slurmd")
    return {
        "controller": "slurmctld (scontrol show config)",
        "slurmrestd": "slurmrestd",
        "client": "scontrol version",
    }[source]
