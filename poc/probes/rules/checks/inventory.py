"""Checks of what the nodes have: GPU counts and models, driver and CUDA
versions, MIG, ECC and persistence modes, MIG profiles."""

from collections import Counter
from typing import Any, Literal

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import GpuFacts, NodeFacts, mig_levels
from poc.probes.peaks import normalize_device_id
from poc.probes.rules.checks.base import (
    DEVICE_ID_RE,
    VERSION_RE,
    Result,
    each_gpu,
    failed_result,
    gpu_name,
    listing,
    no_gpus,
    node_name,
    passed_result,
    unable_result,
    unlisted_nodes,
)


def _unlisted_detail(unlisted: list[str]) -> str:
    return _("The inventory is unknown on %(nodes)s: no output read lists its GPUs.") % {
        "nodes": listing(unlisted)
    }


def gpu_count_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    if not nodes:
        return unable_result(_("The probe run holds no node."))
    total = sum(len(node["gpus"]) for node in nodes)
    measured = ngettext("%(count)s GPU", "%(count)s GPUs", total) % {"count": total}
    if total >= params["count"]:
        return passed_result(measured)
    unlisted = unlisted_nodes(nodes)
    if unlisted:
        return unable_result(_unlisted_detail(unlisted), measured)
    return failed_result(
        measured,
        _("%(count)s found, at least %(wanted)s wanted.")
        % {"count": total, "wanted": params["count"]},
    )


def gpus_per_node_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    if not nodes:
        return unable_result(_("The probe run holds no node."))
    counts = [(len(node["gpus"]), node_name(node, position)) for position, node in enumerate(nodes)]
    fewest = min(count for count, _name in counts)
    if len(nodes) == 1:
        measured = ngettext("%(count)s GPU", "%(count)s GPUs", fewest) % {"count": fewest}
    else:
        measured = ngettext(
            "fewest %(count)s GPU per node, over %(nodes)s nodes",
            "fewest %(count)s GPUs per node, over %(nodes)s nodes",
            fewest,
        ) % {"count": fewest, "nodes": len(nodes)}
    unlisted = unlisted_nodes(nodes)
    short = [
        f"{name}: {count}"
        for count, name in counts
        if count < params["count"] and name not in unlisted
    ]
    if unlisted and not short:
        return unable_result(_unlisted_detail(unlisted), measured)
    if not short:
        return passed_result(measured)
    return failed_result(
        measured, _("Nodes with fewer GPUs: %(nodes)s.") % {"nodes": listing(short)}
    )


def _model_matches(gpu: GpuFacts, models: list[str]) -> bool | None:
    """True or False, or None when the GPU's name or device id needed to tell is not known."""
    name = (gpu["name"] or "").lower()
    device_id = normalize_device_id(gpu["pci_device_id"])
    undecided = False
    for model in models:
        if DEVICE_ID_RE.fullmatch(model):
            if device_id is None:
                undecided = True
            elif device_id == model:
                return True
        elif not name:
            undecided = True
        elif model.lower() in name:
            return True
    return None if undecided else False


def _gpu_model(gpu: GpuFacts) -> str:
    name = gpu["name"] or _("unknown model")
    device_id = normalize_device_id(gpu["pci_device_id"])
    return f"{name} ({device_id})" if device_id else name


def gpu_model_in(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    gpus = list(each_gpu(nodes))
    if not gpus:
        return no_gpus(nodes)
    models = Counter(_gpu_model(gpu) for _position, gpu in gpus)
    measured = ", ".join(f"{count} × {model}" for model, count in models.most_common())
    wrong: list[str] = []
    unknown: list[str] = []
    for position, gpu in gpus:
        match = _model_matches(gpu, params["models"])
        where = gpu_name(nodes, position, gpu["index"])
        if match is False:
            wrong.append(f"{where}: {_gpu_model(gpu)}")
        elif match is None:
            unknown.append(where)
    if wrong:
        return failed_result(measured, _("Other models: %(gpus)s.") % {"gpus": listing(wrong)})
    if unknown:
        return unable_result(
            _("The model (name or PCI device id) was not reported for %(gpus)s.")
            % {"gpus": listing(unknown)},
            measured,
        )
    return passed_result(measured)


def _version_tuple(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    found = VERSION_RE.match(text.strip())
    return tuple(int(part) for part in found.group(0).split(".")) if found else None


def _version_at_least(have: tuple[int, ...], wanted: tuple[int, ...]) -> bool:
    width = max(len(have), len(wanted))
    return have + (0,) * (width - len(have)) >= wanted + (0,) * (width - len(wanted))


def _versions_at_least(
    field: Literal["driver_version", "cuda_version"], params: dict[str, Any], nodes: list[NodeFacts]
) -> Result:
    if not nodes:
        return unable_result(_("The probe run holds no node."))
    wanted = _version_tuple(params["version"])
    assert wanted is not None  # validated
    versions = Counter(version for node in nodes if (version := node[field]))
    measured = ", ".join(version for version, _count in versions.most_common())
    older: list[str] = []
    unknown: list[str] = []
    for position, node in enumerate(nodes):
        have = _version_tuple(node[field])
        if have is None:
            unknown.append(node_name(node, position))
        elif not _version_at_least(have, wanted):
            older.append(f"{node_name(node, position)}: {node[field]}")
    if older:
        return failed_result(measured, _("Older on %(nodes)s.") % {"nodes": listing(older)})
    if unknown:
        return unable_result(
            _("The version was not reported on %(nodes)s.") % {"nodes": listing(unknown)},
            measured,
        )
    return passed_result(measured)


def driver_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    return _versions_at_least("driver_version", params, nodes)


def cuda_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    return _versions_at_least("cuda_version", params, nodes)


GpuFlag = Literal["mig_mode_current", "ecc_mode_current", "persistence_mode"]


def _every_gpu(field: GpuFlag, nodes: list[NodeFacts]) -> Result:
    gpus = list(each_gpu(nodes))
    if not gpus:
        return no_gpus(nodes)
    on = sum(1 for _position, gpu in gpus if gpu[field] is True)
    measured = _("on for %(on)s of %(total)s GPUs") % {"on": on, "total": len(gpus)}
    off = [gpu_name(nodes, p, gpu["index"]) for p, gpu in gpus if gpu[field] is False]
    unknown = [gpu_name(nodes, p, gpu["index"]) for p, gpu in gpus if gpu[field] is None]
    if off:
        return failed_result(measured, _("Off on %(gpus)s.") % {"gpus": listing(off)})
    if unknown:
        return unable_result(
            _("Not reported for %(gpus)s.") % {"gpus": listing(unknown)},
            measured,
        )
    return passed_result(measured)


def mig_enabled(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    return _every_gpu("mig_mode_current", nodes)


def ecc_enabled(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    return _every_gpu("ecc_mode_current", nodes)


def persistence_mode_enabled(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    return _every_gpu("persistence_mode", nodes)


def mig_profile(value: str | None) -> str:
    return (value or "").strip().lower().removeprefix("mig").strip()


def mig_profile_count_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    """A compute instance profile ("1c.3g.40gb") counts the devices of that very profile; a
    GPU instance profile ("3g.40gb") counts GPU instances: identified ones where the output
    identifies them, else the devices spanning a whole instance plus one for a GPU's
    compute-slice devices of that profile (they may share one instance or sit in one each:
    the check is unable when only the second reading would pass)."""
    gpus = list(each_gpu(nodes))
    if not gpus:
        return no_gpus(nodes)
    profile = params["profile"]
    compute_level = "c." in profile
    found = unplaced = 0
    for _position, gpu in gpus:
        levels = mig_levels(gpu)
        if compute_level:
            found += sum(
                n for name, n in levels["compute_profiles"].items() if mig_profile(name) == profile
            )
        elif levels["gpu_instances"] is not None:
            found += sum(1 for i in levels["gpu_instances"] if mig_profile(i["profile"]) == profile)
        else:
            slices = 0  # compute instances of a GPU instance of the profile, not identified
            for device in gpu["mig_devices"]:
                if mig_profile(device["profile"]) != profile:
                    continue
                own = mig_profile(device.get("compute_profile") or device["profile"])
                if own == profile:
                    found += 1
                else:
                    slices += 1
            # They sit in one GPU instance of the profile at least, in one each at most.
            found += 1 if slices else 0
            unplaced += max(slices - 1, 0)
    if compute_level:
        measured = ngettext(
            "%(count)s MIG compute instance of profile %(profile)s",
            "%(count)s MIG compute instances of profile %(profile)s",
            found,
        ) % {"count": found, "profile": profile}
    else:
        measured = ngettext(
            "%(count)s MIG GPU instance of profile %(profile)s",
            "%(count)s MIG GPU instances of profile %(profile)s",
            found,
        ) % {"count": found, "profile": profile}
    if found >= params["count"]:
        return passed_result(measured)
    if found + unplaced >= params["count"]:
        return unable_result(
            ngettext(
                "Up to %(count)s more: compute instances sit in %(profile)s GPU instances that "
                "the output does not identify, so several may share one.",
                "Up to %(count)s more: compute instances sit in %(profile)s GPU instances that "
                "the output does not identify, so several may share one.",
                unplaced,
            )
            % {"count": unplaced, "profile": profile},
            measured,
        )
    if all(gpu["mig_mode_current"] is None for _position, gpu in gpus) and not any(
        gpu["mig_devices"] for _position, gpu in gpus
    ):
        return unable_result(_("Neither MIG mode nor MIG devices were reported."), measured)
    enabled = sum(1 for _position, gpu in gpus if gpu["mig_mode_current"])
    return failed_result(
        measured,
        _(
            "%(found)s found, at least %(wanted)s wanted; MIG is enabled on %(enabled)s of "
            "%(total)s GPUs."
        )
        % {"found": found, "wanted": params["count"], "enabled": enabled, "total": len(gpus)},
    )
