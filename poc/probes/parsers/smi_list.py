"""`nvidia-smi -L`: one line per GPU, then one indented line per MIG device.

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5d5ba0d6-...)
      MIG 3g.40gb     Device  0: (UUID: MIG-c6d4f1ef-...)
      MIG 1c.3g.40gb  Device  1: (UUID: MIG-GPU-5d5ba0d6-.../2/1)

This is the one output that names each MIG device's GPU instance profile. A GPU listed with
MIG devices has MIG mode enabled; one listed without says nothing about it (the mode may be
on with no instance created yet). Each MIG line is one compute instance: "1c.3g.40gb" is a
compute instance of one compute slice inside a 3g.40gb GPU instance, "3g.40gb" one that spans
its whole GPU instance. The device keeps both: its own profile (`compute_profile`) and its GPU
instance's (`profile`). Two "1c.3g.40gb" lines may share one GPU instance or sit in two: the
listing does not say which, so the GPU instance id stays unknown unless the UUID carries it.
Drivers of the R450 series wrote the GPU and compute instance ids into the MIG UUID
(".../2/1"); they are read from there when present.

The registry's `smi-list` entry (formats.py) says how this output is recognised and
which commands make it.
"""

import re

from poc.probes.facts import GpuFacts, MigDevice, NodeFacts, new_gpu, new_node

from . import values as v
from .values import ParseError

SOURCE = "nvidia-smi -L"

_GPU_START = re.compile(r"\s*GPU\s+(\d{1,4}):\s")
# The UUID is read up to the closing parenthesis, blanks included: where NVML cannot read it,
# nvidia-smi writes its error text there ("(UUID: GPU is lost)", "(UUID: [Unknown Error])").
_UUID = re.compile(r"\(UUID:([^()]*)\)")
_MIG_LINE = re.compile(r"\s*MIG\s+(\S+)\s+Device\s+(\d{1,4}):\s*\(UUID:([^()]*)\)")
_COMPUTE_PREFIX = re.compile(r"\d+c\.(?=\d+g\.)", re.IGNORECASE)
_LEGACY_IDS = re.compile(r"/(\d{1,4})/(\d{1,4})$")
# Lines nvidia-smi writes among its output in every mode when a GPU is in trouble: before
# it ("WARNING: infoROM is corrupted at gpu 0000:3B:00.0") or in place of a GPU it cannot
# reach ("Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error").
_NOTICE = re.compile(
    r"\s*(?:WARNING: infoROM is corrupted|Unable to determine the device handle\b)",
    re.IGNORECASE,
)


def smi_notice(line: str) -> str | None:
    """The text of a notice nvidia-smi prints among its output, or None for other lines."""
    if _NOTICE.match(line) is None:
        return None
    return " ".join(line.split())[:300]


def gpu_line(line: str, *, uuid_required: bool = True) -> GpuFacts | None:
    """The GPU a "GPU 0: NAME (UUID: GPU-...)" line names, or None if the line is not one.

    nvlink -s and -e open each GPU's block with the same line, where some drivers leave the
    UUID out ("GPU 0: Quadro RTX 8000"): `uuid_required=False` reads those too.
    """
    start = _GPU_START.match(line)
    if start is None:
        return None
    uuid = _UUID.search(line, start.end())
    if uuid is None:
        if uuid_required:
            return None
        name = line[start.end() :].strip()
        if not name or len(name) > 120 or ":" in name:
            return None
        return new_gpu(index=int(start.group(1)), name=v.to_word(name))
    return new_gpu(
        index=int(start.group(1)),
        name=v.to_word(line[start.end() : uuid.start()]),
        uuid=v.to_word(uuid.group(1)),
    )


def mig_profiles(name: str) -> tuple[str, str]:
    """(GPU instance profile, the device's own profile) of a MIG device name as nvidia-smi
    writes it ("MIG 1c.3g.71gb", "1c.3g.71gb", "3g.71gb"): ("3g.71gb", "1c.3g.71gb")."""
    own = name.strip()
    if own[:3].upper() == "MIG":
        own = own[3:].strip(" -")
    return _COMPUTE_PREFIX.sub("", own), own


def _mig(match: re.Match[str]) -> tuple[int, MigDevice]:
    profile, own = mig_profiles(match.group(1))
    uuid = v.to_word(match.group(3))
    legacy = None if uuid is None else _LEGACY_IDS.search(uuid)
    return int(match.group(2)), {
        "gpu_instance_id": int(legacy.group(1)) if legacy else None,
        "compute_instance_id": int(legacy.group(2)) if legacy else None,
        "profile": profile,
        "profile_id": None,
        "memory_total_mib": None,
        "uuid": uuid,
        "compute_profile": own,
    }


def parse_smi_list(text: str) -> NodeFacts:
    """Facts (index, name, UUID, MIG devices) from `nvidia-smi -L`."""
    gpus: list[GpuFacts] = []
    migs: list[list[tuple[int, MigDevice]]] = []
    warnings: list[str] = []
    for line in text.split("\n"):
        notice = smi_notice(line)
        if notice is not None:
            warnings.append(f"nvidia-smi: {notice}")
            continue
        gpu = gpu_line(line)
        if gpu is not None:
            gpus.append(gpu)
            migs.append([])
            continue
        match = _MIG_LINE.match(line)
        if match is not None and gpus:
            migs[-1].append(_mig(match))
    if not gpus:
        first = next((line.strip() for line in text.split("\n") if line.strip()), "")
        raise ParseError(f"not nvidia-smi -L output: {first[:120]}")
    for gpu, devices in zip(gpus, migs, strict=True):
        gpu["mig_devices"] = [device for _, device in sorted(devices, key=lambda d: d[0])]
        if devices:  # MIG devices exist only on a GPU whose MIG mode is on
            gpu["mig_mode_current"] = True
    return new_node(gpus=gpus, sources=[SOURCE], warnings=warnings)
