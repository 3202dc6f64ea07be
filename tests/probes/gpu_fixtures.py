"""Where the real GPU captures live, for the parser tests.

The tests run from a clone whose parent directory holds `shared/` (shared/fixtures/gpu: the
H200 captures, the public H100 and L40S captures, the kernel logs; each folder's README names
its source).
"""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "gpu"

H200_XML = "h200/nvidia-smi-q-idle.xml"
H200_TEXT = "h200/nvidia-smi-q-idle.txt"
H200_CSV = "h200/query-gpu.csv"
H200_MISC = "h200/misc.txt"
H100_CAPTURE = "public/linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
L40S_CAPTURE = "public/linux-x86_64__nvidia-l40s__595.80.txt"
DMESG_XID_79 = "logs/dmesg-xid-79-fallen-off-bus.txt"
PLUGIN_XID_48 = "logs/device-plugin-xid-48-unhealthy.log"

ALL = (
    H200_XML,
    H200_TEXT,
    H200_CSV,
    H200_MISC,
    H100_CAPTURE,
    L40S_CAPTURE,
    DMESG_XID_79,
    PLUGIN_XID_48,
)


def fixture_text(relative: str) -> str:
    """The text of a capture under shared/fixtures/gpu."""
    return (FIXTURES / relative).read_text(encoding="utf-8")


def h200_gpu_element() -> tuple[str, str, str]:
    """The H200 `-q -x` document cut around its one <gpu> element: (head, gpu, tail)."""
    text = fixture_text(H200_XML)
    start = text.index("<gpu id=")
    end = text.rindex("</gpu>") + len("</gpu>")
    return text[:start], text[start:end], text[end:]


def eight_gpu_xml() -> str:
    """An 8-GPU `-q -x` document made by replicating the real H200 <gpu> element.

    Not a capture: each copy gets its own bus id (18:00.0, 2A:00.0, ...), UUID and serial,
    and <attached_gpus> says 8, so the document reads like one from an 8-GPU HGX node.
    """
    head, gpu, tail = h200_gpu_element()
    copies = []
    for index, bus in enumerate(BUSES):
        copies.append(
            gpu.replace("00000000:00:06.0", f"00000000:{bus}:00.0")
            .replace("<pci_bus>00</pci_bus>", f"<pci_bus>{bus}</pci_bus>")
            .replace("8e2f93630a3e", f"8e2f9363{index:04x}")
            .replace("1653724066869", f"16537240668{index:02d}")
        )
    head = head.replace("<attached_gpus>1</attached_gpus>", "<attached_gpus>8</attached_gpus>")
    return head + "\n".join(copies) + tail


BUSES = ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")
