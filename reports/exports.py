"""Matrix, comparison and responsibility tables as CSV and XLSX for procurement spreadsheets.

Every table is read from a sheet snapshot: a revision's frozen one (the numbers it was signed
with), or one built now for the current data. Both go through the same code as the PDF's
content, so the spreadsheet and the sheet cannot disagree.
"""

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext_lazy as _
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

from evaluations.models import Tier
from poc import selectors as poc_selectors
from poc.models import (
    Outcome,
)
from workbench.spreadsheets import formula_safe

TABLES = ("matrix", "comparison", "responsibilities")
TABLE_LABELS = {
    "matrix": _("Results matrix"),
    "comparison": _("Comparison"),
    "responsibilities": _("Responsibilities"),
}
OUTCOME_ORDER = tuple(o.value for o in poc_selectors.OUTCOME_ORDER)  # the matrix's order
# Fill colours of outcome cells in XLSX, matching the pages' outcome colours.
OUTCOME_FILLS = {
    "passed": "D7F0DE",
    "failed": "F8D7D3",
    "not_covered": "E8E8E8",
    "needs_integration": "E6DDF5",
}


@dataclass(frozen=True)
class OutcomeCell:
    """An outcome in a table: written as its label, coloured in XLSX."""

    code: str

    def __str__(self) -> str:
        try:
            return str(Outcome(self.code).label)
        except ValueError:
            return self.code


def _tier_label(code: str) -> str:
    try:
        return str(Tier(code).label)
    except ValueError:
        return code


def table_rows(snapshot: dict[str, Any], table: str) -> list[list[object]]:
    """The table with a header row, in the active language: headers and choice labels
    translated; texts the snapshot froze (questions, requirements, scenarios) as frozen."""
    if table == "matrix":
        matrix = snapshot["matrix"]
        names = matrix.get("column_names") or matrix["columns"]
        rows: list[list[object]] = [
            [
                str(_("Acceptance action")),
                str(_("Key")),
                str(_("Requirement")),
                str(_("Scenario")),
                *names,
            ]
        ]
        for action, outcomes in zip(matrix["actions"], matrix["rows"], strict=True):
            rows.append(
                [
                    action.get("question") or action["key"],
                    action["key"],
                    action["requirement"],
                    action["scenario"],
                    *(OutcomeCell(o) for o in outcomes),
                ]
            )
        return rows
    if table == "comparison":
        tiers = {c["slug"]: c["tier"] for c in snapshot["shortlist"]}
        rows = [
            [
                str(_("Candidate")),
                str(_("Tier")),
                *(str(Outcome(o).label) for o in OUTCOME_ORDER),
                str(_("Integration effort (person-days)")),
                str(_("Responsibility gaps")),
            ]
        ]
        for c in snapshot["candidates"]:
            rows.append(
                [
                    f"{c['solution']} {c['version']}".strip(),
                    _tier_label(tiers.get(c["slug"], "")),
                    *(c["counts"][o] for o in OUTCOME_ORDER),
                    float(c["integration_total_days"]),
                    len(c["gaps"]),
                ]
            )
        return rows
    yes, no = str(_("yes")), str(_("no"))
    rows = [
        [
            str(_("Candidate")),
            str(_("Area")),
            str(_("Party")),
            str(_("Named person")),
            str(_("Escalation")),
            str(_("Assigned")),
        ]
    ]
    for c in snapshot["candidates"]:
        name = f"{c['solution']} {c['version']}".strip()
        for r in c["responsibilities"]:
            rows.append([name, r["area"], r["party"], r["person"], r["escalation"], yes])
        for gap in c["gaps"]:
            rows.append([name, gap, "", "", "", no])
    return rows


def to_csv(rows: list[list[object]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([[_plain(v) for v in row] for row in rows])
    return ("\ufeff" + buffer.getvalue()).encode()  # a BOM so spreadsheets read UTF-8


def to_xlsx(rows: list[list[object]], title: str, *, created: datetime | None = None) -> bytes:
    """A sheet a procurement team can work in: bold frozen header row with filters, columns
    as wide as their content (within reason), outcome cells coloured. `created`: the date the
    file says it was made and last changed (now, if not given).

    Written in openpyxl's write-only mode, row by row, without a cell object per value kept
    in memory: a sheet's full record (10,000 rows and more) takes a fraction of the time
    (docs/performance.md). Widths are measured in a first pass, since columns are declared
    before the rows."""
    plain = [[_plain(v) for v in row] for row in rows]
    widths: dict[int, int] = {}
    for row in plain:
        for index, value in enumerate(row, start=1):
            text = str(value)
            # CJK characters take about two columns.
            width = (
                len(text) if text.isascii() else sum(2 if ord(ch) > 0x2E80 else 1 for ch in text)
            )
            if width > widths.get(index, 0):
                widths[index] = width
    book = Workbook(write_only=True)
    if created is not None:
        book.properties.created = book.properties.modified = created
    sheet = book.create_sheet(title[:31])
    for index, width in widths.items():
        sheet.column_dimensions[get_column_letter(index)].width = min(max(width + 2, 8), 60)
    if rows:
        sheet.freeze_panes = "A2"
        sheet.auto_filter.ref = f"A1:{get_column_letter(len(rows[0]))}{len(rows)}"
    fills = {code: PatternFill("solid", fgColor=colour) for code, colour in OUTCOME_FILLS.items()}
    bold = Font(bold=True)
    for number, (row, values) in enumerate(zip(rows, plain, strict=True)):
        if number == 0:
            sheet.append([_styled(sheet, value, font=bold) for value in values])
            continue
        sheet.append(
            [
                _styled(sheet, shown, fill=fills[value.code])
                if isinstance(value, OutcomeCell) and value.code in fills
                else shown
                for value, shown in zip(row, values, strict=True)
            ]
        )
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _styled(sheet: Any, value: object, **style: object) -> WriteOnlyCell:
    cell = WriteOnlyCell(sheet, value=value)
    for name, given in style.items():
        setattr(cell, name, given)
    return cell


def _plain(value: object) -> object:
    """What a cell holds: an outcome as its label, text a spreadsheet would run as a formula
    kept as text."""
    if isinstance(value, OutcomeCell):
        return str(value)
    return formula_safe(value)
