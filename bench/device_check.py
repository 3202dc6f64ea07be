"""Read what bench/device_h200.sh brought back from a machine with a real GPU, the way the
workbench reads an agent's upload: the bundle parsed and checked, the node judged, and each
benchmark figure set beside the GPU's published peak; the raw -q -x captures parsed too.

    .venv/bin/python bench/device_check.py DIR   (the folder the script wrote)

Prints the figures for docs/performance.md; exits 1 when the bundle cannot be read. Needs no
database: the parsers and rules are pure functions (texts in English).
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from django.conf import settings  # noqa: E402

settings.configure(USE_I18N=False)

from poc.probes import parsers  # noqa: E402
from poc.probes.present import benchmark_figures  # noqa: E402
from poc.probes.rules import judge_node  # noqa: E402


def main(folder: Path) -> int:
    bundle = json.loads((folder / "bundle.json").read_text(encoding="utf-8"))
    started = time.perf_counter()
    facts = parsers.parse_bundle(bundle)
    parse_ms = (time.perf_counter() - started) * 1000
    health = judge_node(facts)
    print(
        f"bundle parsed in {parse_ms:.1f} ms: host {facts['host']}, driver "
        f"{facts['driver_version']}, CUDA {facts['cuda_version']}, {len(facts['gpus'])} GPU(s)"
    )
    for gpu in facts["gpus"]:
        print(
            f"  GPU {gpu['index']}: {gpu['name']} ({gpu['pci_device_id']}), "
            f"{gpu['memory_total_mib']} MiB, PCIe gen {gpu['pcie_gen_current']}/"
            f"{gpu['pcie_gen_max']} x{gpu['pcie_width_current']}"
        )
    print(f"health: {health['verdict']}; problems: {health['problems'] or 'none'}")
    for gpu in benchmark_figures(facts):
        for figure in gpu["figures"]:
            share = f"{figure['percent']:.1f} % of {figure['peak']}" if figure["percent"] else "-"
            print(
                f"  GPU {gpu['index']} {figure['label']}: {figure['measured']} "
                f"{figure['unit']} ({share})"
            )
    for name in ("nvidia-smi-q.xml", "nvidia-smi-q-load.xml"):
        path = folder / name
        if path.exists():
            text = path.read_text(encoding="utf-8", errors="replace")
            started = time.perf_counter()
            doc = parsers.parse_output(text)
            took = (time.perf_counter() - started) * 1000
            print(
                f"{name}: {len(doc['gpus'])} GPU(s) in {took:.1f} ms; warnings: "
                f"{doc['warnings'] or 'none'}"
            )
    for warning in facts["warnings"]:
        print(f"warning: {warning}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        sys.exit(main(Path(sys.argv[1])))
    except (OSError, ValueError, parsers.ParseError) as exc:
        sys.exit(f"device_check: {exc}")
