"""Matrix, comparison and responsibility tables as CSV and XLSX for procurement spreadsheets.

Every table is read from a sheet snapshot: a revision's frozen one (the numbers it was signed
with), or one built now for the current data. Both go through the same code as the PDF's
content, so the spreadsheet and the sheet cannot disagree.
"""

import csv
import io
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from evaluations.models import Tier
from poc import selectors as poc_selectors
from poc.models import (
    Outcome,
)
from workbench import xlsx
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


WIDE = re.compile("[\u2e81-\U0010ffff]")


@dataclass(frozen=True)
class OutcomeCell:
    """An outcome in a table: written as its label, coloured in XLSX."""

    code: str

    def __str__(self) -> str:
        # Looked up once per language: a record writes tens of thousands of these.
        key = (self.code, translation.get_language())
        label = _OUTCOME_LABELS.get(key)
        if label is None:
            label = _OUTCOME_LABELS[key] = (
                str(Outcome(self.code).label) if self.code in Outcome.values else self.code
            )
        return label


_OUTCOME_LABELS: dict[tuple[str, str | None], str] = {}


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


def plain_rows(rows: list[list[object]]) -> list[list[object]]:
    """What each cell holds (see _plain): made once where a table is written twice."""
    return [[_plain(v) for v in row] for row in rows]


def to_csv(rows: list[list[object]], *, plain: list[list[object]] | None = None) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(plain or plain_rows(rows))
    return ("\ufeff" + buffer.getvalue()).encode()  # a BOM so spreadsheets read UTF-8


def to_xlsx(
    rows: list[list[object]],
    title: str,
    *,
    created: datetime | None = None,
    plain: list[list[object]] | None = None,
) -> bytes:
    """A sheet a procurement team can work in: bold frozen header row with filters, columns
    as wide as their content (within reason), outcome cells coloured. `created`: the date the
    file says it was made and last changed (now, if not given).

    Written by workbench/xlsx.py, a row at a time as text: a sheet's full record (10,000 rows
    and more) takes a fraction of a second (docs/performance.md). Widths are measured in a
    first pass, since columns are declared before the rows. `plain`: plain_rows(rows), where
    the caller has it already."""
    plain = plain or plain_rows(rows)
    widths: list[int] = []
    for row in plain:
        for index, value in enumerate(row):
            text = str(value)
            # CJK characters take about two columns.
            width = len(text) if text.isascii() else len(text) + len(WIDE.findall(text))
            if index == len(widths):
                widths.append(width)
            elif width > widths[index]:
                widths[index] = width
    codes = list(OUTCOME_FILLS)
    styles = [xlsx.Style(bold=True), *(xlsx.Style(fill=OUTCOME_FILLS[code]) for code in codes)]
    fill_of = {code: index for index, code in enumerate(codes, start=2)}
    written: list[list[object]] = []
    for number, (row, values) in enumerate(zip(rows, plain, strict=True)):
        if number == 0:
            written.append([xlsx.Styled(value, 1) for value in values])
            continue
        written.append(
            [
                xlsx.Styled(shown, fill_of[value.code])
                if isinstance(value, OutcomeCell) and value.code in fill_of
                else shown
                for value, shown in zip(row, values, strict=True)
            ]
        )
    return xlsx.workbook(
        written,
        title,
        created=created or timezone.now().replace(microsecond=0, tzinfo=None),
        styles=styles,
        widths=[min(max(width + 2, 8), 60) for width in widths],
    )


def _plain(value: object) -> object:
    """What a cell holds: an outcome as its label, text a spreadsheet would run as a formula
    kept as text."""
    if isinstance(value, OutcomeCell):
        return str(value)
    return formula_safe(value)
