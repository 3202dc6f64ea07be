"""Value handling shared by the parsers: unknown markers, units, booleans and identifiers.

nvidia-smi prints the same reading differently in its three formats ("143771 MiB" in the XML
and with units in CSV, "143771" with `nounits`) and marks what it could not read with words
(`N/A`, `[Not Supported]`, `[Requested functionality has been deprecated]`, ...). Every parser
reads values through these helpers so that a marker always becomes None, never 0 or False.
"""

import math
import re
from functools import lru_cache

MAX_INPUT_BYTES = 64 * 1024 * 1024


class ParseError(ValueError):
    """The input is not something the parsers can read; the message says why, in one line."""


# Words nvidia-smi prints instead of a value. CSV output wraps every such marker in brackets
# ("[N/A]", "[Unknown Error]"), so any bracketed value is treated as a marker too: newer
# drivers add markers we cannot list in advance.
_UNKNOWN = frozenset(
    {
        "",
        "n/a",
        "na",
        "not supported",
        "not available",
        "not applicable",
        "requested functionality has been deprecated",
        "unknown error",
        "insufficient permissions",
        "gpu requires reset",
        "unknown",
    }
)

# NVML's error strings. Where NVML fails for one field, nvidia-smi writes the error text in the
# value's place: bare in -q -x ("GPU is lost", "Timeout"), bracketed or bare in -q and CSV
# ("[GPU is lost]", "Not Found"). `known` covers the bracketed form and the errors that are also
# markers above ("Unknown Error", "Insufficient Permissions", "GPU requires reset"); these are
# the rest. A name, UUID, serial or state that reads like one of them is unknown (see to_word),
# never the GPU's name or identity.
NVML_ERRORS = frozenset(
    {
        "gpu is lost",
        "not found",
        "timeout",
        "no data",
        "uninitialized",
        "driver not loaded",
        "function not found",
        "corrupted inforom",
        "invalid argument",
        "memory allocation failed",
        "insufficient resources",
        "insufficient external power",
        "insufficient size",
        "operating system call failed",
        "argument version mismatch",
        "in use",
        "no permission",
        "already initialized",
        "interrupted by system call",
        "irq issue",
        "library not found",
    }
)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_NUMBER = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?)\s*(.*)$", re.DOTALL)
_HEX = re.compile(r"(?:0[xX])?([0-9A-Fa-f]{1,8})$")
_BUS_ID = re.compile(
    r"(?:PCI:)?(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})(?:\.([0-7]))?$"
)
_NOT_WORD = re.compile(r"[^0-9a-z]+")
_ZERO_UUID = re.compile(r"(?:GPU-|MIG-)?[0-]+$")

_TRUE = frozenset({"enabled", "enable", "yes", "active", "on", "true"})
_FALSE = frozenset({"disabled", "disable", "no", "not active", "inactive", "off", "false"})

_MEMORY_UNITS = {"": 1.0, "mib": 1.0, "mb": 1.0, "gib": 1024.0, "gb": 1024.0, "kib": 1 / 1024}
_POWER_UNITS = {"": 1.0, "w": 1.0, "mw": 0.001, "kw": 1000.0}
_CLOCK_UNITS = {"": 1.0, "mhz": 1.0, "ghz": 1000.0, "khz": 0.001}
_TEMPERATURE_UNITS = {"": 1.0, "c": 1.0, "°c": 1.0, "degc": 1.0}
_PERCENT_UNITS = {"": 1.0, "%": 1.0}
_COUNT_UNITS = {"": 1.0}


def clean_text(text: str) -> str:
    """The text with a byte-order mark, CR line endings and ANSI colour escapes removed."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return text


def known(raw: str | None) -> str | None:
    """The value stripped, or None when it is missing or one of nvidia-smi's unknown markers."""
    if raw is None:
        return None
    value = raw.strip()
    if value[:1].isdigit():
        return value  # most values are numbers, and no marker starts with a digit
    if len(value) >= 2 and value[0] == "[" and value[-1] == "]":
        return None
    if value.lower() in _UNKNOWN:
        return None
    return value


def _quantity(raw: str | None, units: dict[str, float]) -> float | None:
    value = known(raw)
    if value is None:
        return None
    match = _NUMBER.match(value)
    if match is None:
        return None
    factor = units.get(match.group(2).strip().lower())
    if factor is None:
        # An unexpected unit is safer read as unknown than as a wrong number.
        return None
    try:
        number = float(match.group(1)) * factor
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _whole(number: float | None) -> int | None:
    if number is None or abs(number) > 2**63:
        return None
    return int(round(number))


def to_int(raw: str | None) -> int | None:
    """A plain count ("0", "3", "0x1F"); None for markers or anything that is not a count."""
    value = known(raw)
    if value is None:
        return None
    if value[:2] in ("0x", "0X"):
        try:
            return int(value, 16)
        except ValueError:
            return None
    number = _quantity(value, _COUNT_UNITS)
    if number is None or number != int(number):
        return None
    return _whole(number)


def to_float(raw: str | None) -> float | None:
    """A plain number without a unit."""
    return _quantity(raw, _COUNT_UNITS)


def to_mib(raw: str | None) -> int | None:
    """Memory in MiB: "143771 MiB", "143771" (nounits), "80 GiB"."""
    return _whole(_quantity(raw, _MEMORY_UNITS))


def to_watts(raw: str | None) -> float | None:
    """Power in W: "133.27 W", "133.27" (nounits), "133270 mW"."""
    return _quantity(raw, _POWER_UNITS)


def to_mhz(raw: str | None) -> int | None:
    """A clock in MHz: "1980 MHz", "1980" (nounits), "1.98 GHz"."""
    return _whole(_quantity(raw, _CLOCK_UNITS))


def to_celsius(raw: str | None) -> float | None:
    """A temperature in degrees C: "41 C", "41"."""
    return _quantity(raw, _TEMPERATURE_UNITS)


def to_percent(raw: str | None) -> float | None:
    """A percentage: "0 %", "100"."""
    return _quantity(raw, _PERCENT_UNITS)


def to_link_width(raw: str | None) -> int | None:
    """A PCIe link width: "16x" (-q), "16" (CSV), "x16"."""
    value = known(raw)
    if value is None:
        return None
    value = value.lower().removesuffix("x").removeprefix("x")
    return to_int(value)


def to_pcie_gen(raw: str | None) -> int | None:
    """A PCIe generation: "5", "Gen5"."""
    value = known(raw)
    if value is None:
        return None
    return to_int(value.lower().removeprefix("gen").strip())


def to_bool(raw: str | None) -> bool | None:
    """Enabled/Disabled, Yes/No, Active/Not Active, On/Off; None for anything else."""
    value = known(raw)
    if value is None:
        return None
    word = " ".join(value.lower().split())
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    return None


_VERSION = re.compile(r"\d+(?:\.\d+)*")


def to_version(raw: str | None) -> str | None:
    """A version number ("580.159.04", "13.0"), without the notes newer drivers append
    ("610.43.02 [Deprecated; ...]"); None for a marker or a value that is no version
    ('Deprecated, see "KMD version" instead')."""
    value = known(raw)
    if value is None:
        return None
    match = _VERSION.match(value)
    return match.group() if match else None


def to_text(raw: str | None) -> str | None:
    """A free-text value (name, serial, state), stripped, or None for a marker."""
    value = known(raw)
    if value is None:
        return None
    return " ".join(value.split())


def to_word(raw: str | None) -> str | None:
    """Free text such as name, UUID, serial, state; None for an N/A-style marker or an NVML
    error string ("GPU is lost", "[Not Found]")."""
    value = to_text(raw)
    if value is None or value.lower() in NVML_ERRORS:
        return None
    return value


def pci_device_id(raw: str | None) -> str | None:
    """The PCI device id as "0x2335" from "233510DE" (XML), "0x233510DE" (CSV, -q) or "0x2335".

    The driver prints device and vendor together: the upper 16 bits are the device, the lower
    16 bits the vendor (10DE for NVIDIA).
    """
    value = known(raw)
    if value is None:
        return None
    match = _HEX.match(value)
    if match is None:
        return None
    digits = match.group(1)
    number = int(digits, 16)
    if len(digits) > 4:
        number >>= 16
    return f"0x{number:04x}"


def bus_id(raw: str | None) -> str | None:
    """A PCI bus id as the driver prints it ("00000000:3B:00.0"), upper-case, or None."""
    value = known(raw)
    if value is None or _BUS_ID.match(value) is None:
        return None
    return value.upper()


def bus_key(raw: str | None) -> tuple[int, int, int] | None:
    """(domain, bus, device) of a bus id in any of the spellings that name the same GPU.

    "00000000:3B:00.0" (nvidia-smi), "0000:3b:00.0" (NVML legacy) and "PCI:0000:3b:00" (kernel
    Xid lines) all give (0, 0x3B, 0). The function number is left out: a GPU is function 0,
    and Xid lines do not print it.
    """
    value = known(raw)
    if value is None:
        return None
    match = _BUS_ID.match(value)
    if match is None:
        return None
    domain = int(match.group(1), 16) if match.group(1) else 0
    return (domain, int(match.group(2), 16), int(match.group(3), 16))


def usable_uuid(raw: str | None) -> str | None:
    """The UUID when it can identify a GPU; None for unknown, an NVML error string or masked
    ("GPU-00000000-...")."""
    value = known(raw)
    if value is None or _ZERO_UUID.match(value) or value.lower() in NVML_ERRORS:
        return None
    return value


@lru_cache(maxsize=4096)
def snake(label: str) -> str:
    """A label as a key: "SRAM Uncorrectable SEC-DED" -> "sram_uncorrectable_sec_ded"."""
    return _NOT_WORD.sub("_", label.lower()).strip("_")


# Clock event reasons: the names of the CSV field suffixes (see facts.GpuFacts), the spellings
# other outputs and older drivers use for them, and their NVML bit (for the `.active` and
# `.supported` bit masks of the CSV output).
CLOCK_EVENT_REASONS: dict[str, int] = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clock_setting": 0x100,
}
_REASON_ALIASES = {
    "idle": "gpu_idle",
    "application_clocks_setting": "applications_clocks_setting",
    "applications_clock_setting": "applications_clocks_setting",
    "hw_therm_slowdown": "hw_thermal_slowdown",
    "sw_therm_slowdown": "sw_thermal_slowdown",
    "hw_power_brake": "hw_power_brake_slowdown",
    "display_clocks_setting": "display_clock_setting",
}
_REASON_PREFIXES = (
    "clocks_event_reasons_",
    "clocks_throttle_reasons_",
    "clocks_event_reason_",
    "clocks_throttle_reason_",
)


@lru_cache(maxsize=1024)
def reason_name(label: str) -> str | None:
    """The clock event reason a label, XML tag or CSV suffix names, or None if it names none.

    "clocks_throttle_reason_hw_slowdown", "clocks_event_reason_display_clocks_setting",
    "HW Thermal Slowdown" and "Idle" all map to the names in CLOCK_EVENT_REASONS.
    """
    name = snake(label)
    for prefix in _REASON_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    name = _REASON_ALIASES.get(name, name)
    return name if name in CLOCK_EVENT_REASONS else None


def reasons_from_mask(active: int | None, supported: int | None) -> dict[str, bool]:
    """Clock event reasons from NVML bit masks; without `supported`, every known bit is read."""
    if active is None:
        return {}
    return {
        name: bool(active & bit)
        for name, bit in CLOCK_EVENT_REASONS.items()
        if supported is None or supported & bit
    }


def ecc_totals(counters: dict[str, str | None]) -> tuple[int | None, int | None]:
    """(corrected, uncorrected) from one ECC block (volatile or aggregate) of -q or -q -x.

    `counters` maps snake-case names, nested ones joined with "/", to raw values. Older drivers
    print per-location counters with a total ("single_bit/total", "double_bit/total"); newer
    ones print SRAM and DRAM counters ("sram_correctable", "sram_uncorrectable_parity",
    "sram_uncorrectable_secded", "dram_uncorrectable") whose sum is the total. Counters the
    driver marks N/A are left out of the sum; when all are N/A the total is unknown.
    """
    if "single_bit/total" in counters or "double_bit/total" in counters:
        return to_int(counters.get("single_bit/total")), to_int(counters.get("double_bit/total"))
    corrected: int | None = None
    uncorrected: int | None = None
    # Some drivers print an SRAM uncorrectable total and its parity/SEC-DED parts side by side:
    # count the total only, never both.
    split_sram = "sram_uncorrectable" not in counters
    for name, raw in counters.items():
        if "/" in name or "threshold" in name:
            continue
        count = to_int(raw)
        if count is None:
            continue
        if "uncorrectable" in name:
            if not split_sram and name.startswith("sram_uncorrectable_"):
                continue
            uncorrected = (uncorrected or 0) + count
        elif "correctable" in name:
            corrected = (corrected or 0) + count
    return corrected, uncorrected


# The GPU's recovery action (NVML's nvmlDeviceGpuRecoveryAction_t), under the names Xid 154
# messages give it. nvidia-smi -q, -q -x and the CSV field gpu_recovery_action
# print the short names of NVIDIA's documentation ("None", "Reset", "Reboot", "Drain P2P", "Drain
# and Reset"); the NVML enum's names are accepted as well. A word not listed (newer drivers add
# actions) is kept as written.
RECOVERY_NONE = "None"
RECOVERY_GPU_RESET = "GPU Reset Required"
RECOVERY_NODE_REBOOT = "Node Reboot Required"
RECOVERY_DRAIN_P2P = "Drain P2P"
RECOVERY_DRAIN_AND_RESET = "Drain and Reset"
_RECOVERY_SPELLINGS = {
    "none": RECOVERY_NONE,
    "reset": RECOVERY_GPU_RESET,
    "gpu reset": RECOVERY_GPU_RESET,
    "reset gpu": RECOVERY_GPU_RESET,
    "gpu reset required": RECOVERY_GPU_RESET,
    "reboot": RECOVERY_NODE_REBOOT,
    "node reboot": RECOVERY_NODE_REBOOT,
    "reboot node": RECOVERY_NODE_REBOOT,
    "node reboot required": RECOVERY_NODE_REBOOT,
    "drain p2p": RECOVERY_DRAIN_P2P,
    "drain and reset": RECOVERY_DRAIN_AND_RESET,
    "drain p2p and reset": RECOVERY_DRAIN_AND_RESET,
    "drain p2p and reset gpu": RECOVERY_DRAIN_AND_RESET,
}


def to_recovery_action(raw: str | None) -> str | None:
    """The GPU recovery action under its name here ("Reset" -> "GPU Reset Required"); a word
    not known here as written; None for N/A, a deprecation marker or an NVML error text."""
    value = to_word(raw)
    if value is None:
        return None
    return _RECOVERY_SPELLINGS.get(value.lower(), value)


def recovery_from_reset_status(
    reset_required: str | None, drain_and_reset: str | None
) -> str | None:
    """The recovery action from the "GPU Reset Status" that drivers print before the recovery
    action ("Reset Required" and "Drain and Reset Recommended", Yes or No).

    A reset required is "GPU Reset Required", a drain and reset recommended "Drain and Reset";
    no reset required (the drain unknown or No) is "None"; None when the reset is not reported.
    """
    reset = to_bool(reset_required)
    drain = to_bool(drain_and_reset)
    if reset:
        return RECOVERY_GPU_RESET
    if drain:
        return RECOVERY_DRAIN_AND_RESET
    if reset is False:
        return RECOVERY_NONE
    return None


def recovery_action(
    action: str | None, reset_required: str | None, drain: str | None
) -> str | None:
    """The recovery action a GPU reports: its own field where known, else the reset status."""
    return to_recovery_action(action) or recovery_from_reset_status(reset_required, drain)
