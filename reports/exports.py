"""Matrix, comparison and responsibility tables as CSV and XLSX for procurement spreadsheets,
from the same selectors as the pages (so the numbers match the sheet)."""

import csv
import io
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font

from evaluations.models import Project
from poc import selectors as poc_selectors
from poc.models import ResponsibilityArea

TABLES = ("matrix", "comparison", "responsibilities")


def table_rows(project: Project, table: str) -> list[list[object]]:
    if table == "matrix":
        data: Any = poc_selectors.matrix_api_data(project)
        cells = {(c["candidate"], c["action"]): c["outcome"] for c in data["cells"]}
        rows: list[list[object]] = [["action", *data["candidates"]]]
        rows += [[a, *(cells[(c, a)] for c in data["candidates"])] for a in data["actions"]]
        return rows
    summaries = poc_selectors.comparison_for_project(project, include_all=True)
    if table == "comparison":
        rows = [
            [
                "candidate",
                "tier",
                "passed",
                "failed",
                "not_covered",
                "needs_integration",
                "integration_effort_days",
                "responsibility_gaps",
            ]
        ]
        for s in summaries:
            rows.append(
                [
                    s.candidate.slug,
                    s.candidate.tier,
                    *(n for _o, n in s.ordered()),
                    float(s.integration_effort),
                    len(s.responsibility_gaps),
                ]
            )
        return rows
    rows = [["candidate", "area", "party", "person", "escalation"]]
    for s in summaries:
        for area, _label in ResponsibilityArea.choices:
            r = s.responsibilities.get(area)
            rows.append(
                [
                    s.candidate.slug,
                    area,
                    r.party if r else "",
                    r.person if r else "",
                    r.escalation if r else "",
                ]
            )
    return rows


def to_csv(rows: list[list[object]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
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


def _safe(value: object) -> object:
    # Text that a spreadsheet would run as a formula is kept as text.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value
