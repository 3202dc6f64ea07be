"""nvidia-smi's notices about a troubled GPU: a corrupted infoROM, a GPU it
cannot reach."""

import re
from dataclasses import dataclass

from django.utils.translation import gettext as _

from poc.probes.facts import NodeFacts
from poc.probes.rules.health.base import Findings

# nvidia-smi's notices about a troubled GPU, as the parsers keep them among the node's warnings
# ("nvidia-smi: WARNING: infoROM is corrupted at gpu 0000:3B:00.0", "nvidia-smi: Unable to
# determine the device handle for GPU 0000:3B:00.0: Unknown Error"; docs/probes.md, "Notices
# about a troubled GPU"). Some drivers write no space between "GPU" and the bus id.
_NOTICE_BUS = (
    r"(?P<bus>(?:PCI:)?(?:[0-9A-Fa-f]{1,8}:)?[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(?:\.[0-7])?)"
)
INFOROM_NOTICE = re.compile(r"infoROM is corrupted(?: at gpu\s*" + _NOTICE_BUS + r")?", re.I)
UNREACHABLE_NOTICE = re.compile(
    r"Unable to determine the device handle for gpu\s*" + _NOTICE_BUS + r"?\s*:?\s*(?P<error>.*)",
    re.I,
)
# A bus id in any of the spellings that name the same GPU: nvidia-smi's notices print a 4-digit
# domain ("0000:3B:00.0"), the facts hold the driver's 8-digit one ("00000000:3B:00.0").
_BUS_PARTS = re.compile(
    r"(?:PCI:)?(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})(?:\.([0-7]))?$"
)


def bus_key(raw: str | None) -> tuple[int, int, int, int] | None:
    """(domain, bus, device, function) of a PCI bus id, whatever its spelling: "0000:3B:00.0"
    and "00000000:3b:00.0" give the same key. None when it is not a bus id."""
    match = _BUS_PARTS.match(raw.strip()) if raw else None
    if match is None:
        return None
    domain, bus, device, function = match.groups()
    return (int(domain or "0", 16), int(bus, 16), int(device, 16), int(function or "0", 16))


@dataclass
class SmiNotice:
    """The notices nvidia-smi printed about one GPU (by bus id), of one kind."""

    bus: str | None  # as the notice prints it; None when the notice names no bus id
    gpu_index: int | None  # the GPU of the facts with that bus id, if any
    errors: list[str]  # the error texts, for a GPU nvidia-smi cannot reach


def smi_notices(node: NodeFacts, pattern: re.Pattern[str]) -> list[SmiNotice]:
    """The node's warnings matching `pattern`, one entry per GPU (by normalised bus id). A GPU
    of the facts with that bus id gives its index."""
    index_of: dict[tuple[int, int, int, int], int | None] = {}
    for gpu in node["gpus"]:
        key = bus_key(gpu["pci_bus_id"])
        if key is not None:
            index_of.setdefault(key, gpu["index"])
    found: dict[object, SmiNotice] = {}
    for warning in node["warnings"]:
        match = pattern.search(warning)
        if match is None:
            continue
        bus = match.group("bus")
        key = bus_key(bus)
        notice = found.setdefault(
            key if key is not None else bus,
            SmiNotice(bus=bus, gpu_index=index_of.get(key) if key else None, errors=[]),
        )
        error = match.groupdict().get("error")
        error = " ".join(error.split()).rstrip(".") if error else ""
        if error and error not in notice.errors:
            notice.errors.append(error)
    return list(found.values())


def gpu_at(bus: str | None) -> str:
    if bus:
        return _("the GPU at %(bus)s") % {"bus": bus}
    return _("a GPU it does not name")


def inforom(node: NodeFacts, found: Findings) -> None:
    """nvidia-smi's "infoROM is corrupted at gpu ..." notice: degraded, on the GPU with that
    bus id (else on the node). The GPU works, but the records its infoROM keeps (ECC error
    counts, retired pages) cannot be trusted; NVIDIA's guidance is to reflash the infoROM or have
    the board serviced. Without a notice the rule does not apply: not every output keeps
    nvidia-smi's notices, so their absence is no finding (and no unknown either)."""
    notices = smi_notices(node, INFOROM_NOTICE)
    if not notices:
        found.skip()
        return
    for notice in notices:
        found.problem(
            "inforom_corrupted",
            "degraded",
            notice.bus,
            _(
                "nvidia-smi reports a corrupted infoROM on %(gpu)s: the GPU works, but its ECC "
                "and retired-page records cannot be trusted; the infoROM should be reflashed or "
                "the board serviced."
            )
            % {"gpu": gpu_at(notice.bus)},
            gpu_index=notice.gpu_index,
        )


def unreachable_gpus(node: NodeFacts, found: Findings) -> None:
    """nvidia-smi's "Unable to determine the device handle for GPU ..." notice: failed. The GPU
    has fallen off the bus or the driver has lost it, as with Xid 79 (NVIDIA's action: restart
    the machine). The problem names the bus id and nvidia-smi's error; it stays with the node,
    or goes to the GPU with that bus id where the facts list one (an output read before the GPU
    was lost). Without a notice the rule does not apply, as for `inforom`; a GPU missing from
    the facts is judged by `gpu_count`."""
    notices = smi_notices(node, UNREACHABLE_NOTICE)
    if not notices:
        found.skip()
        return
    for notice in notices:
        found.problem(
            "gpu_unreachable",
            "failed",
            notice.bus,
            _(
                "nvidia-smi cannot reach %(gpu)s (%(error)s): the GPU has fallen off the bus or "
                "the driver has lost it; as for Xid 79, the machine must be restarted and the GPU "
                "checked."
            )
            % {
                "gpu": gpu_at(notice.bus),
                "error": "; ".join(notice.errors) or _("no error given"),
            },
            gpu_index=notice.gpu_index,
        )
