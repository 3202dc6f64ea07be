"""A one-sheet XLSX workbook written straight as Office Open XML: text, numbers and booleans,
a bold or filled style per cell, column widths, a frozen header row with filters.

The sheets this product writes are large and plain (a revision's full record is 10,000 rows
and more), and a general spreadsheet library spends most of its time on a cell object per
value. Here a row is one string: the 10,000-row record takes a tenth of the time
(docs/performance.md). Text is written inline (no shared-strings table), which every
spreadsheet reads. The bytes depend on the content and `created` only, so the same table
gives the same file.
"""

import io
import math
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from xml.sax.saxutils import escape

MAX_TEXT = 32767  # what a cell holds; longer text is cut, as spreadsheets do
MAX_TITLE = 31
# Characters XML 1.0 cannot carry; a spreadsheet would refuse the file. Shown as U+FFFD.
ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
TITLE_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships"
HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


@dataclass(frozen=True)
class Style:
    bold: bool = False
    fill: str = ""  # RGB, six hex digits


@dataclass(frozen=True)
class Styled:
    """A value written with `styles[style]` of the workbook (index 0 is the plain style)."""

    value: object
    style: int


def column_letter(index: int) -> str:
    """1 -> A, 27 -> AA."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _text(value: str) -> str:
    return escape(ILLEGAL.sub("\ufffd", value[:MAX_TEXT]))


def _cell(reference: str, value: object, style: int) -> str:
    s = f' s="{style}"' if style else ""
    if value is None or value == "":
        return f'<c r="{reference}"{s}/>' if style else ""
    if isinstance(value, bool):
        return f'<c r="{reference}"{s} t="b"><v>{int(value)}</v></c>'
    if isinstance(value, int | Decimal) or (isinstance(value, float) and math.isfinite(value)):
        number = f"{value:f}" if isinstance(value, Decimal) else repr(value)
        return f'<c r="{reference}"{s}><v>{number}</v></c>'
    text = _text(str(value))
    space = ' xml:space="preserve"' if text != text.strip() else ""
    return f'<c r="{reference}"{s} t="inlineStr"><is><t{space}>{text}</t></is></c>'


def _sheet(
    rows: Iterable[Sequence[object]],
    widths: Sequence[float],
    freeze_header: bool,
    filter_header: bool,
) -> tuple[str, int, int]:
    letters: list[str] = []
    parts: list[str] = []
    count = columns = 0
    for count, row in enumerate(rows, start=1):  # noqa: B007 (count is read after the loop)
        while len(letters) < len(row):
            letters.append(column_letter(len(letters) + 1))
        columns = max(columns, len(row))
        cells = []
        for letter, value in zip(letters, row, strict=False):
            if isinstance(value, str):  # most cells: written here, without a call per cell
                if value:
                    text = escape(ILLEGAL.sub("\ufffd", value[:MAX_TEXT]))
                    space = ' xml:space="preserve"' if text != text.strip() else ""
                    cells.append(
                        f'<c r="{letter}{count}" t="inlineStr"><is><t{space}>{text}</t></is></c>'
                    )
            elif isinstance(value, Styled):
                cells.append(_cell(f"{letter}{count}", value.value, value.style))
            else:
                cells.append(_cell(f"{letter}{count}", value, 0))
        parts.append(f'<row r="{count}">{"".join(cells)}</row>')
    last = f"{column_letter(max(columns, 1))}{max(count, 1)}"
    view = (
        '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
        '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/>'
        if freeze_header and count
        else ""
    )
    cols = "".join(
        f'<col min="{i}" max="{i}" width="{width:g}" customWidth="1"/>'
        for i, width in enumerate(widths, start=1)
    )
    xml = (
        f'{HEAD}<worksheet xmlns="{MAIN}" xmlns:r="{RELATIONSHIPS}">'
        f'<dimension ref="A1:{last}"/>'
        f'<sheetViews><sheetView workbookViewId="0">{view}</sheetView></sheetViews>'
        '<sheetFormatPr defaultRowHeight="15"/>'
        + (f"<cols>{cols}</cols>" if cols else "")
        + f"<sheetData>{''.join(parts)}</sheetData>"
        + (f'<autoFilter ref="A1:{last}"/>' if filter_header and count else "")
        + '<pageMargins left="0.75" right="0.75" top="1" bottom="1" header="0.5" footer="0.5"/>'
        "</worksheet>"
    )
    return xml, count, columns


def _styles(styles: Sequence[Style]) -> str:
    fills = sorted({s.fill.upper() for s in styles if s.fill})
    fill_xml = "".join(
        f'<fill><patternFill patternType="solid"><fgColor rgb="FF{rgb}"/>'
        f'<bgColor indexed="64"/></patternFill></fill>'
        for rgb in fills
    )
    xfs = "".join(
        '<xf numFmtId="0" fontId="{font}" fillId="{fill}" borderId="0" xfId="0"{apply}/>'.format(
            font=int(s.bold),
            fill=fills.index(s.fill.upper()) + 2 if s.fill else 0,
            apply=(' applyFont="1"' if s.bold else "") + (' applyFill="1"' if s.fill else ""),
        )
        for s in [Style(), *styles]
    )
    font = '<sz val="11"/><name val="Calibri"/><family val="2"/>'
    return (
        f'{HEAD}<styleSheet xmlns="{MAIN}">'
        f'<fonts count="2"><font>{font}</font><font><b/>{font}</font></fonts>'
        f'<fills count="{len(fills) + 2}"><fill><patternFill patternType="none"/></fill>'
        f'<fill><patternFill patternType="gray125"/></fill>{fill_xml}</fills>'
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
        f'</cellStyleXfs><cellXfs count="{len(styles) + 1}">{xfs}</cellXfs>'
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
        "</styleSheet>"
    )


def _title(title: str) -> str:
    return TITLE_FORBIDDEN.sub("_", ILLEGAL.sub("", title)).strip("'")[:MAX_TITLE] or "Sheet1"


def workbook(
    rows: Iterable[Sequence[object]],
    title: str,
    *,
    created: datetime,
    styles: Sequence[Style] = (),
    widths: Sequence[float] = (),
    freeze_header: bool = True,
    filter_header: bool = True,
) -> bytes:
    """The workbook's bytes. A value may be `Styled(value, n)`, written with `styles[n - 1]`
    (0 is the plain style); None and "" leave the cell empty. `widths`: the columns' widths,
    in characters, from the first. `created`: when the file says it was made (naive: UTC)."""
    sheet, _count, _columns = _sheet(rows, widths, freeze_header, filter_header)
    if created.tzinfo is not None:  # the file's dates are UTC
        created = created.astimezone(UTC).replace(tzinfo=None)
    stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    files = {
        "[Content_Types].xml": (
            f'{HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" '
            'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            '<Override PartName="/xl/styles.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
            '<Override PartName="/docProps/core.xml" '
            'ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
            '<Override PartName="/docProps/app.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.extended-properties+xml"/>'
            "</Types>"
        ),
        "_rels/.rels": (
            f'{HEAD}<Relationships xmlns="{PACKAGE_RELATIONSHIPS}">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/'
            'relationships/metadata/core-properties" Target="docProps/core.xml"/>'
            '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/extended-properties" Target="docProps/app.xml"/>'
            "</Relationships>"
        ),
        "docProps/core.xml": (
            f"{HEAD}<cp:coreProperties "
            'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" '
            'xmlns:dcterms="http://purl.org/dc/terms/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
            f"<dc:title>{_text(title)}</dc:title>"
            f'<dcterms:created xsi:type="dcterms:W3CDTF">{stamp}</dcterms:created>'
            f'<dcterms:modified xsi:type="dcterms:W3CDTF">{stamp}</dcterms:modified>'
            "</cp:coreProperties>"
        ),
        "docProps/app.xml": (
            f"{HEAD}<Properties xmlns="
            '"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
            "<Application>GPU Selection Workbench</Application></Properties>"
        ),
        "xl/workbook.xml": (
            f'{HEAD}<workbook xmlns="{MAIN}" xmlns:r="{RELATIONSHIPS}">'
            f'<sheets><sheet name="{escape(_title(title), {chr(34): "&quot;"})}" sheetId="1" '
            'r:id="rId1"/></sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            f'{HEAD}<Relationships xmlns="{PACKAGE_RELATIONSHIPS}">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/styles" Target="styles.xml"/>'
            "</Relationships>"
        ),
        "xl/styles.xml": _styles(styles),
        "xl/worksheets/sheet1.xml": sheet,
    }
    date_time = (
        max(created.year, 1980),
        created.month,
        created.day,
        created.hour,
        created.minute,
        created.second,
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            entry = zipfile.ZipInfo(name, date_time=date_time)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o600 << 16
            archive.writestr(entry, text.encode(), compresslevel=6)
    return out.getvalue()
