"""Cost lines from a file: CSV (UTF-8, a byte-order mark allowed) or XLSX, one line per row,
with the column names of `COLUMNS` (the import template). Reading is pure: it returns the rows
as given, each with its row number, or says why the file cannot be read at all; the service
checks every row and writes all of them or none (services/costs.py, cost_lines_import).
"""

import csv
import io
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.utils.translation import gettext as _
from openpyxl import load_workbook

from workbench.spreadsheets import formula_safe, formula_unescaped

COLUMNS = [
    "candidate", "category", "kind", "label", "low", "expected", "high", "currency", "unit",
    "team", "discount_percent", "first_year", "last_year", "charge_category", "basis",
    "reference", "source", "valid_until",
]  # fmt: skip
REQUIRED = ("candidate", "category", "kind", "label", "low", "expected", "high")
MAX_ROWS = 5000
EXAMPLE = [
    ["volcano", "support", "per_year", "Support contract", "40000", "60000", "90000", "USD",
     "", "", "", "1", "", "Purchase", "quote", "Q-2026-118", "", "2027-03-31"],
    ["baseline", "operations", "fte", "Hand-run operations", "2", "3", "4", "", "", "", "",
     "1", "", "Purchase", "estimate", "", "", ""],
]  # fmt: skip


class Unreadable(ValueError):
    """The file as a whole cannot be read as cost lines."""


@dataclass(frozen=True)
class Row:
    number: int  # as a spreadsheet numbers it: the header is row 1
    values: dict[str, str]


def template_csv() -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([[formula_safe(v) for v in row] for row in EXAMPLE])
    return ("\ufeff" + buffer.getvalue()).encode()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, date):
        return value.isoformat()[:10]
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return formula_unescaped(str(value).strip())


def _rows_of(table: list[list[Any]]) -> list[Row]:
    if not any(_cell(v) for row in table for v in row):
        raise Unreadable(_("The file is empty."))
    header = [_cell(v).lower() for v in table[0]]
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise Unreadable(
            _("The header lacks %(columns)s (the columns are %(all)s).")
            % {"columns": ", ".join(missing), "all": ", ".join(COLUMNS)}
        )
    unknown = [name for name in header if name and name not in COLUMNS]
    if unknown:
        raise Unreadable(
            _("Unknown columns: %(columns)s (the columns are %(all)s).")
            % {"columns": ", ".join(unknown), "all": ", ".join(COLUMNS)}
        )
    rows = []
    for number, raw in enumerate(table[1:], start=2):
        values = {name: _cell(v) for name, v in zip(header, raw, strict=False) if name}
        if any(values.values()):
            rows.append(Row(number, values))
    if not rows:
        raise Unreadable(_("The file has a header but no cost line."))
    if len(rows) > MAX_ROWS:
        raise Unreadable(
            _("The file has %(n)s cost lines; at most %(max)s are read at once.")
            % {"n": len(rows), "max": MAX_ROWS}
        )
    return rows


def read(data: bytes, filename: str) -> list[Row]:
    """The rows of a CSV or XLSX file, or Unreadable saying why not."""
    if filename.lower().endswith(".xlsx"):
        try:
            book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        except Exception:  # openpyxl raises many kinds for a file that is not a workbook
            raise Unreadable(_("The file is not an XLSX workbook.")) from None
        sheet = book.worksheets[0]
        return _rows_of([list(row) for row in sheet.iter_rows(values_only=True)])
    if not filename.lower().endswith(".csv"):
        raise Unreadable(_("Upload a .csv or .xlsx file."))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Unreadable(_("The CSV file is not UTF-8.")) from None
    try:
        return _rows_of(list(csv.reader(io.StringIO(text))))
    except csv.Error as exc:
        raise Unreadable(_("The CSV file cannot be read: %(why)s.") % {"why": exc}) from None
