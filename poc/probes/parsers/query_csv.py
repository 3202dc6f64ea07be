"""`nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]`: one row per GPU.

Any subset of fields in any order. The header names each column ("memory.total [MiB]"); with
`nounits` it carries no units and neither do the values. nvidia-smi prints the canonical name
in the header even when an alias was asked for (`clocks.sm` comes back as
`clocks.current.sm`), but older drivers and `noheader` output with a field list use the other
spellings, so every field is read under all its names. `noheader` output cannot be told from
data without the field list: pass it as `fields`.

The registry's `query-csv` entry (formats.py) says how this output is recognised and
which commands make it.
"""

import re
from collections.abc import Sequence

from poc.probes.facts import GpuFacts, NodeFacts, new_gpu, new_node

from . import values as v
from .smi_list import smi_notice
from .values import ParseError

SOURCE = "nvidia-smi --query-gpu"

# Canonical field -> the names nvidia-smi accepts for it (lower-case). Fields not listed here
# are read and ignored: newer drivers keep adding them.
_ALIASES: dict[str, tuple[str, ...]] = {
    "index": ("index",),
    "name": ("name", "gpu_name"),
    "serial": ("serial", "gpu_serial"),
    "uuid": ("uuid", "gpu_uuid"),
    "pci.bus_id": ("pci.bus_id", "gpu_bus_id"),
    "pci.device_id": ("pci.device_id",),
    "driver_version": ("driver_version",),
    "kmd_version": ("kmd_version",),
    "hostname": ("hostname",),
    "memory.total": ("memory.total",),
    "memory.used": ("memory.used",),
    "compute_cap": ("compute_cap",),
    "persistence_mode": ("persistence_mode",),
    "mig.mode.current": ("mig.mode.current",),
    "mig.mode.pending": ("mig.mode.pending",),
    "ecc.mode.current": ("ecc.mode.current",),
    "ecc.mode.pending": ("ecc.mode.pending",),
    "ecc.errors.corrected.volatile.total": ("ecc.errors.corrected.volatile.total",),
    "ecc.errors.uncorrected.volatile.total": ("ecc.errors.uncorrected.volatile.total",),
    "ecc.errors.corrected.aggregate.total": ("ecc.errors.corrected.aggregate.total",),
    "ecc.errors.uncorrected.aggregate.total": ("ecc.errors.uncorrected.aggregate.total",),
    "remapped_rows.correctable": ("remapped_rows.correctable", "remapped_rows.sbe"),
    "remapped_rows.uncorrectable": ("remapped_rows.uncorrectable", "remapped_rows.dbe"),
    "remapped_rows.pending": ("remapped_rows.pending",),
    "remapped_rows.failure": ("remapped_rows.failure",),
    "retired_pages.single_bit_ecc.count": (
        "retired_pages.single_bit_ecc.count",
        "retired_pages.sbe",
    ),
    "retired_pages.double_bit.count": ("retired_pages.double_bit.count", "retired_pages.dbe"),
    "retired_pages.pending": ("retired_pages.pending",),
    "pcie.link.gen.current": ("pcie.link.gen.current",),
    "pcie.link.gen.gpucurrent": ("pcie.link.gen.gpucurrent",),
    "pcie.link.gen.max": ("pcie.link.gen.max",),
    "pcie.link.gen.gpumax": ("pcie.link.gen.gpumax",),
    "pcie.link.width.current": ("pcie.link.width.current",),
    "pcie.link.width.max": ("pcie.link.width.max",),
    "power.draw": ("power.draw",),
    "power.draw.average": ("power.draw.average", "gpu.power.draw.average"),
    "power.draw.instant": ("power.draw.instant", "gpu.power.draw.instant"),
    "enforced.power.limit": ("enforced.power.limit", "gpu.power.current_limit"),
    "power.limit": ("power.limit", "gpu.power.requested_limit"),
    "temperature.gpu": ("temperature.gpu",),
    "clocks.current.sm": ("clocks.current.sm", "clocks.sm"),
    "clocks.max.sm": ("clocks.max.sm", "clocks.max.sm_clock"),
    "utilization.gpu": ("utilization.gpu",),
    "fabric.state": ("fabric.state",),
    "fabric.status": ("fabric.status",),
    "gpu_recovery_action": ("gpu_recovery_action",),
    "reset_status.reset_required": ("reset_status.reset_required",),
    "reset_status.drain_and_reset_recommended": ("reset_status.drain_and_reset_recommended",),
    "clocks_event_reasons.active": (
        "clocks_event_reasons.active",
        "clocks_throttle_reasons.active",
    ),
    "clocks_event_reasons.supported": (
        "clocks_event_reasons.supported",
        "clocks_throttle_reasons.supported",
    ),
}
_CANONICAL = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}
_REASON_PREFIXES = ("clocks_event_reasons.", "clocks_throttle_reasons.")

_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$")
_UNIT = re.compile(r"\[[^\[\]]*\]$")


def _without_unit(column: str) -> str:
    """The column name without its unit: "memory.total [MiB]" -> "memory.total"."""
    return _UNIT.sub("", column.strip()).rstrip()


def canonical(field: str) -> str | None:
    """The canonical name of a field as the header or a field list spells it, or None."""
    name = _without_unit(field).lower()
    if name in _CANONICAL:
        return _CANONICAL[name]
    for prefix in _REASON_PREFIXES:
        if name.startswith(prefix):
            reason = v.reason_name(name[len(prefix) :])
            return None if reason is None else f"reason.{reason}"
    return None


def header_fields(line: str) -> list[str] | None:
    """The field names of a --query-gpu header line, or None if the line is not one.

    A header is a comma-separated list of field names (each optionally followed by a unit in
    brackets) of which at least one is a field this parser knows.
    """
    names = [_without_unit(column) for column in line.split(",")]
    if not all(_FIELD_NAME.match(name) for name in names):
        return None
    if not any(canonical(name) for name in names):
        return None
    return names


def _gpu(row: dict[str, str]) -> GpuFacts:
    def get(name: str) -> str | None:
        return row.get(name)

    reasons = v.reasons_from_mask(
        v.to_int(get("clocks_event_reasons.active")),
        v.to_int(get("clocks_event_reasons.supported")),
    )
    for name, raw in row.items():
        if name.startswith("reason."):
            state = v.to_bool(raw)
            if state is not None:
                reasons[name.removeprefix("reason.")] = state
    gen_current = get("pcie.link.gen.current")
    if v.known(gen_current) is None:
        gen_current = get("pcie.link.gen.gpucurrent")
    # pcie.link.gen.max is what GPU and host negotiate; gpumax is the GPU's own maximum.
    gen_max = get("pcie.link.gen.gpumax")
    if v.known(gen_max) is None:
        gen_max = get("pcie.link.gen.max")
    draw = next(
        (
            get(name)
            for name in ("power.draw", "power.draw.average", "power.draw.instant")
            if v.known(get(name)) is not None
        ),
        None,
    )
    limit = get("enforced.power.limit")
    if v.known(limit) is None:
        limit = get("power.limit")
    return new_gpu(
        index=v.to_int(get("index")),
        name=v.to_word(get("name")),
        pci_device_id=v.pci_device_id(get("pci.device_id")),
        pci_bus_id=v.bus_id(get("pci.bus_id")),
        uuid=v.to_word(get("uuid")),
        serial=v.to_word(get("serial")),
        memory_total_mib=v.to_mib(get("memory.total")),
        memory_used_mib=v.to_mib(get("memory.used")),
        compute_capability=v.to_word(get("compute_cap")),
        persistence_mode=v.to_bool(get("persistence_mode")),
        mig_mode_current=v.to_bool(get("mig.mode.current")),
        mig_mode_pending=v.to_bool(get("mig.mode.pending")),
        ecc_mode_current=v.to_bool(get("ecc.mode.current")),
        ecc_mode_pending=v.to_bool(get("ecc.mode.pending")),
        ecc_volatile_corrected=v.to_int(get("ecc.errors.corrected.volatile.total")),
        ecc_volatile_uncorrected=v.to_int(get("ecc.errors.uncorrected.volatile.total")),
        ecc_aggregate_corrected=v.to_int(get("ecc.errors.corrected.aggregate.total")),
        ecc_aggregate_uncorrected=v.to_int(get("ecc.errors.uncorrected.aggregate.total")),
        remapped_rows_correctable=v.to_int(get("remapped_rows.correctable")),
        remapped_rows_uncorrectable=v.to_int(get("remapped_rows.uncorrectable")),
        remapped_rows_pending=v.to_bool(get("remapped_rows.pending")),
        remapped_rows_failure=v.to_bool(get("remapped_rows.failure")),
        retired_pages_single_bit=v.to_int(get("retired_pages.single_bit_ecc.count")),
        retired_pages_double_bit=v.to_int(get("retired_pages.double_bit.count")),
        retired_pages_pending=v.to_bool(get("retired_pages.pending")),
        pcie_gen_current=v.to_pcie_gen(gen_current),
        pcie_gen_max=v.to_pcie_gen(gen_max),
        pcie_width_current=v.to_link_width(get("pcie.link.width.current")),
        pcie_width_max=v.to_link_width(get("pcie.link.width.max")),
        power_draw_w=v.to_watts(draw),
        power_limit_w=v.to_watts(limit),
        temperature_c=v.to_celsius(get("temperature.gpu")),
        sm_clock_mhz=v.to_mhz(get("clocks.current.sm")),
        sm_clock_max_mhz=v.to_mhz(get("clocks.max.sm")),
        utilization_gpu_pct=v.to_percent(get("utilization.gpu")),
        clock_event_reasons=reasons,
        fabric_state=v.to_word(get("fabric.state")),
        # The status is "Success" or the NVML error of the registration: an error is its value.
        fabric_status=v.to_text(get("fabric.status")),
        recovery_action=v.recovery_action(
            get("gpu_recovery_action"),
            get("reset_status.reset_required"),
            get("reset_status.drain_and_reset_recommended"),
        ),
    )


def parse_query_csv(text: str, *, fields: Sequence[str] | None = None) -> NodeFacts:
    """Facts from --query-gpu CSV output.

    `fields` is the field list the command asked for; it is needed for `noheader` output and
    otherwise optional (a header line that repeats it is skipped). Rows whose number of values
    does not match the columns are refused with the line number.
    """
    lines: list[tuple[int, str]] = []
    notices: list[str] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        # nvidia-smi's notices about a troubled GPU (a corrupted infoROM, a GPU it cannot
        # reach) stand among the rows, before the header or in place of a row: they are
        # no CSV, and the other GPUs' rows are still good.
        notice = smi_notice(line)
        if notice is not None:
            notices.append(f"nvidia-smi: {notice}")
        else:
            lines.append((number, line))
    if not lines:
        if notices:
            raise ParseError(f"--query-gpu output holds no rows, only: {notices[0]}"[:500])
        raise ParseError("empty --query-gpu output")
    if fields is not None:
        names = [field.strip() for field in fields]
        if not any(canonical(name) for name in names):
            raise ParseError("the field list names no field this parser reads")
        first = header_fields(lines[0][1])
        # A header repeating the list (nvidia-smi prints canonical names where aliases were
        # asked for, so compare those) is skipped.
        if first is not None and [canonical(n) or n.lower() for n in first] == [
            canonical(n) or n.lower() for n in names
        ]:
            lines = lines[1:]
    else:
        header = header_fields(lines[0][1])
        if header is None:
            raise ParseError(
                f"line {lines[0][0]}: not a --query-gpu header"
                " (for noheader output, give the field list)"
            )
        names = header
        lines = lines[1:]
    columns = [canonical(name) for name in names]
    # A loop around the query (`while ...; do nvidia-smi --query-gpu ...; done`) or outputs put
    # one after another repeat the header before each sample: it is no GPU's row.
    header_key = [canonical(name) or name.lower() for name in names]
    lines = [
        (number, line)
        for number, line in lines
        if (repeated := header_fields(line)) is None
        or [canonical(name) or name.lower() for name in repeated] != header_key
    ]
    if not lines:
        reason = f", only: {notices[0]}" if notices else ""
        raise ParseError(f"--query-gpu output has a header but no GPU rows{reason}"[:500])
    gpus: list[GpuFacts] = []
    seen: dict[tuple[str, str], int] = {}  # a GPU's identity -> its position in gpus
    samples = 0
    driver: str | None = None
    host: str | None = None
    for number, line in lines:
        cells = line.split(",")
        if len(cells) != len(columns):
            raise ParseError(f"line {number}: {len(cells)} values for {len(columns)} columns")
        row: dict[str, str] = {}
        for column, cell in zip(columns, cells, strict=True):
            # Two spellings of one field may both be asked for: keep the known value.
            if column and v.known(row.get(column)) is None:
                row[column] = cell.strip()
        gpu = _gpu(row)
        # With `-l N` nvidia-smi repeats the rows every N seconds: a GPU seen before is a
        # newer sample of the same GPU, and the last one is kept.
        identity = _identity(gpu)
        if identity is not None and identity in seen:
            samples += 1
            gpu["index"] = gpus[seen[identity]]["index"] if "index" not in row else gpu["index"]
            gpus[seen[identity]] = gpu
            continue
        if "index" not in row:
            # nvidia-smi prints one row per GPU in index order.
            gpu["index"] = len(gpus)
        if identity is not None:
            seen[identity] = len(gpus)
        gpus.append(gpu)
        # R610 renames driver_version to kmd_version (the old field then says "deprecated").
        driver = driver or v.to_version(row.get("kmd_version"))
        driver = driver or v.to_version(row.get("driver_version"))
        host = host or v.to_text(row.get("hostname"))
    warnings = notices
    if "index" not in columns and any("device handle" in notice for notice in notices):
        # A GPU nvidia-smi could not reach has no row: the rows' positions are no indexes.
        for gpu in gpus:
            gpu["index"] = None
        warnings.append(
            "a GPU is missing from the rows and the query has no index column:"
            " the GPUs' indexes are unknown"
        )
    if samples:
        warnings.append(
            f"{samples} repeated rows (a query run with -l): the last sample of each GPU is kept"
        )
    return new_node(
        host=host, driver_version=driver, gpus=gpus, sources=[SOURCE], warnings=warnings
    )


def _identity(gpu: GpuFacts) -> tuple[str, str] | None:
    """What tells one GPU from another in a row: its UUID, bus id or index, in that order."""
    uuid = v.usable_uuid(gpu["uuid"])
    if uuid is not None:
        return ("uuid", uuid.lower())
    bus = v.bus_key(gpu["pci_bus_id"])
    if bus is not None:
        return ("bus", repr(bus))
    if gpu["index"] is not None:
        return ("index", str(gpu["index"]))
    return None
