"""Published peak figures of NVIDIA datacenter GPUs, to express a measured figure as a percentage
of what the product is sold as.

Keyed by PCI device id (the `pci_device_id` of the facts, "0x2335"). Every figure is the dense one
(no structured sparsity): datasheets print tensor figures "with sparsity" and mark them with an
asterisk; where only that figure is printed, the dense figure stored here is half of it, as the
datasheets' footnotes say ("Specifications 1/2 lower without sparsity"). Memory bandwidth is the
peak of the GPU's own memory in TB/s (10^12 bytes per second). `pcie_gen`/`pcie_width` are the
product's host interface.

Sources, checked in 2026:
- Device ids: the PCI ID Repository, pci.ids version 2026.05.24 (https://pci-ids.ucw.cz/), vendor
  10de. Every id below is listed there under the product named in the row.
- Figures: each row's `source`. The NVIDIA pages were read through copies of their specification
  tables (resellers, documentation that quotes them); a row's `note` says which figures could not
  be matched against a second copy.
"""

import re
from dataclasses import dataclass, field
from typing import Literal

Dtype = Literal["bf16", "fp16", "tf32", "fp32"]

H100_DATASHEET = (
    "NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/ "
    "(H100 SXM, H100 PCIe and H100 NVL columns)"
)
H200_PAGE = (
    "NVIDIA H200 Tensor Core GPU specifications, https://www.nvidia.com/en-us/data-center/h200/ "
    "(H200 SXM and H200 NVL columns)"
)
A100_DATASHEET = (
    "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/a100/ "
    "(40GB and 80GB, PCIe and SXM columns)"
)
L40_DATASHEET = (
    "NVIDIA L40 and L40S datasheets, https://www.nvidia.com/en-us/data-center/l40/ and "
    "https://www.nvidia.com/en-us/data-center/l40s/"
)


@dataclass(frozen=True)
class Peak:
    """The published dense peaks of one GPU product."""

    key: str  # a stable name for the row: "h100-sxm"
    name: str  # the product as NVIDIA names it
    pci_device_ids: tuple[str, ...]
    bf16_tflops: float | None  # dense tensor-core figures; None: the product has none
    fp16_tflops: float | None
    tf32_tflops: float | None
    fp32_tflops: float | None  # non-tensor FP32
    memory_bandwidth_tbps: float
    pcie_gen: int
    pcie_width: int
    source: str
    note: str = ""
    # Marketing names as the driver prints them (`nvidia-smi --query-gpu=name`), as sets of words
    # that must all appear; see `peak_for`.
    name_words: tuple[frozenset[str], ...] = field(default=())

    def matmul_tflops(self, dtype: str) -> float | None:
        """The dense peak for a matrix-product data type ("bf16", "fp16", "tf32", "fp32")."""
        return {
            "bf16": self.bf16_tflops,
            "fp16": self.fp16_tflops,
            "tf32": self.tf32_tflops,
            "fp32": self.fp32_tflops,
        }.get(dtype)


def _words(*names: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(name.upper().split()) for name in names)


PEAKS: tuple[Peak, ...] = (
    Peak(
        key="h100-sxm",
        name="H100 SXM5 80GB",
        pci_device_ids=("0x2330",),
        # 1,979 / 1,979 / 989 TFLOPS with sparsity.
        bf16_tflops=989.5,
        fp16_tflops=989.5,
        tf32_tflops=494.5,
        fp32_tflops=67.0,
        memory_bandwidth_tbps=3.35,
        pcie_gen=5,
        pcie_width=16,
        source=H100_DATASHEET,
        name_words=_words("H100 80GB HBM3", "H100 SXM5 80GB"),
    ),
    Peak(
        key="h100-pcie",
        name="H100 PCIe",
        pci_device_ids=("0x2331",),
        # 1,513 / 1,513 / 756 TFLOPS with sparsity.
        bf16_tflops=756.5,
        fp16_tflops=756.5,
        tf32_tflops=378.0,
        fp32_tflops=51.0,
        memory_bandwidth_tbps=2.0,
        pcie_gen=5,
        pcie_width=16,
        source=H100_DATASHEET,
        name_words=_words("H100 PCIE"),
    ),
    Peak(
        key="h100-nvl",
        name="H100 NVL",
        # pci.ids names 0x2321 "GH100 [H100L 94GB]"; the driver prints "NVIDIA H100 NVL".
        pci_device_ids=("0x2321",),
        # 1,671 / 1,671 / 835 TFLOPS with sparsity.
        bf16_tflops=835.5,
        fp16_tflops=835.5,
        tf32_tflops=417.5,
        fp32_tflops=60.0,
        memory_bandwidth_tbps=3.9,
        pcie_gen=5,
        pcie_width=16,
        source=H100_DATASHEET,
        name_words=_words("H100 NVL"),
    ),
    Peak(
        key="h200-sxm",
        name="H200 SXM 141GB",
        pci_device_ids=("0x2335",),
        # 1,979 / 1,979 / 989 TFLOPS with sparsity: the H100 SXM's compute with faster memory.
        bf16_tflops=989.5,
        fp16_tflops=989.5,
        tf32_tflops=494.5,
        fp32_tflops=67.0,
        memory_bandwidth_tbps=4.8,
        pcie_gen=5,
        pcie_width=16,
        source=H200_PAGE,
        # The driver prints plain "NVIDIA H200" for the SXM part (fixtures/gpu/h200).
        name_words=_words("H200"),
    ),
    Peak(
        key="h200-nvl",
        name="H200 NVL",
        pci_device_ids=("0x233b",),
        # 1,671 / 1,671 / 835 TFLOPS with sparsity.
        bf16_tflops=835.5,
        fp16_tflops=835.5,
        tf32_tflops=417.5,
        fp32_tflops=60.0,
        memory_bandwidth_tbps=4.8,
        pcie_gen=5,
        pcie_width=16,
        source=H200_PAGE,
        name_words=_words("H200 NVL"),
    ),
    Peak(
        key="a100-sxm4-40gb",
        name="A100 SXM4 40GB",
        pci_device_ids=("0x20b0",),
        # 312 dense / 624 sparse (bf16, fp16); 156 / 312 (tf32): the datasheet prints both.
        bf16_tflops=312.0,
        fp16_tflops=312.0,
        tf32_tflops=156.0,
        fp32_tflops=19.5,
        memory_bandwidth_tbps=1.555,
        pcie_gen=4,
        pcie_width=16,
        source=A100_DATASHEET,
        name_words=_words("A100 SXM4 40GB"),
    ),
    Peak(
        key="a100-sxm4-80gb",
        name="A100 SXM4 80GB",
        pci_device_ids=("0x20b2",),
        bf16_tflops=312.0,
        fp16_tflops=312.0,
        tf32_tflops=156.0,
        fp32_tflops=19.5,
        memory_bandwidth_tbps=2.039,
        pcie_gen=4,
        pcie_width=16,
        source=A100_DATASHEET,
        name_words=_words("A100 SXM4 80GB"),
    ),
    Peak(
        key="a100-pcie-40gb",
        name="A100 PCIe 40GB",
        # pci.ids lists both ids as "GA100 [A100 PCIe 40GB]".
        pci_device_ids=("0x20f1", "0x20b1"),
        bf16_tflops=312.0,
        fp16_tflops=312.0,
        tf32_tflops=156.0,
        fp32_tflops=19.5,
        memory_bandwidth_tbps=1.555,
        pcie_gen=4,
        pcie_width=16,
        source=A100_DATASHEET,
        name_words=_words("A100 PCIE 40GB"),
    ),
    Peak(
        key="a100-pcie-80gb",
        name="A100 PCIe 80GB",
        pci_device_ids=("0x20b5",),
        bf16_tflops=312.0,
        fp16_tflops=312.0,
        tf32_tflops=156.0,
        fp32_tflops=19.5,
        memory_bandwidth_tbps=1.935,
        pcie_gen=4,
        pcie_width=16,
        source=A100_DATASHEET,
        name_words=_words("A100 80GB PCIE"),
    ),
    Peak(
        key="l40s",
        name="L40S",
        pci_device_ids=("0x26b9",),
        # 362.05 dense / 733 sparse (bf16, fp16); 183 / 366 (tf32): the datasheet prints both.
        bf16_tflops=362.05,
        fp16_tflops=362.05,
        tf32_tflops=183.0,
        fp32_tflops=91.6,
        memory_bandwidth_tbps=0.864,
        pcie_gen=4,
        pcie_width=16,
        source=L40_DATASHEET,
        name_words=_words("L40S"),
    ),
    Peak(
        key="l40",
        name="L40",
        pci_device_ids=("0x26b5",),
        # 181.05 dense / 362.1 sparse (bf16, fp16); 90.5 / 181 (tf32).
        bf16_tflops=181.05,
        fp16_tflops=181.05,
        tf32_tflops=90.5,
        fp32_tflops=90.5,
        memory_bandwidth_tbps=0.864,
        pcie_gen=4,
        pcie_width=16,
        source=L40_DATASHEET,
        name_words=_words("L40"),
    ),
    Peak(
        key="l4",
        name="L4",
        pci_device_ids=("0x27b8",),
        # 242 / 242 / 120 TFLOPS with sparsity.
        bf16_tflops=121.0,
        fp16_tflops=121.0,
        tf32_tflops=60.0,
        fp32_tflops=30.3,
        memory_bandwidth_tbps=0.3,
        pcie_gen=4,
        pcie_width=16,
        source="NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/",
        note="TF32 (120 sparse), FP32, bandwidth and interface matched against copies of the "
        "datasheet; the BF16/FP16 figure (242 sparse) is quoted from the datasheet unmatched.",
        name_words=_words("L4"),
    ),
    Peak(
        key="a10",
        name="A10",
        pci_device_ids=("0x2236",),
        # 125 dense / 250 sparse (bf16, fp16); 62.5 / 125 (tf32).
        bf16_tflops=125.0,
        fp16_tflops=125.0,
        tf32_tflops=62.5,
        fp32_tflops=31.2,
        memory_bandwidth_tbps=0.6,
        pcie_gen=4,
        pcie_width=16,
        source="NVIDIA A10 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/products/a10-gpu/",
        note="FP16, TF32, bandwidth and interface matched against a copy of the datasheet; "
        "BF16 (same as FP16) and FP32 31.2 are quoted from the datasheet unmatched.",
        name_words=_words("A10"),
    ),
    Peak(
        key="t4",
        name="Tesla T4",
        pci_device_ids=("0x1eb8",),
        # Turing has no BF16 or TF32 and no structured sparsity: 65 TFLOPS is FP16 mixed
        # precision, dense.
        bf16_tflops=None,
        fp16_tflops=65.0,
        tf32_tflops=None,
        fp32_tflops=8.1,
        memory_bandwidth_tbps=0.32,
        pcie_gen=3,
        pcie_width=16,
        source="NVIDIA T4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/tesla-t4/",
        note="FP32, bandwidth and interface matched against copies of the datasheet; the FP16 "
        "figure is quoted from the datasheet unmatched.",
        name_words=_words("T4"),
    ),
    Peak(
        key="b200",
        name="B200 (HGX B200)",
        pci_device_ids=("0x2901",),
        # Per GPU of an HGX B200: 4.5 PFLOPS (bf16, fp16) and 2.2 PFLOPS (tf32) with sparsity.
        bf16_tflops=2250.0,
        fp16_tflops=2250.0,
        tf32_tflops=1100.0,
        fp32_tflops=75.0,
        memory_bandwidth_tbps=7.7,
        pcie_gen=5,
        pcie_width=16,
        source="NVIDIA HGX platform specifications (HGX B200, per GPU), "
        "https://www.nvidia.com/en-us/data-center/hgx/",
        note="Read from one copy of the HGX specification table only. NVIDIA's DGX B200 "
        "datasheet gives 64 TB/s for 8 GPUs (8 TB/s each) rather than 7.7; the host interface "
        "(PCIe Gen5 x16) is an assumption from the same table.",
        name_words=_words("B200"),
    ),
)

PEAKS_BY_DEVICE_ID: dict[str, Peak] = {
    device_id: peak for peak in PEAKS for device_id in peak.pci_device_ids
}

# Where several rows match a name, the one with the most words wins ("H200 NVL" over "H200").
_BY_NAME: list[tuple[frozenset[str], Peak]] = sorted(
    ((words, peak) for peak in PEAKS for words in peak.name_words),
    key=lambda item: -len(item[0]),
)


def normalize_device_id(value: str | None) -> str | None:
    """A PCI device id as the table keys it ("0x2335"), from "0x2335", "2335", "10de:2335" or
    nvidia-smi's "0x233510DE" (device and vendor); None when it is none of these."""
    if value is None:
        return None
    text = value.strip().lower()
    text = text.removeprefix("0x")
    if re.fullmatch(r"10de:[0-9a-f]{4}", text):
        text = text[5:]
    elif re.fullmatch(r"[0-9a-f]{4}10de", text):
        text = text[:4]
    if re.fullmatch(r"[0-9a-f]{4}", text):
        return "0x" + text
    return None


def _name_words(name: str) -> set[str]:
    # "NVIDIA A100-SXM4-80GB" -> {"NVIDIA", "A100", "SXM4", "80GB"}
    return set(re.sub(r"[^A-Z0-9]+", " ", name.upper()).split())


def peak_for(pci_device_id: str | None, name: str | None = None) -> Peak | None:
    """The published peaks of a GPU, by PCI device id; by marketing name only when no usable id
    is given ("NVIDIA H100 80GB HBM3" is the H100 SXM).

    A device id that is given but not in the table gives None, whatever the name says: another
    id is another product (an H100 with 94 GB is not the 80 GB one), and a wrong peak is worse
    than none."""
    device_id = normalize_device_id(pci_device_id)
    if device_id is not None:
        return PEAKS_BY_DEVICE_ID.get(device_id)
    if not name:
        return None
    words = _name_words(name)
    for wanted, peak in _BY_NAME:
        if wanted <= words:
            return peak
    return None


def percent_of_peak(measured: float | None, peak: float | None) -> float | None:
    """`measured` as a percentage of `peak` (100.0: at peak); None when either is unknown or the
    peak is not a positive number."""
    if measured is None or peak is None or peak <= 0:
        return None
    return measured / peak * 100.0
