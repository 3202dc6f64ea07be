"""`nvidia-smi -q -x`: the XML document, one <gpu> element per GPU.

Parsed with defusedxml only. The document type line nvidia-smi writes
(`<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">`) is accepted and never fetched;
entity declarations (the way into billion-laughs and external-entity attacks) are refused
before anything is expanded.

The XML carries no GPU index. nvidia-smi lists GPUs in index order, so a GPU's index is its
position in the document. `minor_number` is not used: it is the /dev/nvidiaN number, which
need not match nvidia-smi's index.
"""

import xml.etree.ElementTree as ElementTree
from xml.etree.ElementTree import Element

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from poc.probes.facts import GpuFacts, MigDevice, NodeFacts, new_gpu, new_node

from . import values as v
from .smi_list import smi_notice
from .smi_text import unindexed
from .values import ParseError

SOURCE = "nvidia-smi -q -x"

# Blocks that hold no fact we read but most of the bytes (supported_clocks alone is about half
# of a GPU's element). They are cut out of the text before parsing: parsing is what costs.
_SKIPPED_BLOCKS = ("supported_clocks", "processes", "accounted_processes")

_ROOT_OPEN = "<nvidia_smi_log>"
_ROOT_CLOSE = "</nvidia_smi_log>"


def _without_blocks(text: str) -> str:
    for tag in _SKIPPED_BLOCKS:
        opening, closing = f"<{tag}>", f"</{tag}>"
        if opening not in text:
            continue
        parts: list[str] = []
        position = 0
        while True:
            start = text.find(opening, position)
            end = text.find(closing, start) if start >= 0 else -1
            if end < 0:
                parts.append(text[position:])
                break
            parts.append(text[position:start])
            position = end + len(closing)
        text = "".join(parts)
    return text


def _parse_tree(text: str) -> Element:
    builder = ElementTree.TreeBuilder()
    parser = DefusedXMLParser(
        target=builder, forbid_dtd=False, forbid_entities=True, forbid_external=True
    )
    expat = getattr(parser, "parser", None)
    if expat is not None:
        # defusedxml's parser routes every element through Python-level callbacks; pointing
        # expat straight at the C tree builder makes parsing several times faster. defusedxml's
        # own guards (entity, external reference and DTD handlers) stay on the same expat
        # parser, untouched.
        expat.ordered_attributes = 0
        expat.StartElementHandler = builder.start
        expat.EndElementHandler = builder.end
        expat.CharacterDataHandler = builder.data
    try:
        parser.feed(text)
        root: Element = parser.close()
    except DefusedXmlException as exc:
        raise ParseError(f"refused XML: {type(exc).__name__} (entity declarations)") from None
    except ElementTree.ParseError as exc:
        raise ParseError(f"not well-formed XML: {exc}") from None
    except (ValueError, UnicodeError, OverflowError) as exc:
        raise ParseError(f"unreadable XML: {exc}") from None
    return root


def _last_document(text: str) -> tuple[str, int]:
    """The last complete document of `text` and how many documents it holds.

    `nvidia-smi -q -x -l N` writes one whole document every N seconds; the last complete one is
    the newest reading (a loop stopped mid-write leaves an unfinished document after it).
    """
    count = text.count(_ROOT_OPEN)
    if count < 2:
        return text, count
    end = text.rfind(_ROOT_CLOSE)
    start = text.rfind(_ROOT_OPEN, 0, end) if end >= 0 else -1
    if start < 0:
        return text, count
    return text[start : end + len(_ROOT_CLOSE)], count


def _text(element: Element | None, *path: str) -> str | None:
    for tag in path:
        if element is None:
            return None
        element = element.find(tag)
    if element is None:
        return None
    return element.text


def _first(element: Element | None, *paths: tuple[str, ...]) -> str | None:
    """The first of several paths that holds a known value (renamed tags across drivers)."""
    for path in paths:
        value = _text(element, *path)
        if v.known(value) is not None:
            return value
    return None


def _deep(element: Element | None, *tags: str) -> str | None:
    """The first known value of an element named one of `tags` anywhere below `element`."""
    if element is None:
        return None
    for tag in tags:
        for found in element.iter(tag):
            if v.known(found.text) is not None:
                return found.text
    return None


def _child(element: Element | None, *tags: str) -> Element | None:
    if element is None:
        return None
    for tag in tags:
        found = element.find(tag)
        if found is not None:
            return found
    return None


def _counters(element: Element | None) -> dict[str, str | None]:
    counters: dict[str, str | None] = {}
    if element is None:
        return counters
    for child in element:
        if len(child):
            for grandchild in child:
                counters[f"{v.snake(child.tag)}/{v.snake(grandchild.tag)}"] = grandchild.text
        else:
            counters[v.snake(child.tag)] = child.text
    return counters


def _reasons(gpu: Element) -> dict[str, bool]:
    block = _child(gpu, "clocks_event_reasons", "clocks_throttle_reasons")
    reasons: dict[str, bool] = {}
    if block is None:
        return reasons
    for child in block:
        name = v.reason_name(child.tag)
        state = v.to_bool(child.text)
        if name is not None and state is not None:
            reasons[name] = state
    return reasons


def _mig_devices(gpu: Element) -> list[MigDevice]:
    block = gpu.find("mig_devices")
    if block is None:
        return []
    devices: list[tuple[int, MigDevice]] = []
    for position, element in enumerate(block.iter("mig_device")):
        memory = None
        for child in element:
            if child.tag.endswith("fb_memory_usage"):
                memory = v.to_mib(_text(child, "total"))
                break
        index = v.to_int(_text(element, "index"))
        devices.append(
            (
                position if index is None else index,
                {
                    "gpu_instance_id": v.to_int(_text(element, "gpu_instance_id")),
                    "compute_instance_id": v.to_int(_text(element, "compute_instance_id")),
                    # The XML names no profile: it comes from `nvidia-smi -L` (see merge_nodes).
                    "profile": None,
                    "profile_id": None,
                    "memory_total_mib": memory,
                    "uuid": v.to_word(_text(element, "uuid")),
                },
            )
        )
    devices.sort(key=lambda pair: pair[0])
    return [device for _, device in devices]


def _gpu(element: Element, position: int) -> GpuFacts:
    pci = element.find("pci")
    link = _child(pci, "pci_gpu_link_info")
    generation = _child(link, "pcie_gen")
    widths = _child(link, "link_widths")
    power = _child(element, "gpu_power_readings", "power_readings")
    ecc = element.find("ecc_errors")
    volatile_corrected, volatile_uncorrected = v.ecc_totals(_counters(_child(ecc, "volatile")))
    aggregate_corrected, aggregate_uncorrected = v.ecc_totals(_counters(_child(ecc, "aggregate")))
    retired = element.find("retired_pages")
    remapped = element.find("remapped_rows")
    return new_gpu(
        index=position,
        name=v.to_word(_text(element, "product_name")),
        pci_device_id=v.pci_device_id(_text(pci, "pci_device_id")),
        pci_bus_id=v.bus_id(_text(pci, "pci_bus_id")) or v.bus_id(element.get("id")),
        uuid=v.to_word(_text(element, "uuid")),
        serial=v.to_word(_text(element, "serial")),
        memory_total_mib=v.to_mib(_text(element, "fb_memory_usage", "total")),
        memory_used_mib=v.to_mib(_text(element, "fb_memory_usage", "used")),
        persistence_mode=v.to_bool(_text(element, "persistence_mode")),
        mig_mode_current=v.to_bool(_text(element, "mig_mode", "current_mig")),
        mig_mode_pending=v.to_bool(_text(element, "mig_mode", "pending_mig")),
        mig_devices=_mig_devices(element),
        ecc_mode_current=v.to_bool(_text(element, "ecc_mode", "current_ecc")),
        ecc_mode_pending=v.to_bool(_text(element, "ecc_mode", "pending_ecc")),
        ecc_volatile_corrected=volatile_corrected,
        ecc_volatile_uncorrected=volatile_uncorrected,
        ecc_aggregate_corrected=aggregate_corrected,
        ecc_aggregate_uncorrected=aggregate_uncorrected,
        remapped_rows_correctable=v.to_int(_text(remapped, "remapped_row_corr")),
        remapped_rows_uncorrectable=v.to_int(_text(remapped, "remapped_row_unc")),
        remapped_rows_pending=v.to_bool(_text(remapped, "remapped_row_pending")),
        remapped_rows_failure=v.to_bool(_text(remapped, "remapped_row_failure")),
        retired_pages_single_bit=v.to_int(
            _text(retired, "multiple_single_bit_retirement", "retired_count")
        ),
        retired_pages_double_bit=v.to_int(_text(retired, "double_bit_retirement", "retired_count")),
        retired_pages_pending=v.to_bool(
            _first(retired, ("pending_retirement",), ("pending_blacklist",))
        ),
        pcie_gen_current=v.to_pcie_gen(
            _first(generation, ("current_link_gen",), ("device_current_link_gen",))
        ),
        # max_link_gen is what GPU and host negotiate; max_device_link_gen is the GPU's own.
        pcie_gen_max=v.to_pcie_gen(_first(generation, ("max_device_link_gen",), ("max_link_gen",))),
        pcie_width_current=v.to_link_width(_text(widths, "current_link_width")),
        pcie_width_max=v.to_link_width(_text(widths, "max_link_width")),
        power_draw_w=v.to_watts(
            _first(power, ("power_draw",), ("average_power_draw",), ("instant_power_draw",))
        ),
        power_limit_w=v.to_watts(
            _first(
                power,
                ("current_power_limit",),
                ("enforced_power_limit",),
                ("power_limit",),
                ("requested_power_limit",),
            )
            # Newer drivers nest the limits one level down (R610's -q prints "GPU Ceiling
            # Power Limit" > "Current Power Limit"): the first one found below.
            or _deep(power, "current_power_limit", "enforced_power_limit")
        ),
        temperature_c=v.to_celsius(_text(element, "temperature", "gpu_temp")),
        sm_clock_mhz=v.to_mhz(_text(element, "clocks", "sm_clock")),
        sm_clock_max_mhz=v.to_mhz(_text(element, "max_clocks", "sm_clock")),
        utilization_gpu_pct=v.to_percent(_text(element, "utilization", "gpu_util")),
        clock_event_reasons=_reasons(element),
        fabric_state=v.to_word(_text(element, "fabric", "state")),
        # The status is "Success" or the NVML error of the registration: an error is its value.
        fabric_status=v.to_text(_text(element, "fabric", "status")),
        # <gpu_recovery_action> (R570 and newer); before it, <gpu_reset_status>, which R570
        # still prints, marked deprecated.
        recovery_action=v.recovery_action(
            _text(element, "gpu_recovery_action"),
            _text(element, "gpu_reset_status", "reset_required"),
            _text(element, "gpu_reset_status", "drain_and_reset_recommended"),
        ),
    )


def _without_notices(text: str) -> tuple[str, list[str]]:
    """The text without nvidia-smi's notices about a troubled GPU, and the notices.

    With a corrupted infoROM or a GPU it cannot reach, nvidia-smi writes its notice ("WARNING:
    infoROM is corrupted at gpu 0000:3B:00.0") on a line of its own before the document, as
    in every other mode; the document itself is well-formed XML.
    """
    if "infoROM" not in text and "device handle" not in text:
        return text, []
    kept: list[str] = []
    notices: list[str] = []
    for line in text.split("\n"):
        notice = smi_notice(line) if line[:1] != "<" and "<" not in line else None
        if notice is None:
            kept.append(line)
        else:
            notices.append(f"nvidia-smi: {notice}")
    return "\n".join(kept), notices


def parse_smi_xml(text: str) -> NodeFacts:
    """Facts from `nvidia-smi -q -x` output; ParseError for anything else or refused XML."""
    text, notices = _without_notices(text)
    if "<" not in text:
        if notices:
            raise ParseError(f"-q -x output holds no document, only: {notices[0]}"[:500])
        raise ParseError("not nvidia-smi XML: no XML element")
    text, documents = _last_document(text)
    root = _parse_tree(_without_blocks(text))
    if root.tag != "nvidia_smi_log":
        raise ParseError(f"not nvidia-smi output: XML root element is <{root.tag[:40]}>")
    gpus = [_gpu(element, position) for position, element in enumerate(root.findall("gpu"))]
    warnings = notices + unindexed(gpus, v.to_int(_text(root, "attached_gpus")))
    if documents > 1:
        warnings.append(
            f"{documents} documents (a query run with -l): the last complete one is read"
        )
    return new_node(
        # R610 renames the versions (see smi_text.versions_of); the new tags win.
        driver_version=v.to_version(_first(root, ("kmd_version",), ("driver_version",))),
        cuda_version=v.to_version(_first(root, ("cuda_umd_version",), ("cuda_version",))),
        gpus=gpus,
        sources=[SOURCE],
        warnings=warnings,
    )
