"""Matrix, comparison and responsibility tables as CSV and XLSX for procurement spreadsheets.

Every table is read from a sheet snapshot: a revision's frozen one (the numbers it was signed
with), or one built now for the current data. Both go through the same code as the PDF's
content, so the spreadsheet and the sheet cannot disagree.
"""

import csv
import io
from typing import Any

from django.utils.translation import gettext_lazy as _
from openpyxl import Workbook
from openpyxl.styles import Font

from workbench.spreadsheets import formula_safe

TABLES = ("matrix", "comparison", "responsibilities")
TABLE_LABELS = {
    "matrix": _("Results matrix"),
    "comparison": _("Comparison"),
    "responsibilities": _("Responsibilities"),
}
OUTCOME_ORDER = ("passed", "failed", "not_covered", "needs_integration")


def table_rows(snapshot: dict[str, Any], table: str) -> list[list[object]]:
    if table == "matrix":
        matrix = snapshot["matrix"]
        rows: list[list[object]] = [["action", "requirement", "scenario", *matrix["columns"]]]
        for action, outcomes in zip(matrix["actions"], matrix["rows"], strict=True):
            rows.append([action["key"], action["requirement"], action["scenario"], *outcomes])
        return rows
    if table == "comparison":
        tiers = {c["slug"]: c["tier"] for c in snapshot["shortlist"]}
        rows = [
            [
                "candidate",
                "tier",
                *OUTCOME_ORDER,
                "integration_effort_days",
                "responsibility_gaps",
            ]
        ]
        for c in snapshot["candidates"]:
            rows.append(
                [
                    c["slug"],
                    tiers.get(c["slug"], ""),
                    *(c["counts"][o] for o in OUTCOME_ORDER),
                    float(c["integration_total_days"]),
                    len(c["gaps"]),
                ]
            )
        return rows
    rows = [["candidate", "area", "party", "person", "escalation", "assigned"]]
    for c in snapshot["candidates"]:
        for r in c["responsibilities"]:
            rows.append([c["slug"], r["area"], r["party"], r["person"], r["escalation"], "yes"])
        for gap in c["gaps"]:
            rows.append([c["slug"], gap, "", "", "", "no"])
    return rows


def to_csv(rows: list[list[object]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([[_safe(v) for v in row] for row in rows])
    return ("\ufeff" + buffer.getvalue()).encode()  # a BOM so spreadsheets read UTF-8


def to_xlsx(rows: list[list[object]], title: str) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = title[:31]
    for row in rows:
        sheet.append([_safe(v) for v in row])
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


_safe = formula_safe  # text that a spreadsheet would run as a formula is kept as text
