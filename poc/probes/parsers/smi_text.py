"""`nvidia-smi -q`: indentation-structured "Label : value" lines, one block per GPU.

    ==============NVSMI LOG==============
    Driver Version                            : 580.159.04
    GPU 00000000:00:06.0
        Product Name                          : NVIDIA H200
        MIG Mode
            Current                           : Disabled

The lines are read into a tree by indentation (any width, tabs allowed), so a label is found
by its place ("PCI" > "GPU Link Info" > "PCIe Generation" > "Max") however wide the label
column is. A line may hold a value and still have children ("HW Slowdown : Not Active" with
"HW Thermal Slowdown" under it). Labels repeat ("MIG Device", "Process ID"), so children are
kept in order as a list. Like -q -x, the output carries no GPU index: a GPU's index is its
position. nvidia-smi's notices about a troubled GPU ("WARNING: infoROM is corrupted at gpu
0000:3B:00.0", "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"),
printed before the report or in place of a GPU's block, are kept among the warnings.

The registry's `smi-text` entry (formats.py) says how this output is recognised and
which commands make it.
"""

import re

from poc.probes.facts import GpuFacts, MigDevice, NodeFacts, new_gpu, new_node

from . import values as v
from .smi_list import smi_notice
from .smi_shape import (
    Node,
    build_tree,
    cut_inside,
    fragment_groups,
    label_of,
    split_line,
    stop_point,
)
from .values import ParseError

SOURCE = "nvidia-smi -q"

_GPU_HEADER = re.compile(r"GPU\s+([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")
_BANNER = "NVSMI LOG"


def _flatten_reasons(block: Node | None) -> dict[str, bool]:
    reasons: dict[str, bool] = {}
    pending = [] if block is None else list(block.children)
    while pending:
        node = pending.pop()
        pending.extend(node.children)
        name = v.reason_name(node.label)
        state = v.to_bool(node.value)
        if name is not None and state is not None:
            reasons[name] = state
    return reasons


def _counters(block: Node | None) -> dict[str, str | None]:
    counters: dict[str, str | None] = {}
    if block is None:
        return counters
    for child in block.children:
        if child.children:
            for grandchild in child.children:
                counters[f"{v.snake(child.label)}/{v.snake(grandchild.label)}"] = grandchild.value
        else:
            counters[v.snake(child.label)] = child.value
    return counters


def _mig_devices(gpu: Node) -> list[MigDevice]:
    blocks = [child for child in gpu.children if child.label == "mig device"]
    container = gpu.get("mig devices")
    if container is not None:
        blocks += [child for child in container.children if child.label == "mig device"]
    devices: list[tuple[int, MigDevice]] = []
    for position, block in enumerate(blocks):
        index = v.to_int(block.value_of("index"))
        memory = block.first(("fb memory usage", "total"), ("shared fb memory usage", "total"))
        devices.append(
            (
                position if index is None else index,
                {
                    "gpu_instance_id": v.to_int(block.value_of("gpu instance id")),
                    "compute_instance_id": v.to_int(block.value_of("compute instance id")),
                    "profile": None,
                    "profile_id": None,
                    "memory_total_mib": v.to_mib(memory),
                    "uuid": v.to_word(block.first(("uuid",), ("mig uuid",))),
                },
            )
        )
    devices.sort(key=lambda pair: pair[0])
    return [device for _, device in devices]


def _section(block: Node, *labels: str) -> Node:
    """The first of several alternative sections (renamed labels), or an empty one."""
    for label in labels:
        found = block.get(label)
        if found is not None:
            return found
    return Node(label="")


def _gpu(block: Node, bus: str, position: int) -> GpuFacts:
    link = _section(_section(block, "pci"), "gpu link info")
    generation = _section(link, "pcie generation")
    widths = _section(link, "link width")
    power = _section(block, "gpu power readings", "power readings")
    ecc = _section(block, "ecc errors")
    volatile = v.ecc_totals(_counters(ecc.get("volatile")))
    aggregate = v.ecc_totals(_counters(ecc.get("aggregate")))
    retired = _section(block, "retired pages")
    remapped = _section(block, "remapped rows")
    reasons = _section(block, "clocks event reasons", "clocks throttle reasons")
    return new_gpu(
        index=position,
        name=v.to_word(block.value_of("product name")),
        pci_device_id=v.pci_device_id(block.value_of("pci", "device id")),
        pci_bus_id=v.bus_id(block.value_of("pci", "bus id")) or v.bus_id(bus),
        uuid=v.to_word(block.value_of("gpu uuid")),
        serial=v.to_word(block.value_of("serial number")),
        memory_total_mib=v.to_mib(block.value_of("fb memory usage", "total")),
        memory_used_mib=v.to_mib(block.value_of("fb memory usage", "used")),
        persistence_mode=v.to_bool(block.value_of("persistence mode")),
        mig_mode_current=v.to_bool(block.value_of("mig mode", "current")),
        mig_mode_pending=v.to_bool(block.value_of("mig mode", "pending")),
        mig_devices=_mig_devices(block),
        ecc_mode_current=v.to_bool(block.value_of("ecc mode", "current")),
        ecc_mode_pending=v.to_bool(block.value_of("ecc mode", "pending")),
        ecc_volatile_corrected=volatile[0],
        ecc_volatile_uncorrected=volatile[1],
        ecc_aggregate_corrected=aggregate[0],
        ecc_aggregate_uncorrected=aggregate[1],
        remapped_rows_correctable=v.to_int(remapped.value_of("correctable error")),
        remapped_rows_uncorrectable=v.to_int(remapped.value_of("uncorrectable error")),
        remapped_rows_pending=v.to_bool(remapped.value_of("pending")),
        remapped_rows_failure=v.to_bool(remapped.value_of("remapping failure occurred")),
        retired_pages_single_bit=v.to_int(retired.value_of("single bit ecc")),
        retired_pages_double_bit=v.to_int(retired.value_of("double bit ecc")),
        retired_pages_pending=v.to_bool(
            retired.first(("pending page retirement",), ("pending page blacklist",), ("pending",))
        ),
        pcie_gen_current=v.to_pcie_gen(generation.first(("current",), ("device current",))),
        # "Max" is what GPU and host negotiate; "Device Max" is the GPU's own maximum.
        pcie_gen_max=v.to_pcie_gen(generation.first(("device max",), ("max",))),
        pcie_width_current=v.to_link_width(widths.value_of("current")),
        pcie_width_max=v.to_link_width(widths.value_of("max")),
        power_draw_w=v.to_watts(
            power.first(("power draw",), ("average power draw",), ("instantaneous power draw",))
        ),
        power_limit_w=v.to_watts(
            power.first(
                ("current power limit",),
                ("enforced power limit",),
                ("power limit",),
                # R610 nests the limits: "GPU Ceiling Power Limit" > "Current Power Limit".
                ("gpu ceiling power limit", "current power limit"),
                ("requested power limit",),
                ("gpu ceiling power limit", "requested power limit"),
            )
        ),
        # Drivers before about R340 print "Temperature" > "Gpu".
        temperature_c=v.to_celsius(
            block.first(("temperature", "gpu current temp"), ("temperature", "gpu"))
        ),
        sm_clock_mhz=v.to_mhz(block.value_of("clocks", "sm")),
        sm_clock_max_mhz=v.to_mhz(block.value_of("max clocks", "sm")),
        utilization_gpu_pct=v.to_percent(block.value_of("utilization", "gpu")),
        clock_event_reasons=_flatten_reasons(reasons),
        fabric_state=v.to_word(block.value_of("fabric", "state")),
        # The status is "Success" or the NVML error of the registration: an error is its value.
        fabric_status=v.to_text(block.value_of("fabric", "status")),
        # "GPU Recovery Action" (R570 and newer); before it, "GPU Reset Status", which R570
        # still prints, marked deprecated.
        recovery_action=v.recovery_action(
            block.value_of("gpu recovery action"),
            block.value_of("gpu reset status", "reset required"),
            block.value_of("gpu reset status", "drain and reset recommended"),
        ),
    )


def _line_start(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1


def _shape(text: str) -> list[tuple[int, str, bool]]:
    """(indent, label, whether a colon follows) of each line of the report's last GPU block
    (of the whole report when it has none). Lines listed under "Processes", whose number
    changes from one report to the next, and notices about a troubled GPU are left out."""
    lines = text.split("\n")
    start = 0
    for number in range(len(lines) - 1, -1, -1):
        if _GPU_HEADER.match(lines[number].strip().upper()):
            start = number
            break
    shape: list[tuple[int, str, bool]] = []
    processes: int | None = None
    for raw in lines[start:]:
        line = raw.expandtabs(4)
        stripped = line.strip()
        if not stripped or smi_notice(stripped) is not None:
            continue
        indent = len(line) - len(line.lstrip())
        if processes is not None:
            if indent > processes:
                continue
            processes = None
        pair = split_line(stripped)
        label = label_of(stripped if pair is None else pair[0])
        if label == "processes":
            processes = indent  # "Processes : None", or "Processes" with a block per process
            shape.append((indent, label, True))
        else:
            shape.append((indent, label, pair is not None))
    return shape


def _last_report(text: str) -> tuple[str, int]:
    """The last complete report of `text` and how many reports it holds.

    `nvidia-smi -q -l N` writes one whole report, banner first, every N seconds. A report
    followed by the next one is complete; the last one is complete when it ends as the one
    before it does (its last GPU block has the same lines), and is otherwise taken to have been
    cut off mid-write, the one before it being read instead.
    """
    count = text.count(_BANNER)
    if count < 2:
        return text, count
    starts: list[int] = []
    position = text.find(_BANNER)
    while position >= 0:
        starts.append(_line_start(text, position))
        position = text.find(_BANNER, position + len(_BANNER))
    last = text[starts[-1] :]
    previous = text[starts[-2] : starts[-1]]
    if _shape(last) == _shape(previous):
        return last, count
    return previous, count


_MAX_NOTICES = 64


def _notices(text: str) -> list[str]:
    """nvidia-smi's notices in `text`, each once, in order."""
    found: list[str] = []
    for line in text.split("\n"):
        notice = smi_notice(line)
        if notice is not None and f"nvidia-smi: {notice}" not in found:
            found.append(f"nvidia-smi: {notice}")
            if len(found) >= _MAX_NOTICES:
                break
    return found


def parse_smi_text(text: str) -> NodeFacts:
    """Facts from `nvidia-smi -q` output; ParseError when the text is not that output."""
    # A notice of a looped query (-l) belongs to the report it precedes, which may not be the
    # one read: those of every report are kept.
    notices = _notices(text)
    text, reports = _last_report(text)
    tree = build_tree(text)
    gpus: list[GpuFacts] = []
    blocks: list[tuple[str, Node]] = []
    versions: dict[str, str | None] = {}
    attached: int | None = None
    recognised = False
    # GPU blocks sit at the top level, but a pasted or indented copy may wrap them one level
    # down (under the banner line, say): look at the top level and one below.
    candidates = list(tree.children)
    for node in tree.children:
        candidates.extend(node.children)
    for node in candidates:
        header = _GPU_HEADER.match(node.label.upper())
        if header is not None and node.value is None and node.children:
            gpus.append(_gpu(node, header.group(1), len(gpus)))
            blocks.append((header.group(1), node))
        elif node.label in _VERSION_LABELS and node.label not in versions:
            versions[node.label] = v.to_version(node.value)
            recognised = True
        elif node.label == "attached gpus" and attached is None:
            attached = v.to_int(node.value)
        elif _BANNER.lower() in node.label:
            recognised = True
    if not gpus and not recognised:
        return _fragment(tree, notices)
    driver, cuda = versions_of(versions)
    cut = _cut_off(blocks, attached)
    warnings = notices + (cut if cut is not None else unindexed(gpus, attached))
    if reports > 1:
        warnings.append(f"{reports} reports (a query run with -l): the last complete one is read")
    # A report cut off before some of its GPUs does not list the node's GPUs.
    listed = cut is None or attached is None or len(gpus) >= attached
    return new_node(
        driver_version=driver,
        cuda_version=cuda,
        gpus=gpus,
        sources=[SOURCE],
        warnings=warnings,
        gpus_listed=listed,
    )


def _cut_off(blocks: list[tuple[str, Node]], attached: int | None) -> list[str] | None:
    """The warnings of a report cut off mid-way (see smi_shape), or None when it is whole.

    The GPUs of a cut report keep their indexes: the report lists the GPUs in index order,
    and those read are the first ones.
    """
    if not blocks:
        if attached:
            return [
                "the nvidia-smi -q report is cut off before its first GPU block "
                f"({attached} attached): no GPU was read"
            ]
        return None
    if not cut_inside([block for _bus, block in blocks]):
        return None
    bus, block = blocks[-1]
    warning = (
        f"the nvidia-smi -q report is cut off: it stops in GPU {bus} at {stop_point(block)} "
        "(the last section read); what would follow is unknown"
    )
    if attached is not None and len(blocks) < attached:
        warning += f"; {len(blocks)} of {attached} attached GPUs were read"
    return [warning]


def _fragment(tree: Node, notices: list[str]) -> NodeFacts:
    """The facts of a -q fragment without its GPU header (see smi_shape), one GPU per group
    of sections, each unknown: no index, bus id or UUID unless the fragment holds them."""
    groups = fragment_groups(tree.children)
    if groups is None:
        raise ParseError("not nvidia-smi -q output: no GPU block and no driver version")
    gpus = [_gpu(Node(label="", children=group), "", 0) for group in groups]
    for gpu in gpus:
        gpu["index"] = None
    warning = (
        "a fragment of nvidia-smi -q without its GPU header: read as the sections of an unknown GPU"
        if len(gpus) == 1
        else "a fragment of nvidia-smi -q without its GPU headers: read as the sections of "
        f"{len(gpus)} unknown GPUs"
    )
    return new_node(
        gpus=gpus,
        sources=[SOURCE],
        warnings=[*notices, warning],
        gpus_listed=False,
    )


# R610 renames "Driver Version" to "KMD Version" and "CUDA Version" to "CUDA UMD Version"
# (the old labels stay for a while, their values marked deprecated): the new ones win.
_VERSION_LABELS = ("kmd version", "driver version", "cuda umd version", "cuda version")


def versions_of(found: dict[str, str | None]) -> tuple[str | None, str | None]:
    """(driver, CUDA) from the version lines read, keyed by their labels in lower case."""
    driver = found.get("kmd version") or found.get("driver version")
    cuda = found.get("cuda umd version") or found.get("cuda version")
    return driver, cuda


def unindexed(gpus: list[GpuFacts], attached: int | None) -> list[str]:
    """Leave the indexes unknown when the output holds fewer GPUs than are attached.

    -q and -q -x carry no index: a GPU's index is its position, which holds only when every
    attached GPU is listed. Output narrowed with `-i` lists some of them.
    """
    if attached is None or len(gpus) >= attached:
        return []
    for gpu in gpus:
        gpu["index"] = None
    return [
        f"the output lists {len(gpus)} of {attached} attached GPUs (narrowed with -i?): "
        "their indexes are unknown"
    ]
