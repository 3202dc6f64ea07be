"""`nvidia-smi --version`: the versions of nvidia-smi, NVML, the driver and CUDA.

    NVIDIA-SMI version  : 580.95.05
    NVML version        : 580.95
    DRIVER version      : 580.95.05
    CUDA Version        : 13.0

Older drivers print the first three lines only; R610 renames the driver's to "KMD version" and
CUDA's to "CUDA UMD Version" (see smi_text.versions_of). The output names no GPU: the node's
inventory stays unknown (`gpus_listed` False).

The registry's `smi-version` entry (formats.py) says how this output is recognised and
which commands make it.
"""

from poc.probes.facts import NodeFacts, new_node

from . import values as v
from .smi_shape import build_tree
from .smi_text import versions_of
from .values import ParseError

SOURCE = "nvidia-smi --version"

VERSION_LABELS = frozenset(
    (
        "nvidia-smi version",
        "nvml version",
        "driver version",
        "kmd version",
        "cuda version",
        "cuda umd version",
    )
)


def is_version_output(lines: list[str]) -> bool:
    """Whether every line is a "label : value" line of `nvidia-smi --version`, and one names
    nvidia-smi's, NVML's or the driver's version."""
    labels: list[str] = []
    for line in lines:
        label, colon, value = line.partition(":")
        label = " ".join(label.lower().split())
        if not colon or label not in VERSION_LABELS or not value.strip():
            return False
        labels.append(label)
    return bool(labels) and any(
        label in ("nvidia-smi version", "nvml version", "driver version", "kmd version")
        for label in labels
    )


def parse_smi_version(text: str) -> NodeFacts:
    """Driver, NVML and CUDA versions from `nvidia-smi --version`."""
    found: dict[str, str | None] = {}
    for node in build_tree(text).children:
        if node.label in VERSION_LABELS and node.label not in found:
            found[node.label] = v.to_version(node.value)
    driver, cuda = versions_of(found)
    nvml = found.get("nvml version")
    if driver is None and cuda is None and nvml is None:
        raise ParseError("not nvidia-smi --version output")
    return new_node(
        driver_version=driver,
        cuda_version=cuda,
        nvml_version=nvml,
        sources=[SOURCE],
        gpus_listed=False,
    )
