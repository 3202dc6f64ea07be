"""`nvidia-smi nvlink -s` (status) and `nvidia-smi nvlink -e` (error counters).

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
         Link 0: 26.562 GB/s
         Link 1: <inactive>

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
         Link 0: Replay Errors: 0
         Link 0: Recovery Errors: 0
         Link 0: CRC Errors: 0

A link is active when the status names a speed; `<inactive>` and anything else (a status word
this parser does not know) count as not active, since only a speed is evidence of a working
link. A GPU without NVLink prints "Device does not have or support Nvlink" and gets no links.
Error counters are keyed by their label in snake case ("replay_errors", "crc_errors"); newer
drivers print more of them, some as a block under a bare "Link N:" line, and all counts are kept.
NVLink 5 (Blackwell, R570 and later) prints, besides error counters such as "Rx Errors",
"Effective Errors", "Symbol Errors" and "Link recovery failed events", lines that count no
error, read under names that say what they are:

* "FEC Errors - N": a histogram bin, the codewords the forward error correction repaired with N
  corrected symbols (bin 0, codewords that needed none, reads in the billions on a healthy
  link): "fec_bin_N".
* "Raw Errors Lane N": errors on the wire before that correction repairs them, non-zero on
  healthy links: "pre_fec_lane_N".
* "Effective BER", "Symbol BER", "Raw BER Lane N", "Raw BER Total": rates, not counts (written
  "15e-255", or NVML's encoded mantissa and exponent): left out.

The registry's `nvlink-status` and `nvlink-errors` entries (formats.py) say how these outputs
are recognised and which commands make them.
"""

import re

from poc.probes.facts import GpuFacts, NodeFacts, NvLink, new_node

from . import values as v
from .smi_list import gpu_line, smi_notice
from .values import ParseError

STATUS_SOURCE = "nvidia-smi nvlink -s"
ERRORS_SOURCE = "nvidia-smi nvlink -e"

LINK_LINE = re.compile(r"\s*Link\s+(\d{1,3})\s*:\s*(.*)$")
_SPEED = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*GB/s", re.IGNORECASE)
# Link lines are short; longer text is not nvlink output and is not searched.
_MAX_STATUS = 200
# "NVML: Unable to retrieve NVLink information as all links are inActive"
_ALL_INACTIVE = re.compile(r"all links are inactive", re.IGNORECASE)
# "Nvlink queries are not supported for Devices in MIG mode"
_MIG_MODE = re.compile(r"not supported for devices in mig mode", re.IGNORECASE)
_COUNTER = re.compile(r"\s*([A-Za-z][A-Za-z0-9 ()_/.-]{0,80}?)\s*:\s*(\S+)\s*$")
_FEC_BIN = re.compile(r"fec\s+errors?\s*-\s*(\d{1,3})$", re.IGNORECASE)
_RAW_LANE = re.compile(r"raw\s+errors?\s+lane\s+(\d{1,3})$", re.IGNORECASE)
_RATE = re.compile(r"\bber\b", re.IGNORECASE)


def _blocks(text: str, notices: list[str]) -> list[tuple[GpuFacts, list[str]]]:
    """Each GPU line with the lines under it; nvidia-smi's notices go to `notices`."""
    blocks: list[tuple[GpuFacts, list[str]]] = []
    for line in text.split("\n"):
        notice = smi_notice(line)
        if notice is not None:
            notices.append(f"nvidia-smi: {notice}")
            continue
        gpu = gpu_line(line, uuid_required=False)
        if gpu is not None:
            blocks.append((gpu, []))
        elif blocks and line.strip():
            blocks[-1][1].append(line)
    return blocks


def parse_nvlink_status(text: str) -> NodeFacts:
    """Facts (per GPU: links, active or not, speed) from `nvidia-smi nvlink -s`."""
    warnings: list[str] = []
    blocks = _blocks(text, warnings)
    if not blocks:
        raise ParseError('not nvidia-smi nvlink -s output: no "GPU N: ..." line')
    gpus: list[GpuFacts] = []
    for gpu, lines in blocks:
        links: dict[int, NvLink] = {}
        for line in lines:
            match = LINK_LINE.match(line)
            if match is None:
                if _ALL_INACTIVE.search(line[:_MAX_STATUS]):
                    warnings.append(
                        f"GPU {gpu['index']}: the driver says all its NVLink links are inactive"
                        " (expected on a GPU without NVLink; on an NVLink system every link is"
                        " down)"
                    )
                elif _MIG_MODE.search(line[:_MAX_STATUS]):
                    warnings.append(
                        f"GPU {gpu['index']}: the driver does not report NVLink links in MIG"
                        " mode: its links are unknown, not absent"
                    )
                continue
            rest = match.group(2)[:_MAX_STATUS]
            speed_match = _SPEED.search(rest)
            speed = v.to_float(speed_match.group(1)) if speed_match else None
            number = int(match.group(1))
            links[number] = {
                "link": number,
                "active": speed is not None and speed > 0,
                "speed_gbps": speed,
                "errors": {},
            }
        gpu["nvlink_links"] = [links[number] for number in sorted(links)]
        gpus.append(gpu)
    return new_node(gpus=gpus, sources=[STATUS_SOURCE], warnings=warnings)


def _count(raw: str) -> int | None:
    return v.to_int(raw.rstrip(","))


def _counter_name(label: str) -> str | None:
    """The key a counter's label is kept under; None for a rate (a bit error ratio)."""
    label = " ".join(label.split())
    fec = _FEC_BIN.match(label)
    if fec is not None:
        return f"fec_bin_{int(fec.group(1))}"
    raw = _RAW_LANE.match(label)
    if raw is not None:
        return f"pre_fec_lane_{int(raw.group(1))}"
    if _RATE.search(label):
        return None
    return v.snake(label)


def parse_nvlink_errors(text: str) -> NodeFacts:
    """Facts (per GPU and link: error counters) from `nvidia-smi nvlink -e`.

    Counters say nothing about whether a link is up, so the links read here are marked not
    active (no evidence that they are); merged with `-s` output, the status decides (see
    merge_nodes).
    """
    warnings: list[str] = []
    blocks = _blocks(text, warnings)
    if not blocks:
        raise ParseError('not nvidia-smi nvlink -e output: no "GPU N: ..." line')
    gpus: list[GpuFacts] = []
    for gpu, lines in blocks:
        counters: dict[int, dict[str, int]] = {}
        current: int | None = None
        for line in lines:
            match = LINK_LINE.match(line)
            if match is not None:
                current = int(match.group(1))
                counters.setdefault(current, {})
                rest = match.group(2)
            elif current is not None:
                rest = line
            else:
                continue
            # "Replay Errors: 0", or several on one line: "Replay Errors: 0, CRC Errors: 3".
            for part in rest.split(","):
                if len(part) > _MAX_STATUS or ":" not in part:
                    continue
                counter = _COUNTER.match(part)
                if counter is None:
                    continue
                count = _count(counter.group(2))
                name = _counter_name(counter.group(1))
                if count is not None and name is not None and current is not None:
                    counters[current][name] = count
        gpu["nvlink_links"] = [
            {"link": number, "active": False, "speed_gbps": None, "errors": counters[number]}
            for number in sorted(counters)
            if counters[number]
        ]
        gpus.append(gpu)
    return new_node(gpus=gpus, sources=[ERRORS_SOURCE], warnings=warnings)
