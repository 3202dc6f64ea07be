"""`nvidia-smi -q -x`: the XML document, one <gpu> element per GPU.

Parsed with defusedxml only. The document type line nvidia-smi writes
(`<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">`) is accepted and never fetched;
entity declarations (the way into billion-laughs and external-entity attacks) are refused
before anything is expanded.

The XML carries no GPU index. nvidia-smi lists GPUs in index order, so a GPU's index is its
position in the document. `minor_number` is not used: it is the /dev/nvidiaN number, which
need not match nvidia-smi's index.

Building elements is what parsing costs, and most of a <gpu> element is never read: the
elements no fact reads are cut out of the text before it is parsed, where that provably leaves
every fact, error and refusal as they are when the whole text is parsed (see _read_tree).

The registry's `smi-xml` entry (formats.py) says how this output is recognised and
which commands make it.
"""

import functools
import re
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

# The children of a <gpu> that _gpu reads; the others are cut out before parsing (_read_tree).
_GPU_READS = (
    "product_name",
    "persistence_mode",
    "mig_mode",
    "mig_devices",
    "serial",
    "uuid",
    "gpu_recovery_action",
    "gpu_reset_status",
    "pci",
    "clocks_event_reasons",
    "clocks_throttle_reasons",
    "fb_memory_usage",
    "utilization",
    "ecc_mode",
    "ecc_errors",
    "retired_pages",
    "remapped_rows",
    "temperature",
    "gpu_power_readings",
    "power_readings",
    "clocks",
    "max_clocks",
    "fabric",
)
# Inside blocks _gpu reads only by child name, the children it does not read (the bulk of them),
# cut out as well. No name listed here is one _gpu reads in any of these blocks.
_UNREAD_IN = {
    "pci": (
        "pci_bus",
        "pci_device",
        "pci_domain",
        "pci_base_class",
        "pci_sub_class",
        "pci_sub_system_id",
        "pci_bridge_chip",
        "replay_counter",
        "replay_rollover_counter",
        "tx_util",
        "rx_util",
        "atomic_caps_outbound",
        "atomic_caps_inbound",
    ),
    "ecc_errors": (
        "aggregate_uncorrectable_sram_sources",
        "channel_repair_pending",
        "tpc_repair_pending",
        "unrepairable_memory",
    ),
    "remapped_rows": (
        "remapped_row_corr_inactive",
        "remapped_row_unc_inactive",
        "row_remapper_histogram",
    ),
    "temperature": (
        "gpu_temp_tlimit",
        "gpu_temp_max_threshold",
        "gpu_temp_slow_threshold",
        "gpu_temp_max_tlimit_threshold",
        "gpu_temp_slow_tlimit_threshold",
        "gpu_temp_max_gpu_tlimit_threshold",
        "gpu_target_temperature",
        "memory_temp",
        "gpu_temp_max_mem_tlimit_threshold",
    ),
    "fabric": ("cliqueId", "clusterUuid", "health"),
    "utilization": ("memory_util", "encoder_util", "decoder_util", "jpeg_util", "ofa_util"),
}

# Character data as expat takes it: no markup, no reference, no "]]>", no character XML forbids.
# An element the patterns below match is thereby well-formed wherever it stands.
_TEXT = r"(?:[^<&\]\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]++|\](?!\]>))*+"
_NAME = r"[A-Za-z_][A-Za-z0-9_]*+"


def _element(tabs: int, name: str, group: str, depth: int) -> str:
    """A regex for one element as nvidia-smi writes it, from after its `<`: `name>text</name>`,
    or `name>`, its children on lines of their own one tab deeper (elements of this shape,
    `depth` levels down at most) and `</name>` on a line indented `tabs` tabs. A start tag
    without attributes and its own end tag: a whole element, nothing around it."""
    children = ""
    if depth:
        child = _element(tabs + 1, _NAME, group + "c", depth - 1)
        children = rf"|(?:\n{chr(9) * (tabs + 1)}<{child})++\n{chr(9) * tabs}"
    return rf"(?P<{group}>{name})>(?:{_TEXT}{children})</(?P={group})>"


def _row(tabs: int, name: str, group: str, depth: int) -> str:
    """Such elements one after another (blank lines between them are what _without_blocks
    left), from after the first one's `<`."""
    first = _element(tabs, name, group + "a", depth)
    more = _element(tabs, name, group + "b", depth)
    return rf"{first}(?:(?:\n{chr(9) * tabs})++<{more})*+"


# Rows of unread elements: children of a <gpu> (two tabs in; any name _gpu does not read), and
# children of a block in _UNREAD_IN (three tabs in; the names listed there).
_GPU_UNREAD = re.compile(
    r"\n\t\t<" + _row(2, r"(?!(?:" + "|".join(_GPU_READS) + r")>)" + _NAME, "g", 2)
)
_BLOCK_UNREAD = re.compile(
    r"\n\t\t\t<"
    + _row(3, "(?:" + "|".join(sorted({n for ns in _UNREAD_IN.values() for n in ns})) + ")", "b", 1)
)
# What stands where a row was cut, one character for each kind of row: characters XML accepts
# and no ASCII text holds (an ASCII text needs no search for them).
_GPU_MARK = "\x80"
_BLOCK_MARK = "\x81"


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


def _marks(element: Element, mark: str) -> int:
    """How many `mark`s the text of `element` and the tails of its children hold."""
    return (element.text or "").count(mark) + sum((c.tail or "").count(mark) for c in element)


def _marks_in_place(root: Element) -> tuple[int, int]:
    """The gpu marks right inside a root <gpu> and the block marks right inside its first block
    by each name in _UNREAD_IN: where _gpu reads children only by names no cut element has."""
    gpu_marks = block_marks = 0
    for gpu in root.findall("gpu"):
        gpu_marks += _marks(gpu, _GPU_MARK)
        for name in _UNREAD_IN:
            block = gpu.find(name)
            if block is not None:
                block_marks += _marks(block, _BLOCK_MARK)
    return gpu_marks, block_marks


def _read_tree(text: str) -> Element:
    """The tree of `text` without the elements no fact reads, or the whole tree.

    A cut row (_GPU_UNREAD, _BLOCK_UNREAD) is whole elements, well-formed on their own: the
    text parses (or is refused) exactly when what is left does, and what is left is parsed with
    every guard. Each row leaves a mark; when every mark stands where its row should be
    (_marks_in_place), the cut elements were children _gpu never reads, and every fact is as in
    the whole tree. Otherwise (an error to report with the lines of the whole text, a mark in a
    comment, rows indented as no nvidia-smi writes them), the whole text is parsed.
    """
    if not text.isascii() and (_GPU_MARK in text or _BLOCK_MARK in text):
        return _parse_tree(text)
    reduced, gpu_cuts = _GPU_UNREAD.subn(_GPU_MARK, text)
    reduced, block_cuts = _BLOCK_UNREAD.subn(_BLOCK_MARK, reduced)
    if not gpu_cuts and not block_cuts:
        return _parse_tree(text)
    try:
        root = _parse_tree(reduced)
    except ParseError:
        return _parse_tree(text)
    return root if _marks_in_place(root) == (gpu_cuts, block_cuts) else _parse_tree(text)


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


# The converters of values, remembering their last answers: the GPUs of a node repeat most
# values ("N/A", "0", "Enabled", "700.00 W"), and converting them was most of what reading the
# facts cost. Every one of them returns an immutable value.
_remember = functools.lru_cache(maxsize=4096)
_to_int = _remember(v.to_int)
_to_bool = _remember(v.to_bool)
_to_mib = _remember(v.to_mib)
_to_word = _remember(v.to_word)
_to_text = _remember(v.to_text)
_pci_device_id = _remember(v.pci_device_id)
_to_pcie_gen = _remember(v.to_pcie_gen)
_to_link_width = _remember(v.to_link_width)
_to_watts = _remember(v.to_watts)
_to_celsius = _remember(v.to_celsius)
_to_mhz = _remember(v.to_mhz)
_to_percent = _remember(v.to_percent)
_recovery_action = _remember(v.recovery_action)


@_remember
def _ecc_totals(counters: tuple[tuple[str, str | None], ...]) -> tuple[int | None, int | None]:
    """values.ecc_totals of the counters _counters gives (a later duplicate name wins)."""
    return v.ecc_totals(dict(counters))


def _counters(element: Element | None) -> tuple[tuple[str, str | None], ...]:
    """An ECC block's counters for ecc_totals, as (name, raw value) pairs in document order."""
    if element is None:
        return ()
    counters: list[tuple[str, str | None]] = []
    for child in element:
        if len(child):
            for grandchild in child:
                counters.append(
                    (f"{v.snake(child.tag)}/{v.snake(grandchild.tag)}", grandchild.text)
                )
        else:
            counters.append((v.snake(child.tag), child.text))
    return tuple(counters)


def _reasons(gpu: Element) -> dict[str, bool]:
    block = _child(gpu, "clocks_event_reasons", "clocks_throttle_reasons")
    reasons: dict[str, bool] = {}
    if block is None:
        return reasons
    for child in block:
        name = v.reason_name(child.tag)
        state = _to_bool(child.text)
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
                memory = _to_mib(_text(child, "total"))
                break
        index = _to_int(_text(element, "index"))
        devices.append(
            (
                position if index is None else index,
                {
                    "gpu_instance_id": _to_int(_text(element, "gpu_instance_id")),
                    "compute_instance_id": _to_int(_text(element, "compute_instance_id")),
                    # The XML names no profile: it comes from `nvidia-smi -L` (see merge_nodes).
                    "profile": None,
                    "profile_id": None,
                    "memory_total_mib": memory,
                    "uuid": _to_word(_text(element, "uuid")),
                },
            )
        )
    devices.sort(key=lambda pair: pair[0])
    return [device for _, device in devices]


def _gpu(element: Element, position: int) -> GpuFacts:
    """The facts of one <gpu>. It reads only the children named in _GPU_READS, and none named in
    _UNREAD_IN inside those blocks: what it reads must stay out of what _read_tree cuts."""
    pci = element.find("pci")
    link = _child(pci, "pci_gpu_link_info")
    generation = _child(link, "pcie_gen")
    widths = _child(link, "link_widths")
    power = _child(element, "gpu_power_readings", "power_readings")
    ecc = element.find("ecc_errors")
    volatile_corrected, volatile_uncorrected = _ecc_totals(_counters(_child(ecc, "volatile")))
    aggregate_corrected, aggregate_uncorrected = _ecc_totals(_counters(_child(ecc, "aggregate")))
    retired = element.find("retired_pages")
    remapped = element.find("remapped_rows")
    return new_gpu(
        index=position,
        name=_to_word(_text(element, "product_name")),
        pci_device_id=_pci_device_id(_text(pci, "pci_device_id")),
        pci_bus_id=v.bus_id(_text(pci, "pci_bus_id")) or v.bus_id(element.get("id")),
        uuid=_to_word(_text(element, "uuid")),
        serial=_to_word(_text(element, "serial")),
        memory_total_mib=_to_mib(_text(element, "fb_memory_usage", "total")),
        memory_used_mib=_to_mib(_text(element, "fb_memory_usage", "used")),
        persistence_mode=_to_bool(_text(element, "persistence_mode")),
        mig_mode_current=_to_bool(_text(element, "mig_mode", "current_mig")),
        mig_mode_pending=_to_bool(_text(element, "mig_mode", "pending_mig")),
        mig_devices=_mig_devices(element),
        ecc_mode_current=_to_bool(_text(element, "ecc_mode", "current_ecc")),
        ecc_mode_pending=_to_bool(_text(element, "ecc_mode", "pending_ecc")),
        ecc_volatile_corrected=volatile_corrected,
        ecc_volatile_uncorrected=volatile_uncorrected,
        ecc_aggregate_corrected=aggregate_corrected,
        ecc_aggregate_uncorrected=aggregate_uncorrected,
        remapped_rows_correctable=_to_int(_text(remapped, "remapped_row_corr")),
        remapped_rows_uncorrectable=_to_int(_text(remapped, "remapped_row_unc")),
        remapped_rows_pending=_to_bool(_text(remapped, "remapped_row_pending")),
        remapped_rows_failure=_to_bool(_text(remapped, "remapped_row_failure")),
        retired_pages_single_bit=_to_int(
            _text(retired, "multiple_single_bit_retirement", "retired_count")
        ),
        retired_pages_double_bit=_to_int(_text(retired, "double_bit_retirement", "retired_count")),
        retired_pages_pending=_to_bool(
            _first(retired, ("pending_retirement",), ("pending_blacklist",))
        ),
        pcie_gen_current=_to_pcie_gen(
            _first(generation, ("current_link_gen",), ("device_current_link_gen",))
        ),
        # max_link_gen is what GPU and host negotiate; max_device_link_gen is the GPU's own.
        pcie_gen_max=_to_pcie_gen(_first(generation, ("max_device_link_gen",), ("max_link_gen",))),
        pcie_width_current=_to_link_width(_text(widths, "current_link_width")),
        pcie_width_max=_to_link_width(_text(widths, "max_link_width")),
        power_draw_w=_to_watts(
            _first(power, ("power_draw",), ("average_power_draw",), ("instant_power_draw",))
        ),
        power_limit_w=_to_watts(
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
        temperature_c=_to_celsius(_text(element, "temperature", "gpu_temp")),
        sm_clock_mhz=_to_mhz(_text(element, "clocks", "sm_clock")),
        sm_clock_max_mhz=_to_mhz(_text(element, "max_clocks", "sm_clock")),
        utilization_gpu_pct=_to_percent(_text(element, "utilization", "gpu_util")),
        clock_event_reasons=_reasons(element),
        fabric_state=_to_word(_text(element, "fabric", "state")),
        # The status is "Success" or the NVML error of the registration: an error is its value.
        fabric_status=_to_text(_text(element, "fabric", "status")),
        # <gpu_recovery_action> (R570 and newer); before it, <gpu_reset_status>, which R570
        # still prints, marked deprecated.
        recovery_action=_recovery_action(
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
    root = _read_tree(_without_blocks(text))
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
