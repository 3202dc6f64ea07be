"""Published peaks: lookup by PCI device id, by marketing name when there is no id, and the
percentage of a measured figure."""

import pytest

from poc.probes.peaks import PEAKS, normalize_device_id, peak_for, percent_of_peak

# bench.json of shared/fixtures/gpu/h200 (PyTorch on one H200 SXM): bf16 8192^3 matrix product.
H200_BF16_MEASURED = 778.6203869978742


@pytest.mark.parametrize(
    ("device_id", "key"),
    [
        ("0x2330", "h100-sxm"),
        ("0x2331", "h100-pcie"),
        ("0x2321", "h100-nvl"),
        ("0x2335", "h200-sxm"),
        ("0x233b", "h200-nvl"),
        ("0x20b0", "a100-sxm4-40gb"),
        ("0x20b2", "a100-sxm4-80gb"),
        ("0x20f1", "a100-pcie-40gb"),
        ("0x20b1", "a100-pcie-40gb"),
        ("0x20b5", "a100-pcie-80gb"),
        ("0x26b9", "l40s"),
        ("0x26b5", "l40"),
        ("0x27b8", "l4"),
        ("0x2236", "a10"),
        ("0x1eb8", "t4"),
        ("0x2901", "b200"),
    ],
)
def test_every_required_product_is_found_by_its_device_id(device_id: str, key: str) -> None:
    peak = peak_for(device_id)

    assert peak is not None and peak.key == key
    assert peak.source
    assert peak.memory_bandwidth_tbps > 0 and peak.pcie_width == 16 and peak.pcie_gen in (3, 4, 5)


def test_device_ids_are_read_in_the_forms_tools_print_them() -> None:
    assert normalize_device_id("0x2335") == "0x2335"
    assert normalize_device_id("2335") == "0x2335"
    assert normalize_device_id("0x233510DE") == "0x2335"  # nvidia-smi pci.device_id
    assert normalize_device_id("10de:2335") == "0x2335"  # lspci -n
    assert normalize_device_id(" 0X233B ") == "0x233b"
    assert normalize_device_id("H200") is None
    assert normalize_device_id(None) is None
    assert peak_for("0x233510DE") is peak_for("0x2335")


def test_dense_figures_are_half_the_sparse_ones() -> None:
    h100 = peak_for("0x2330")
    h200_nvl = peak_for("0x233b")

    assert h100 is not None and h200_nvl is not None
    assert h100.bf16_tflops == 1979 / 2 and h100.tf32_tflops == 989 / 2
    assert h200_nvl.bf16_tflops == 1671 / 2
    assert h100.fp32_tflops == 67.0  # not a tensor figure: printed dense


def test_the_h200_has_the_h100_compute_and_faster_memory() -> None:
    h100, h200 = peak_for("0x2330"), peak_for("0x2335")

    assert h100 is not None and h200 is not None
    assert h200.bf16_tflops == h100.bf16_tflops
    assert (h100.memory_bandwidth_tbps, h200.memory_bandwidth_tbps) == (3.35, 4.8)


def test_a_gpu_without_a_data_type_has_no_peak_for_it() -> None:
    t4 = peak_for("0x1eb8")

    assert t4 is not None
    assert t4.matmul_tflops("bf16") is None and t4.matmul_tflops("tf32") is None
    assert t4.matmul_tflops("fp16") == 65.0
    assert t4.matmul_tflops("fp8") is None


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA H100 NVL", "h100-nvl"),
        ("NVIDIA H200", "h200-sxm"),
        ("NVIDIA H200 NVL", "h200-nvl"),
        ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("NVIDIA L40S", "l40s"),
        ("NVIDIA L40", "l40"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA A10", "a10"),
        ("Tesla T4", "t4"),
        ("NVIDIA B200", "b200"),
    ],
)
def test_without_a_device_id_the_driver_name_finds_the_product(name: str, key: str) -> None:
    peak = peak_for(None, name)

    assert peak is not None and peak.key == key


@pytest.mark.parametrize("name", ["NVIDIA A10G", "NVIDIA L40G", "NVIDIA H100", "NVIDIA GB200", ""])
def test_a_name_that_does_not_say_which_product_finds_none(name: str) -> None:
    # A10G is not an A10, and a bare "H100" could be the SXM or the PCIe card.
    assert peak_for(None, name) is None


def test_an_unknown_device_id_finds_none_whatever_the_name() -> None:
    # 0x2339 is an H100 SXM5 94GB: another product than the 80 GB one the name would suggest.
    assert peak_for("0x2339", "NVIDIA H100 80GB HBM3") is None


def test_rows_do_not_share_device_ids_or_keys() -> None:
    ids = [device_id for peak in PEAKS for device_id in peak.pci_device_ids]

    assert len(ids) == len(set(ids))
    assert len({peak.key for peak in PEAKS}) == len(PEAKS)
    assert all(normalize_device_id(device_id) == device_id for device_id in ids)


def test_percent_of_peak_of_the_h200_benchmark() -> None:
    h200 = peak_for("0x2335")

    assert h200 is not None
    assert percent_of_peak(H200_BF16_MEASURED, h200.bf16_tflops) == pytest.approx(78.69, abs=0.01)
    assert percent_of_peak(4.188283159129265, h200.memory_bandwidth_tbps) == pytest.approx(
        87.26, abs=0.01
    )


def test_percent_of_peak_is_none_when_either_side_is_unknown() -> None:
    assert percent_of_peak(None, 989.5) is None
    assert percent_of_peak(500.0, None) is None
    assert percent_of_peak(500.0, 0.0) is None
    assert percent_of_peak(0.0, 100.0) == 0.0
