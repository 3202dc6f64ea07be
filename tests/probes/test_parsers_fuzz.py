"""Garbage in, ParseError out: random and mutated inputs never raise anything else.

Random text and bytes, the real captures cut, flipped, spliced and with lines dropped, values
replaced by random strings, and random JSON-ish objects as bundles. Plus the inputs an attacker
would send: XML bombs, external entities, oversized and binary input, pathological long lines.
"""

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poc.probes.parsers import (
    KINDS,
    MAX_INPUT_BYTES,
    ParseError,
    detect,
    parse_bundle,
    parse_output,
    parse_outputs,
    smi_xml,
)
from tests.probes.gpu_fixtures import (
    ALL,
    H100_CAPTURE,
    H200_CSV,
    H200_TEXT,
    H200_XML,
    eight_gpu_xml,
    fixture_text,
)
from tests.probes.test_parsers_formats import mig_xml
from tests.probes.test_parsers_public_xml import lost_gpu_xml

FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,  # every run draws afresh; nothing is written to the working tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# The big captures take a few milliseconds each: fewer examples keep the suite quick.
FUZZ_SLOW = settings(FUZZ, max_examples=40)


def only_parse_errors(call: Callable[[], object]) -> None:
    try:
        call()
    except ParseError as exc:
        message = str(exc)
        assert message, "a ParseError must say what is wrong"
        assert "\n" not in message, "a ParseError message is one line"


# --- random input --------------------------------------------------------------------------

# Fragments of the real outputs, so random text reaches past the first check of each parser.
VOCABULARY = [
    '<?xml version="1.0" ?>',
    "<nvidia_smi_log>",
    "</nvidia_smi_log>",
    '<gpu id="00000000:3B:00.0">',
    "</gpu>",
    "<fb_memory_usage><total>",
    "</total></fb_memory_usage>",
    "<mig_devices><mig_device><index>",
    "==============NVSMI LOG==============",
    "GPU 00000000:3B:00.0",
    "    Product Name : ",
    "        Current : ",
    "    MIG Device",
    "GPU 0: NVIDIA H100 (UUID: GPU-1) ",
    "  MIG 1g.10gb Device 0: (UUID: MIG-1)",
    "\t Link 0: ",
    "26.562 GB/s",
    "<inactive>",
    "Replay Errors: ",
    "index, uuid, memory.total [MiB], clocks_event_reasons.active",
    "NVRM: Xid (PCI:0000:3b:00): ",
    "Xid=48 on Device=GPU-",
    '{"DCGM GPU Diagnostic": {"test_categories": [',
    '{"format": "workbench-probe-bundle/1", "outputs": [',
    "$ nvidia-smi -q -x",
    "################################",
    "# idle :: query (-q)",
    "# $ nvidia-smi --query-gpu=index,uuid --format=csv,noheader",
    "[N/A]",
    "N/A",
    "0x233010DE",
    "143771 MiB",
    ", ",
    ": ",
    "\n",
    "\r\n",
    "\t",
    "\x1b[1m",
    "]",
    "}",
    "-1",
    "99999999999999999999999",
    "1e999",
]

structured_text = st.lists(
    st.one_of(st.sampled_from(VOCABULARY), st.text(max_size=12)), max_size=40
).map("".join)


@FUZZ
@given(st.text(max_size=2000))
def test_random_text(text: str) -> None:
    only_parse_errors(lambda: parse_output(text))


@FUZZ
@given(st.binary(max_size=2000))
def test_random_bytes(data: bytes) -> None:
    only_parse_errors(lambda: parse_output(data))


@FUZZ
@given(structured_text, st.sampled_from([None, *KINDS]))
def test_random_text_made_of_real_fragments(text: str, kind: str | None) -> None:
    only_parse_errors(lambda: parse_output(text, kind=kind))
    only_parse_errors(lambda: detect(text))


@FUZZ
@given(st.lists(st.tuples(st.text(max_size=40), structured_text), max_size=5))
def test_random_output_pairs(pairs: list[tuple[str, str]]) -> None:
    only_parse_errors(lambda: parse_outputs(pairs))


# --- mutated fixtures ------------------------------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        operation = draw(
            st.sampled_from(["truncate", "flip", "insert", "drop", "duplicate", "splice"])
        )
        if operation == "truncate":
            text = text[:at]
        elif operation == "flip":
            text = text[:at] + draw(st.characters()) + text[at + 1 :]
        elif operation == "insert":
            text = text[:at] + draw(st.one_of(st.sampled_from(VOCABULARY), st.text())) + text[at:]
        elif operation in ("drop", "duplicate"):
            lines = text.split("\n")
            line = draw(st.integers(0, len(lines) - 1))
            count = draw(st.integers(1, 20))
            if operation == "drop":
                del lines[line : line + count]
            else:
                lines[line:line] = lines[line : line + count]
            text = "\n".join(lines)
        else:
            other = draw(st.integers(0, len(text) - 1))
            text = text[: min(at, other)] + text[max(at, other) :]
    return text


SMALL = [name for name in ALL if name != H100_CAPTURE and "public/" not in name]
CAPTURES = [name for name in ALL if "public/" in name]


@pytest.mark.parametrize("relative", SMALL)
@FUZZ
@given(data=st.data())
def test_mutated_fixtures(relative: str, data: st.DataObject) -> None:
    original = fixture_text(relative)
    kind = detect(original)
    text = data.draw(mutated(original))
    only_parse_errors(lambda: parse_output(text))
    only_parse_errors(lambda: parse_output(text, kind=kind))


@pytest.mark.parametrize("relative", CAPTURES)
@FUZZ_SLOW
@given(data=st.data())
def test_mutated_captures(relative: str, data: st.DataObject) -> None:
    text = data.draw(mutated(fixture_text(relative)))
    only_parse_errors(lambda: parse_output(text))


_XML_VALUE = re.compile(r">([^<>\n]+)<")
_TEXT_VALUE = re.compile(r": (.+)$", re.MULTILINE)


@FUZZ
@given(data=st.data())
def test_fixtures_with_random_values(data: st.DataObject) -> None:
    """Every value replaced at random: the conversions must refuse quietly, not raise."""
    values = st.one_of(st.sampled_from(VOCABULARY), st.text(max_size=20))

    def xml_value(match: re.Match[str]) -> str:
        value = data.draw(values).replace("<", "").replace("&", "")
        return f">{value}<"

    def text_value(match: re.Match[str]) -> str:
        return ": " + data.draw(values).replace("\n", " ")

    xml = _XML_VALUE.sub(xml_value, fixture_text(H200_XML), count=60)
    only_parse_errors(lambda: parse_output(xml))
    text = _TEXT_VALUE.sub(text_value, fixture_text(H200_TEXT), count=60)
    only_parse_errors(lambda: parse_output(text))
    header, row = fixture_text(H200_CSV).splitlines()
    cells = [data.draw(values).replace(",", "").replace("\n", "") for _ in header.split(",")]
    only_parse_errors(lambda: parse_output(header + "\n" + ", ".join(cells) + "\n"))


# --- bundles ---------------------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
        st.sampled_from(VOCABULARY),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from(
                    [
                        "format",
                        "host",
                        "outputs",
                        "name",
                        "stdout",
                        "stderr",
                        "exit_code",
                        "benchmarks",
                        "expected_gpus",
                        "matmul_tflops",
                        "gpu_index",
                    ]
                ),
                st.text(max_size=10),
            ),
            children,
            max_size=5,
        ),
    ),
    max_leaves=30,
)


def valid_bundle() -> dict[str, Any]:
    return {
        "format": "workbench-probe-bundle/1",
        "host": "node",
        "expected_gpus": 1,
        "outputs": [
            {"name": "nvidia-smi --query-gpu", "exit_code": 0, "stdout": fixture_text(H200_CSV)},
            {"name": "kernel log", "exit_code": 0, "stdout": "NVRM: Xid (PCI:0000:00:06): 79"},
        ],
        "benchmarks": [{"gpu_index": 0, "matmul_tflops": {"bf16": 700.0}}],
    }


@FUZZ
@given(json_values)
def test_random_objects_as_bundles(value: object) -> None:
    only_parse_errors(lambda: parse_bundle(value))
    if isinstance(value, dict):
        value = {**value, "format": "workbench-probe-bundle/1"}
        only_parse_errors(lambda: parse_bundle(value))


@FUZZ
@given(
    st.sampled_from(
        [
            ("host",),
            ("expected_gpus",),
            ("outputs",),
            ("outputs", 0),
            ("outputs", 0, "stdout"),
            ("outputs", 1, "exit_code"),
            ("outputs", 1, "name"),
            ("benchmarks",),
            ("benchmarks", 0),
            ("benchmarks", 0, "gpu_index"),
            ("benchmarks", 0, "matmul_tflops"),
            ("benchmarks", 0, "matmul_tflops", "bf16"),
        ]
    ),
    json_values,
)
def test_valid_bundle_with_one_value_replaced(path: tuple[Any, ...], value: object) -> None:
    document = valid_bundle()
    holder: Any = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    only_parse_errors(lambda: parse_bundle(document))
    text = json.dumps(document)
    only_parse_errors(lambda: parse_output(text))


# --- explicit bad input --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bf16\nfp8", "bf16\r", "\x1b[31mbf16", ""])
def test_a_data_type_name_that_is_no_printable_word_is_refused_in_one_line(name: str) -> None:
    document = valid_bundle()
    document["benchmarks"][0]["matmul_tflops"] = {name: "fast"}
    with pytest.raises(ParseError) as caught:
        parse_bundle(document)
    assert str(caught.value).endswith("has a bad data type name")
    assert "\n" not in str(caught.value) and "\r" not in str(caught.value)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<nvidia_smi_log><driver_version>&lol9;</driver_version></nvidia_smi_log>
"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<nvidia_smi_log><driver_version>&secret;</driver_version></nvidia_smi_log>
"""

PARAMETER_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [<!ENTITY % remote SYSTEM "http://example.invalid/x.dtd"> %remote;]>
<nvidia_smi_log/>
"""


def quickly(call: Callable[[], object], seconds: float = 1.0) -> ParseError:
    started = time.perf_counter()
    with pytest.raises(ParseError) as caught:
        call()
    assert time.perf_counter() - started < seconds
    return caught.value


def test_xml_bomb_is_refused_before_expanding() -> None:
    error = quickly(lambda: parse_output(BILLION_LAUGHS))
    assert "refused XML" in str(error)
    quickly(lambda: parse_output(BILLION_LAUGHS.encode(), kind="smi-xml"))


def test_external_entities_are_refused() -> None:
    assert "refused XML" in str(quickly(lambda: parse_output(EXTERNAL_ENTITY)))
    assert "refused XML" in str(quickly(lambda: parse_output(PARAMETER_ENTITY)))


def test_the_document_type_line_nvidia_smi_writes_is_accepted() -> None:
    text = fixture_text(H200_XML)
    assert '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">' in text
    assert parse_output(text)["driver_version"] == "580.159.04"


def test_truncated_xml() -> None:
    text = fixture_text(H200_XML)
    with pytest.raises(ParseError, match="not well-formed XML"):
        parse_output(text[: len(text) // 2])
    with pytest.raises(ParseError, match="not well-formed XML"):
        parse_output(text[: len(text) // 2], kind="smi-xml")


def test_other_xml_is_not_nvidia_smi() -> None:
    with pytest.raises(ParseError, match="XML root element is <svg>"):
        parse_output("<svg><nvidia_smi_log/></svg>", kind="smi-xml")


# --- -q -x: the elements no fact reads are cut out before parsing (smi_xml._read_tree) ---------


def smi_xml_outcome(text: str) -> object:
    """The facts of a -q -x output, or the message of the ParseError it gets."""
    try:
        return parse_output(text, kind="smi-xml")
    except ParseError as exc:
        return str(exc)


def whole_tree_outcome(text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """The same with nothing cut out: the whole text parsed, as before the cut existed."""
    with monkeypatch.context() as patch:
        patch.setattr(smi_xml, "_read_tree", smi_xml._parse_tree)
        return smi_xml_outcome(text)


def parsed_texts(text: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts expat was given while reading `text`."""
    parsed: list[str] = []
    parse = smi_xml._parse_tree

    def spy(what: str) -> Any:
        parsed.append(what)
        return parse(what)

    with monkeypatch.context() as patch:
        patch.setattr(smi_xml, "_parse_tree", spy)
        smi_xml_outcome(text)
    return parsed


def tabbed_mig_xml() -> str:
    """The two MIG-enabled H100s of test_parsers_formats, indented with tabs as nvidia-smi
    writes them and with an element no fact reads (the MIG devices stay whole: _gpu reads
    them as a block)."""
    tabbed = mig_xml().replace("    ", "\t")
    return tabbed.replace(
        "\t\t<persistence_mode>",
        "\t\t<display_mode>Disabled</display_mode>\n\t\t<persistence_mode>",
    )


@pytest.mark.parametrize(
    "document",
    [lambda: fixture_text(H200_XML), eight_gpu_xml, lost_gpu_xml, tabbed_mig_xml],
    ids=["h200", "eight-gpus", "lost-gpu", "mig"],
)
def test_what_no_fact_reads_is_cut_and_every_fact_stays(
    document: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = document()
    assert smi_xml_outcome(text) == whole_tree_outcome(text, monkeypatch)
    (parsed,) = parsed_texts(text, monkeypatch)  # one parse, of the text with rows cut out
    assert smi_xml._GPU_MARK in parsed and "<display_mode>" not in parsed


H200_SERIAL_LINE = "\n\t\t<serial>1653724066869</serial>"
VOLATILE_END = "\t\t\t\t<dram_uncorrectable>0</dram_uncorrectable>\n\t\t\t</volatile>"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A read child written as if it were a <gpu>'s own, inside its block.
        ("\n\t\t\t<gpu_temp>41 C</gpu_temp>", "\n\t\t<gpu_temp>41 C</gpu_temp>"),
        # A child of a read block, of a name cut there, inside the ECC counters (all counted).
        (
            VOLATILE_END,
            VOLATILE_END.replace(
                "\n\t\t\t</volatile>",
                "\n\t\t\t<aggregate_uncorrectable_sram_sources>7"
                "</aggregate_uncorrectable_sram_sources>\n\t\t\t</volatile>",
            ),
        ),
        # What reads like unread elements inside a comment and a CDATA section.
        (H200_SERIAL_LINE, "\n\t\t<!--\n\t\t<x>1</x>\n\t\t-->" + H200_SERIAL_LINE),
        (H200_SERIAL_LINE, "\n\t\t<x><![CDATA[\n\t\t<y>1</y>]]></x>" + H200_SERIAL_LINE),
        # Elements indented as a <gpu>'s children outside any <gpu>.
        ("<attached_gpus>", "<unit>\n\t\t<x>1</x>\n\t</unit>\n\t<attached_gpus>"),
        # A <gpu> inside a <gpu>, and an element with an attribute.
        (H200_SERIAL_LINE, "\n\t\t<gpu>\n\t\t<x>1</x>\n\t\t</gpu>" + H200_SERIAL_LINE),
        (H200_SERIAL_LINE, '\n\t\t<x a="1">1</x>' + H200_SERIAL_LINE),
    ],
    ids=[
        "misindented-read",
        "in-ecc-counters",
        "comment",
        "cdata",
        "outside-gpu",
        "nested",
        "attr",
    ],
)
def test_layouts_no_nvidia_smi_writes_read_as_the_whole_tree_does(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = fixture_text(H200_XML)
    assert old in text
    text = text.replace(old, new, 1)
    facts = smi_xml_outcome(text)
    assert isinstance(facts, dict)
    assert facts == whole_tree_outcome(text, monkeypatch)
    if "gpu_temp" in new or "sram_sources>7" in new:
        # A cut there would change a fact: the marks say so, and the whole text is parsed.
        assert len(parsed_texts(text, monkeypatch)) == 2
        assert facts["gpus"][0]["temperature_c"] == 41
        assert facts["gpus"][0]["ecc_volatile_uncorrected"] == (7 if "sram" in new else 0)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("<product_brand>NVIDIA</product_brand>", "<product_brand>NV&IDIA</product_brand>"),
        ("<product_brand>NVIDIA</product_brand>", "<product_brand>&nbsp;</product_brand>"),
        ("<product_brand>NVIDIA</product_brand>", "<product_brand>NV]]>IDIA</product_brand>"),
        ("<product_brand>NVIDIA</product_brand>", "<product_brand>NVIDIA</product_brnad>"),
        ("<tx_util>817 KB/s</tx_util>", "<tx_util>817 KB/s\x01</tx_util>"),
        ("<slot_number>N/A</slot_number>", "<slot_number>N/A</slot_number></platformInfo>"),
        ("</nvidia_smi_log>", ""),
    ],
)
def test_errors_in_elements_no_fact_reads_are_reported_as_before(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = fixture_text(H200_XML)
    assert old in text
    text = text.replace(old, new, 1)
    error = smi_xml_outcome(text)
    assert isinstance(error, str) and error.startswith("not well-formed XML: ")
    assert error == whole_tree_outcome(text, monkeypatch)


def test_a_bomb_set_off_from_an_element_no_fact_reads_is_refused() -> None:
    document = fixture_text(H200_XML).replace(
        "<product_brand>NVIDIA</product_brand>", "<product_brand>&lol9;</product_brand>"
    )
    dtd = BILLION_LAUGHS[: BILLION_LAUGHS.index("<nvidia_smi_log>")]
    document = dtd + document[document.index("<nvidia_smi_log>") :]
    assert "refused XML" in str(quickly(lambda: parse_output(document)))


def test_binary_data() -> None:
    with pytest.raises(ParseError, match="^binary data"):
        parse_output(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    with pytest.raises(ParseError, match="^binary data"):
        parse_output(b"GPU 0: \x00\x00\x00")
    with pytest.raises(ParseError, match="^binary data"):
        parse_output("text with a lone surrogate \ud800")


def test_oversized_input_is_refused_quickly_naming_the_limit() -> None:
    text = "x" * (65 * 1024 * 1024)
    error = quickly(lambda: parse_output(text), seconds=0.5)
    assert "limit 64 MB)" in str(error)
    data = b"x" * (MAX_INPUT_BYTES + 1)
    assert "limit 64 MB)" in str(quickly(lambda: parse_output(data), seconds=0.5))
    # Within the character limit but over it in UTF-8 bytes.
    wide = "é" * (MAX_INPUT_BYTES // 2 + 1)
    assert "limit 64 MB)" in str(quickly(lambda: parse_output(wide)))


@pytest.mark.parametrize("empty", ["", "   ", "\n\n\t\n", b"", b" \r\n"])
def test_empty_input(empty: str | bytes) -> None:
    with pytest.raises(ParseError, match="^empty input$"):
        parse_output(empty)
    with pytest.raises(ParseError):
        parse_output(empty, kind="smi-xml")


def test_csv_with_crlf_and_a_short_row_names_the_line() -> None:
    text = "index, uuid\r\n0, GPU-a\r\n1\r\n"
    with pytest.raises(ParseError, match="^line 3: 1 values for 2 columns$"):
        parse_output(text)


def test_deeply_nested_json() -> None:
    quickly(lambda: parse_output("{" + '"a":[' * 100_000 + "]" * 100_000 + "}", kind="bundle"))
    quickly(lambda: parse_output('{"DCGM GPU Diagnostic":' + "[" * 100_000))


@pytest.mark.parametrize(
    "text",
    [
        "GPU 0: " + " " * 200_000 + "x",
        "GPU 0: A (UUID: GPU-1)\n\t Link 0: " + "9" * 200_000,
        "GPU 0: A (UUID: GPU-1)\n\t Link 0: " + "a " * 100_000 + ": 1",
        "NVRM: Xid (PCI:0000:3b:00): 79, " + " " * 200_000,
        "Dec  1 " * 50_000 + "NVRM: Xid (PCI:0000:3b:00): 79",
        "index, " + "memory.total " * 50_000 + "\n",
        "GPU 00000000:3B:00.0\n" + "".join(" " * n + "Level :\n" for n in range(2000)),
        "Timestamp " + " " * 200_000 + ":x",
    ],
)
def test_pathological_long_lines_stay_fast(text: str) -> None:
    started = time.perf_counter()
    only_parse_errors(lambda: parse_output(text))
    assert time.perf_counter() - started < 2.0
