"""Parsing one `nvidia-smi -q -x` document of 1,000 GPUs, side by side with lxml on the same bytes.

Target: parse_output(kind="smi-xml") (decoding, checks, facts and all) within 2x of
lxml.etree.fromstring, the C XML parser alone, on the same bytes in the same run. lxml is the
yardstick only: the parser uses the standard library and does not depend on it. Without lxml
this prints our figure alone.

The document is built from the real H200 capture in ../shared/fixtures/gpu/h200/ (as
bench/probes.py does): 1,000 copies of its <gpu> element, each with its own bus id, UUID and
serial, and readings of its own where real GPUs differ (temperatures, power draw, memory used,
utilization, PCIe throughput). Run with `make bench` or `.venv/bin/python bench/parse_xml.py`;
no database needed.
"""

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import ROOT  # noqa: E402

CAPTURE = ROOT.parent / "shared" / "fixtures" / "gpu" / "h200" / "nvidia-smi-q-idle.xml"
GPUS = 1000
BEST_OF, ROUNDS = 5, 3
TARGET_RATIO = 2.0


def many_gpu_document(count: int) -> bytes:
    """A `-q -x` document of `count` GPUs made from the one real H200 <gpu> element."""
    text = CAPTURE.read_text(encoding="utf-8")
    start, end = text.index("<gpu id="), text.rindex("</gpu>") + len("</gpu>")
    head, gpu, tail = text[:start], text[start:end], text[end:]
    readings = {
        "<gpu_temp>41 C<": "<gpu_temp>{t} C<",
        "<memory_temp>38 C<": "<memory_temp>{m} C<",
        "<average_power_draw>133.29 W<": "<average_power_draw>{w}.29 W<",
        "<instant_power_draw>133.50 W<": "<instant_power_draw>{w}.50 W<",
        "<used>0 MiB<": "<used>{u} MiB<",  # the first <used>: fb_memory_usage
        "<gpu_util>0 %<": "<gpu_util>{p} %<",
        "<tx_util>817 KB/s<": "<tx_util>{k} KB/s<",
    }
    for old in readings:
        assert old in gpu, old
    copies = []
    for index in range(count):
        copy = (
            gpu.replace("00000000:00:06.0", f"0000{index // 256:04X}:{index % 256:02X}:00.0")
            .replace("8e2f93630a3e", f"8e2f9363{index:04x}")
            .replace("1653724066869", f"1653724{index:06d}")
        )
        values = {
            "t": 30 + index % 50,
            "m": 28 + index % 45,
            "w": 120 + index * 7 % 580,
            "u": index * 37 % 140000,
            "p": index % 101,
            "k": index * 13 % 9000,
        }
        for old, new in readings.items():
            copy = copy.replace(old, new.format(**values), 1)
        copies.append(copy)
    head = head.replace("<attached_gpus>1<", f"<attached_gpus>{count}<")
    return (head + "\n".join(copies) + tail).encode()


def best_ms(call: Callable[[], object]) -> float:
    samples = []
    for _ in range(BEST_OF):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return min(samples) * 1000


def main() -> None:
    if not CAPTURE.exists():
        raise SystemExit(f"needs the H200 capture at {CAPTURE}")
    from poc.probes import parsers

    try:
        from lxml import etree
    except ImportError:
        etree = None

    data = many_gpu_document(GPUS)
    facts = parsers.parse_output(data, kind="smi-xml")
    assert len(facts["gpus"]) == GPUS and not facts["warnings"], facts["warnings"]
    assert len({gpu["uuid"] for gpu in facts["gpus"]}) == GPUS

    ours: list[float] = []
    lxml: list[float] = []
    for _ in range(ROUNDS):  # side by side, alternating, so both see the same machine
        ours.append(best_ms(lambda: parsers.parse_output(data, kind="smi-xml")))
        if etree is not None:
            lxml.append(best_ms(lambda: etree.fromstring(data)))

    def figures(samples: list[float]) -> str:
        rounds = ", ".join(f"{sample:.1f}" for sample in samples)
        return f"{min(samples):7.1f} ms   (best of {BEST_OF} in each round: {rounds})"

    print(f"parse one {GPUS}-GPU nvidia-smi -q -x document ({len(data) / 1e6:.1f} MB)")
    print(f"  parse_output(kind=smi-xml)  {figures(ours)}")
    if etree is None:
        print("  lxml is not installed: no yardstick to set our figure beside")
        return
    ratio = min(ours) / min(lxml)
    print(f"  lxml.etree.fromstring       {figures(lxml)}")
    verdict = "OK" if ratio <= TARGET_RATIO else "OVER"
    print(f"  ratio {ratio:.2f}x   (target <= {TARGET_RATIO:.0f}x): {verdict}")


if __name__ == "__main__":
    main()
