"""MIG devices of a node under the mixed strategy: counted per profile from the node's
`status.allocatable` and the labels of NVIDIA's GPU feature discovery, and the warnings where
`status.capacity`, `status.allocatable` and those labels disagree.

Why capacity is not counted: after a MIG reconfiguration kubelet keeps a profile the device
plugin no longer advertises in `status.capacity` (its allocatable drops to 0) until the plugin
restarts, so summing capacity counts devices that no longer exist. Feature discovery reads the
GPUs themselves (`nvidia.com/mig-<profile>.count`); where a node carries such labels they
decide, a profile without one having none. Where it carries none, allocatable counts."""

import re
from typing import Any

from django.utils.translation import gettext as _

from poc.probes.connectors.kubernetes.values import as_int

MIG_RESOURCE = "nvidia.com/mig-"
_COUNT_LABEL = re.compile(r"^nvidia\.com/mig-(?P<profile>[^/]+)\.count$")
# mig-parted's configurations that name their layout: every GPU whole (or MIG mode with no
# device), or every GPU split into one profile ("all-1g.10gb"). Others ("all-balanced", a
# site's own) depend on the GPU model and are not checked.
_NO_DEVICES = frozenset({"all-disabled", "all-enabled"})
_ONE_PROFILE = re.compile(r"^all-(?P<profile>\d+g\.\d+gb)$")
_UNFINISHED = frozenset({"pending", "rebooting"})
UNKNOWN = "—"


def mig_profiles(
    labels: dict[str, str], capacity: dict[str, Any], allocatable: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Per MIG profile ("1g.10gb"): capacity, allocatable and the count label as read (None
    where absent), `count` (the devices counted) and `memory_mib` (GFD's label)."""
    names = {
        str(resource).removeprefix(MIG_RESOURCE)
        for resource in (*capacity, *allocatable)
        if str(resource).startswith(MIG_RESOURCE)
    }
    labelled = {m["profile"] for m in map(_COUNT_LABEL.match, labels) if m}
    profiles: dict[str, dict[str, Any]] = {}
    for name in sorted(names | labelled):
        resource = MIG_RESOURCE + name
        entry: dict[str, Any] = {
            "capacity": as_int(capacity.get(resource)),
            "allocatable": as_int(allocatable.get(resource)),
            "label": as_int(labels.get(f"{resource}.count")),
            "memory_mib": as_int(labels.get(f"{resource}.memory")),
        }
        if labelled:
            count = entry["label"] or 0
        elif entry["allocatable"] is not None:
            count = entry["allocatable"]
        else:
            count = entry["capacity"] or 0
        entry["count"] = max(count, 0)
        profiles[name] = entry
    return profiles


def mig_warnings(profiles: dict[str, dict[str, Any]], gfd: dict[str, Any]) -> list[str]:
    """What the node's MIG numbers and feature discovery's MIG labels leave in doubt."""
    warnings: list[str] = []
    # Feature discovery labels every profile it finds; on a node it labels under the mixed
    # strategy, a profile without a count label has no device.
    labels_speak = any(e["label"] is not None for e in profiles.values()) or (
        gfd.get("mig_strategy") == "mixed" and bool(gfd.get("product"))
    )
    for profile, entry in profiles.items():
        capacity, allocatable, label = entry["capacity"], entry["allocatable"], entry["label"]
        seen = label if label is not None or not labels_speak else 0
        # A resource the node does not list is one no pod can request: none advertised.
        known = {capacity or 0, allocatable or 0} | ({seen} if seen is not None else set())
        if len(known) <= 1:
            continue
        numbers = {
            "profile": profile,
            "capacity": _shown(capacity),
            "allocatable": _shown(allocatable),
            "label": _shown(label),
            "count": entry["count"],
        }
        if capacity and not allocatable and not seen:
            message = _(
                "MIG profile %(profile)s: capacity %(capacity)s, allocatable %(allocatable)s, "
                "label nvidia.com/mig-%(profile)s.count %(label)s; counted %(count)s: the "
                "capacity is stale (kubelet keeps a profile the device plugin no longer "
                "advertises until the plugin restarts)"
            )
        elif capacity is None and allocatable is None:
            message = _(
                "MIG profile %(profile)s: capacity %(capacity)s, allocatable %(allocatable)s, "
                "label nvidia.com/mig-%(profile)s.count %(label)s; counted %(count)s from the "
                "label: the device plugin does not advertise these devices yet, so no pod can "
                "request them"
            )
        else:
            message = _(
                "MIG profile %(profile)s: capacity %(capacity)s, allocatable %(allocatable)s "
                "and label nvidia.com/mig-%(profile)s.count %(label)s disagree; counted "
                "%(count)s"
            )
        warnings.append(message % numbers)
    config, state = gfd.get("mig_config"), gfd.get("mig_config_state")
    if state in _UNFINISHED:
        warnings.append(
            _(
                "MIG reconfiguration not finished (nvidia.com/mig.config=%(config)s, "
                "nvidia.com/mig.config.state=%(state)s): the MIG devices counted may change"
            )
            % {"config": config or UNKNOWN, "state": state}
        )
    elif state == "failed":
        warnings.append(
            _(
                "MIG reconfiguration failed (nvidia.com/mig.config=%(config)s, "
                "nvidia.com/mig.config.state=failed): the MIG devices counted may not be the "
                "layout asked for"
            )
            % {"config": config or UNKNOWN}
        )
    elif gfd.get("mig_strategy") != "single" and config:
        wanted = _wanted(config)
        found = {p for p, e in profiles.items() if e["count"] > 0}
        if wanted is not None and found != wanted:
            layout = ", ".join(f"{profiles[p]['count']} × {p}" for p in sorted(found))
            warnings.append(
                _(
                    "nvidia.com/mig.config=%(config)s does not match the MIG devices "
                    "counted (%(found)s)"
                )
                % {"config": config, "found": layout or _("none")}
            )
    return warnings


def _wanted(config: str) -> set[str] | None:
    """The profiles a mig-parted configuration name implies, None where the name does not say."""
    if config in _NO_DEVICES:
        return set()
    match = _ONE_PROFILE.match(config)
    return {match["profile"]} if match else None


def _shown(number: int | None) -> str:
    return UNKNOWN if number is None else str(number)
