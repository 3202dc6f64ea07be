"""Shapes of `nvidia-smi -q`, `--query-gpu` CSV and `-L` output beyond the shared captures:
NVML error text written in place of a name, UUID, serial or state; the stream of whole reports
that `nvidia-smi -q -l N` writes; and output saved as UTF-16 by Windows PowerShell 5.

Each input is made in the test from the real H200 captures, changed the way the driver,
invocation or shell prints it (the docstrings say how).
"""

import codecs

import pytest

from poc.probes import parsers
from poc.probes.parsers import ParseError, detect, parse_output, parse_outputs
from poc.probes.parsers import values as v
from tests.probes.gpu_fixtures import H200_CSV, H200_MISC, H200_TEXT, fixture_text

H200_UUID = "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"
H200_SERIAL = "1653724066869"
H200_BUS = "00000000:00:06.0"
TEMPERATURE = "        GPU Current Temp                               : 40 C"
LOOP_WARNING = "{} reports (a query run with -l): the last complete one is read"


def _replaced(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def _label_line(label: str, value: str, indent: int = 4) -> str:
    """A -q line as the H200 capture aligns it: the colon in column 56."""
    return f"{' ' * indent}{label:<{55 - indent}}: {value}"


def _two_gpu_text(text: str) -> str:
    """The H200 -q report with its GPU block repeated as a second GPU on bus 00:07.0."""
    head, block = text.split(f"GPU {H200_BUS}\n", 1)
    head = head.replace(_label_line("Attached GPUs", "1", 0), _label_line("Attached GPUs", "2", 0))
    second = block.replace(H200_BUS, "00000000:00:07.0").replace("8e2f93630a3e", "8e2f93630a3f")
    return f"{head}GPU {H200_BUS}\n{block.rstrip()}\nGPU 00000000:00:07.0\n{second}"


# --- NVML error text ---------------------------------------------------------------------------


def test_nvml_error_strings_are_no_words() -> None:
    """The shared reading of free text: an NVML error, bare or bracketed, is unknown."""
    for raw in ("GPU is lost", "[GPU is lost]", "Timeout", "not found", "[Unknown Error]", "N/A"):
        assert v.to_word(raw) is None, raw
    assert v.to_word("  NVIDIA   H200 ") == "NVIDIA H200"
    assert v.to_word("In Progress") == "In Progress"  # a fabric state, no error
    assert "gpu is lost" in v.NVML_ERRORS
    assert v.usable_uuid("GPU is lost") is None


def test_query_text_nvml_error_text_is_no_name_uuid_or_serial() -> None:
    """The H200 `-q` report of a GPU fallen off the bus: where NVML fails for a field, the
    driver writes the error text in the value's place, bare ("GPU is lost") or bracketed
    ("[Timeout]"); the fabric registration failed with a timeout."""
    text = _replaced(
        fixture_text(H200_TEXT),
        {
            _label_line("Product Name", "NVIDIA H200"): _label_line("Product Name", "GPU is lost"),
            _label_line("GPU UUID", H200_UUID): _label_line("GPU UUID", "GPU is lost"),
            _label_line("Serial Number", H200_SERIAL): _label_line("Serial Number", "[Timeout]"),
            TEMPERATURE: TEMPERATURE.replace("40 C", "GPU is lost"),
            _label_line("State", "N/A", 8) + "\n" + _label_line("Status", "N/A", 8): (
                _label_line("State", "Not Found", 8) + "\n" + _label_line("Status", "Timeout", 8)
            ),
        },
    )
    (gpu,) = parse_output(text)["gpus"]
    assert (gpu["name"], gpu["uuid"], gpu["serial"]) == (None, None, None)
    assert gpu["temperature_c"] is None
    assert gpu["fabric_state"] is None
    # The fabric status is "Success" or the registration's NVML error: the error is its value.
    assert gpu["fabric_status"] == "Timeout"
    assert gpu["pci_bus_id"] == H200_BUS
    assert gpu["memory_total_mib"] == 143771


def test_query_text_mig_device_uuid_error_text_is_unknown() -> None:
    """A `-q` MIG Device block as R535-R590 drivers print it, with the UUID NVML could not
    read written bare."""
    mig_mode = "\n".join(
        [
            "    MIG Mode",
            _label_line("Current", "Disabled", 8),
            _label_line("Pending", "Disabled", 8),
        ]
    )
    device = "\n".join(
        [
            "    MIG Device",
            _label_line("Index", "0", 8),
            _label_line("GPU Instance ID", "1", 8),
            _label_line("Compute Instance ID", "0", 8),
            _label_line("UUID", "Not Found", 8),
            "        FB Memory Usage",
            _label_line("Total", "71424 MiB", 12),
        ]
    )
    text = _replaced(fixture_text(H200_TEXT), {mig_mode: f"{mig_mode}\n{device}"})
    (mig,) = parse_output(text)["gpus"][0]["mig_devices"]
    assert mig["uuid"] is None
    assert (mig["gpu_instance_id"], mig["memory_total_mib"]) == (1, 71424)


def test_two_lost_gpus_of_the_query_text_stay_two_gpus_when_merged() -> None:
    """Two GPUs of one `-q` report whose UUID NVML could not read ("GPU is lost"), read
    together with a second report of the node: the error text must not pair them up as one
    GPU."""
    text = _two_gpu_text(
        fixture_text(H200_TEXT).replace(
            _label_line("GPU UUID", H200_UUID), _label_line("GPU UUID", "GPU is lost")
        )
    )
    (first, second) = parse_output(text)["gpus"]
    assert (first["uuid"], second["uuid"]) == (None, None)
    node = parse_outputs([("nvidia-smi -q", text), ("nvidia-smi -q", text)])
    assert [(g["index"], g["pci_bus_id"]) for g in node["gpus"]] == [
        (0, H200_BUS),
        (1, "00000000:00:07.0"),
    ]


def test_query_csv_rows_of_two_lost_gpus_are_two_gpus() -> None:
    """`--query-gpu` rows of two GPUs fallen off the bus, without an index column, where the
    driver wrote NVML's error text bare in place of name, UUID and serial: the rows are two
    GPUs (by bus id), not one GPU sampled twice by a shared "UUID"."""
    text = "\n".join(
        [
            "uuid, name, serial, pci.bus_id, fabric.state, memory.total [MiB]",
            f"GPU is lost, GPU is lost, Not Found, {H200_BUS}, Timeout, 143771 MiB",
            "GPU is lost, GPU is lost, Not Found, 00000000:00:07.0, Timeout, 143771 MiB",
        ]
    )
    node = parse_output(text)
    assert [(g["index"], g["pci_bus_id"]) for g in node["gpus"]] == [
        (0, H200_BUS),
        (1, "00000000:00:07.0"),
    ]
    for gpu in node["gpus"]:
        assert (gpu["uuid"], gpu["name"], gpu["serial"], gpu["fabric_state"]) == (None,) * 4
        assert gpu["memory_total_mib"] == 143771
    assert node["warnings"] == []


def test_query_csv_nvml_error_text_with_the_real_header() -> None:
    """The H200 `--query-gpu` row with the name, serial and compute capability NVML could not
    read, bare."""
    header, row = fixture_text(H200_CSV).strip().split("\n")
    assert row.endswith(", 9.0")
    row = row.replace("NVIDIA H200", "Timeout").replace(H200_SERIAL, "GPU is lost")
    row = row.removesuffix("9.0") + "Not Found"
    (gpu,) = parse_output(f"{header}\n{row}\n")["gpus"]
    assert (gpu["name"], gpu["serial"], gpu["uuid"]) == (None, None, H200_UUID)
    assert gpu["compute_capability"] is None
    assert gpu["memory_total_mib"] == 143771


def _h200_list_line() -> str:
    line = next(line for line in fixture_text(H200_MISC).split("\n") if line.startswith("GPU 0:"))
    assert line == f"GPU 0: NVIDIA H200 (UUID: {H200_UUID})"
    return line


def test_list_lines_with_nvml_error_text_for_the_uuid() -> None:
    """`nvidia-smi -L` on a node where NVML could not read two GPUs' UUIDs: the driver writes
    the error text inside the parentheses, bare or bracketed, and the MIG device line the
    same. Each GPU is still listed, its UUID unknown."""
    line = _h200_list_line()
    text = "\n".join(
        [
            line.replace(H200_UUID, "GPU is lost"),
            "  MIG 3g.71gb     Device  0: (UUID: Not Found)",
            line.replace("GPU 0:", "GPU 1:").replace(H200_UUID, "[Unknown Error]"),
            line.replace("GPU 0:", "GPU 2:").replace("NVIDIA H200", "GPU is lost"),
        ]
    )
    assert detect(text) == "smi-list"
    gpus = parse_output(text)["gpus"]
    assert [(g["index"], g["name"], g["uuid"]) for g in gpus] == [
        (0, "NVIDIA H200", None),
        (1, "NVIDIA H200", None),
        (2, None, H200_UUID),
    ]
    (mig,) = gpus[0]["mig_devices"]
    assert (mig["profile"], mig["uuid"], mig["gpu_instance_id"]) == ("3g.71gb", None, None)


# --- looped -q text ----------------------------------------------------------------------------


def test_looped_query_text_reads_the_last_report() -> None:
    """`nvidia-smi -q -l 5 > file`: every 5 s a whole report, banner and timestamp first, one
    after the other; the loop was stopped in the middle of the last one. The newest complete
    report is read."""
    text = fixture_text(H200_TEXT)
    second = text.replace(TEMPERATURE, TEMPERATURE.replace("40 C", "57 C")).replace(
        "22:26:46", "22:26:51"
    )
    stopped = text[: len(text) // 2]
    node = parse_output(text + second + stopped)
    (gpu,) = node["gpus"]
    assert gpu["temperature_c"] == 57.0
    assert gpu["uuid"] == H200_UUID
    assert node["driver_version"] == "580.159.04"
    assert node["warnings"] == [LOOP_WARNING.format(3)]


@pytest.mark.parametrize(
    ("cut", "last"),
    [
        ("    Capabilities\n", True),  # the last section not written yet
        ("    Capabilities\n        EG", True),  # cut in the middle of a label
        (TEMPERATURE.replace("40 C", "57 C") + "\n", False),  # the rest of the GPU block missing
        ("GPU 00000000:00:07.0\n", False),  # cut before the second GPU's block
    ],
)
def test_looped_query_text_never_reads_a_report_cut_off(cut: str, last: bool) -> None:
    """`nvidia-smi -q -l 5 > file` on a two-GPU node, read while the loop was writing its
    second report (or killed then): the first, complete report is read."""
    report = _two_gpu_text(fixture_text(H200_TEXT))
    second = report.replace(TEMPERATURE, TEMPERATURE.replace("40 C", "57 C"))
    position = second.rindex(cut) if last else second.index(cut)
    second = second[: position + len(cut)]
    node = parse_output(report + second)
    assert [g["temperature_c"] for g in node["gpus"]] == [40.0, 40.0]
    assert [g["pci_bus_id"] for g in node["gpus"]] == [H200_BUS, "00000000:00:07.0"]
    assert node["warnings"] == [LOOP_WARNING.format(2)]


def test_looped_query_text_whose_processes_change_reads_the_last_report() -> None:
    """`nvidia-smi -q -l 5`: a job started between two reports, so the last one lists a
    process where the first said "None". The process list is no sign of a report cut off."""
    text = fixture_text(H200_TEXT)
    none = _label_line("Processes", "None")
    process = "\n".join(
        [
            "    Processes",
            _label_line("GPU instance ID", "N/A", 8),
            _label_line("Compute instance ID", "N/A", 8),
            _label_line("Process ID", "48213", 8),
            _label_line("Type", "C", 12),
            _label_line("Name", "python3", 12),
            _label_line("Used GPU Memory", "80510 MiB", 12),
        ]
    )
    second = _replaced(
        text,
        {none: process, TEMPERATURE: TEMPERATURE.replace("40 C", "63 C")},
    )
    node = parse_outputs([("nvidia-smi -q -l 5", text + second)])
    (gpu,) = node["gpus"]
    assert gpu["temperature_c"] == 63.0
    assert LOOP_WARNING.format(2) in node["warnings"]


# --- UTF-16 input ------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_output_with_a_byte_order_mark_is_read(codec: str) -> None:
    """`nvidia-smi -q > file` in Windows PowerShell 5 writes UTF-16 LE with a byte-order mark
    and CRLF line endings (big-endian with its mark for completeness); a UTF-8 mark is read as
    before."""
    bom = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
    for name in (H200_TEXT, H200_CSV):
        text = fixture_text(name)
        data = bom + text.replace("\n", "\r\n").encode(codec)
        assert parse_output(data) == parse_output(text)
        assert detect(data) == detect(text)  # type: ignore[arg-type]
        assert parsers.decode(data).replace("\r\n", "\n") == text
        assert parse_output(codecs.BOM_UTF8 + text.encode())["gpus"] == parse_output(text)["gpus"]
    node = parse_outputs([("nvidia-smi -q", bom + fixture_text(H200_TEXT).encode(codec))])  # type: ignore[list-item]
    assert node["gpus"][0]["uuid"] == H200_UUID


def test_utf16_that_is_not_text_is_still_refused() -> None:
    """A UTF-16 mark before bytes that are no UTF-16 text (an odd count, a lone surrogate), or
    before text holding NUL characters, is binary data; so is UTF-16 without a mark."""
    text = fixture_text(H200_TEXT)
    for data in (
        codecs.BOM_UTF16_LE + text.encode("utf-16-le")[:-1],
        codecs.BOM_UTF16_LE + b"\x00\xd8A\x00",
        codecs.BOM_UTF16_LE + "GPU 0: \x00\x00".encode("utf-16-le"),
        text.encode("utf-16-le"),
    ):
        with pytest.raises(ParseError, match="^binary data"):
            parse_output(data)
    # Within the limit the text is read; over it in bytes, refused before decoding.
    big = codecs.BOM_UTF16_LE + b"x\x00" * (v.MAX_INPUT_BYTES // 2)
    with pytest.raises(ParseError, match=r"too large \(.* MB, limit 64 MB\)"):
        parsers.decode(big)
