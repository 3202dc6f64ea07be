"""The XLSX writer: what it writes reads back the same in a spreadsheet library (values, types,
styles, widths, the frozen filtered header), text a spreadsheet cannot carry is made safe, and
the same table dated the same gives the same bytes."""

import io
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from openpyxl import load_workbook

from workbench import xlsx

WHEN = datetime(2026, 12, 5, 9, 30, 0, tzinfo=UTC)


def _read(data: bytes):  # type: ignore[no-untyped-def]
    return load_workbook(io.BytesIO(data)).active


def test_values_read_back_with_their_types() -> None:
    data = xlsx.workbook(
        [
            ["name", "days", "share", "ok", "empty"],
            ["训练作业 ✓", 3, Decimal("3.50"), True, None],
            ["  padded  ", 2.25, Decimal("-0.001"), False, ""],
        ],
        "Results",
        created=WHEN,
    )
    sheet = _read(data)
    assert sheet.title == "Results"
    assert [c.value for c in sheet[2]] == ["训练作业 ✓", 3, 3.5, True, None]
    assert [c.value for c in sheet[3]] == ["  padded  ", 2.25, -0.001, False, None]
    assert sheet.max_row == 3 and sheet.max_column == 5


def test_styles_widths_and_the_header() -> None:
    data = xlsx.workbook(
        [
            [xlsx.Styled("Question", 1), xlsx.Styled("Volcano", 1)],
            ["Can a quota be hit?", xlsx.Styled("passed", 2)],
            ["Does it recover?", xlsx.Styled("failed", 3)],
        ],
        "Matrix",
        created=WHEN,
        styles=[xlsx.Style(bold=True), xlsx.Style(fill="D7F0DE"), xlsx.Style(fill="f8d7d3")],
        widths=[24, 10],
    )
    sheet = _read(data)
    assert sheet["A1"].font.bold and not sheet["A2"].font.bold
    assert sheet["B2"].fill.fgColor.rgb.endswith("D7F0DE")
    assert sheet["B3"].fill.fgColor.rgb.endswith("F8D7D3")
    assert sheet["A2"].fill.fill_type is None
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref == "A1:B3"
    assert sheet.column_dimensions["A"].width == 24 and sheet.column_dimensions["B"].width == 10


def test_unsafe_text_and_titles_are_made_safe() -> None:
    data = xlsx.workbook(
        [['a <b> & "c"', "bell\x07ring", "x" * 40000]], "Q3: [draft]/v2?", created=WHEN
    )
    sheet = _read(data)
    assert sheet["A1"].value == 'a <b> & "c"'
    assert sheet["B1"].value == "bell\ufffdring"
    assert len(sheet["C1"].value) == xlsx.MAX_TEXT
    assert sheet.title == "Q3_ _draft__v2_"


@pytest.mark.parametrize(("index", "letter"), [(1, "A"), (26, "Z"), (27, "AA"), (703, "AAA")])
def test_column_letters(index: int, letter: str) -> None:
    assert xlsx.column_letter(index) == letter


def test_the_same_table_gives_the_same_bytes_dated_as_told() -> None:
    rows = [["a", 1], ["b", 2]]
    first = xlsx.workbook(rows, "T", created=WHEN)
    assert first == xlsx.workbook(rows, "T", created=WHEN)
    assert first != xlsx.workbook(rows, "T", created=datetime(2027, 1, 1, tzinfo=UTC))
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        assert {i.date_time for i in archive.infolist()} == {(2026, 12, 5, 9, 30, 0)}
        core = archive.read("docProps/core.xml").decode()
    assert '<dcterms:modified xsi:type="dcterms:W3CDTF">2026-12-05T09:30:00Z' in core
    book = load_workbook(io.BytesIO(first))
    assert book.properties.created == WHEN.replace(tzinfo=None)
    # An aware time elsewhere is written as the same moment in UTC.
    beijing = WHEN.astimezone(timezone(timedelta(hours=8)))
    assert xlsx.workbook(rows, "T", created=beijing) == first


def test_an_empty_table_is_still_a_workbook() -> None:
    sheet = _read(xlsx.workbook([], "Empty", created=WHEN))
    assert sheet.max_row == 1 and sheet["A1"].value is None
