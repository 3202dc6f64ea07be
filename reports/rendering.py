"""Sheets to PDF with WeasyPrint: A4, running header with project, revision and hash, page
numbers, a table of contents, repeating table headers, CJK text in an embedded Noto font."""

import gc
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _

from evaluations.models import TeamRole
from reports import attachments, decision
from reports.exports import OUTCOME_ORDER
from reports.models import Layout, Sheet, SignOff


@dataclass(frozen=True)
class Rendered:
    pdf: bytes
    pages: int


OUTCOME_COLOURS = {
    "passed": "#17693a",
    "failed": "#a3261b",
    "not_covered": "#9a9a9a",
    "needs_integration": "#6b4fa3",
}
TOP_FAILURES = 6


def _summary_context(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The first page's chart and lists, computed from the frozen data."""
    bars = []
    label_width, bar_width = 45.0, 125.0
    for row, c in enumerate(snapshot["candidates"]):
        total = sum(c["counts"].get(o, 0) for o in OUTCOME_ORDER) or 1
        x, segments = label_width, []
        for outcome in OUTCOME_ORDER:
            count = c["counts"].get(outcome, 0)
            width = round(bar_width * count / total, 2)
            segments.append(
                {
                    "count": count,
                    "x": round(x, 2),
                    "width": width,
                    "label_x": round(x + 1, 2),
                    "colour": OUTCOME_COLOURS[outcome],
                }
            )
            x += width
        name = f"{c['solution']} {c['version']}".strip()
        short = name if len(name) <= 24 else name[:23] + "…"  # the label column is 45 mm
        bars.append({"name": short, "y": row * 7, "segments": segments})
    # Failures of must-have requirements first, then should, then could; in candidate order.
    rank = {"must": 0, "should": 1, "could": 2}
    failures = sorted(
        (
            {
                "candidate": f"{c['solution']} {c['version']}".strip(),
                "question": f.get("question") or f["action"],
                "cause": f["cause"],
                "rank": rank.get(f.get("importance", "must"), 0),
            }
            for c in snapshot["candidates"]
            for f in c["failed"]
        ),
        key=lambda f: f["rank"],
    )
    return {
        "summary_bars": bars,
        "bars_height": max(7 * len(bars), 7),
        "legend": [(o, OUTCOME_COLOURS[o]) for o in OUTCOME_ORDER],
        "top_failures": failures[:TOP_FAILURES],
    }


# The evidence index is a monospaced grid rather than a table: one text block per candidate
# lays out several times faster than a table's cells (docs/performance.md). Widths are cells
# of Noto Sans Mono CJK, where a wide (CJK) character takes exactly two: key, name, SHA-256
# or address, who and when. 168 cells of 3 pt (6 pt type) fit the 182 mm text width.
INDEX_COLUMNS = (30, 24, 66, 45)
# Where a sheet laid out in parts may cut a long evidence index (items, a line or more each) or
# results matrix (rows).
INDEX_PART_LINES = 1500
MATRIX_PART_ROWS = 250


def _cell_width(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _cut(text: str, width: int) -> list[str]:
    """`text` in pieces of at most `width` cells, in order; a long value continues on the
    next lines of its own column, so nothing is cut off."""
    text = " ".join(text.split())  # tabs and line breaks would break the grid
    if text.isascii():
        return [text[i : i + width] for i in range(0, len(text), width)] or [""]
    pieces: list[str] = []
    piece: list[str] = []
    used = 0
    for ch in text:
        cells = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if used + cells > width and piece:
            pieces.append("".join(piece))
            piece, used = [], 0
        piece.append(ch)
        used += cells
    pieces.append("".join(piece))
    return pieces


def index_lines(rows: list[tuple[str, ...]], widths: tuple[int, ...] = INDEX_COLUMNS) -> str:
    """Rows of fields as lines of a monospaced grid, each field in its column."""
    lines = []
    for fields in rows:
        columns = [_cut(field, width) for field, width in zip(fields, widths, strict=True)]
        for i in range(max(len(c) for c in columns)):
            line = []
            for pieces, width in zip(columns, widths, strict=True):
                piece = pieces[i] if i < len(pieces) else ""
                line.append(piece + " " * (width - _cell_width(piece)))
            lines.append(" ".join(line).rstrip())
    return "\n".join(lines)


def _evidence_name(item: dict[str, Any]) -> str:
    """An item's name, with where it came from when a person recorded it on an earlier result
    of the cell (carried forward, or superseded by the frozen result)."""
    origin = item.get("carried_from_result")
    if origin is None:
        return str(item["name"])
    if item.get("superseded"):
        mark = _("superseded; from result %(id)s") % {"id": origin}
    else:
        mark = _("carried from result %(id)s") % {"id": origin}
    return f"{item['name']} [{mark}]"


def _evidence_groups(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The evidence index by candidate, in the sheet's column order, each in recorded order,
    as lines of the index's grid."""
    names = {c["slug"]: f"{c['solution']} {c['version']}".strip() for c in snapshot["candidates"]}
    groups: dict[str, list[dict[str, Any]]] = {slug: [] for slug in names}
    for item in snapshot.get("evidence", []):
        groups.setdefault(item["candidate"], []).append(item)
    return [
        {
            "name": names.get(slug) or rows[0].get("candidate_name") or slug,
            "count": len(rows),
            # Slices of INDEX_PART_LINES lines: a sheet laid out in parts may cut between them.
            "chunks": [
                index_lines(
                    [
                        (
                            e["action"],
                            _evidence_name(e),
                            e["sha256"] or e["url"],
                            f"{e['recorded_by']} {e['recorded_at'][:16].replace('T', ' ')}".strip(),
                        )
                        for e in rows[i : i + INDEX_PART_LINES]
                    ]
                )
                for i in range(0, len(rows), INDEX_PART_LINES)
            ],
        }
        for slug, rows in groups.items()
        if rows
    ]


def evidence_index_header() -> str:
    """The index's column titles on the same grid, in the active language."""
    return index_lines(
        [
            (
                str(_("Action")),
                str(_("Name")),
                str(_("SHA-256 or address")),
                str(_("Recorded")),
            )
        ]
    )


def sheet_keywords(sheet: Sheet) -> str:
    """Machine-readable identity in the PDF's keywords, read back by the verifier."""
    return (
        f"workbench-sheet;project={sheet.project.slug};revision={sheet.revision};"
        f"sha256={sheet.sha256}"
    )


def sheet_html(
    sheet: Sheet,
    *,
    signoffs: list[SignOff] | None = None,
    signer_subject: str = "",
    self_signed: bool = False,
    signoff_only: bool = False,
    total_pages: int = 0,
    parts: bool = False,
    attached: list[attachments.Attached] | None = None,
) -> str:
    """The sheet as HTML for WeasyPrint, in its layout: the decision document
    (reports.decision), or every result printed. With `parts` (that layout only), marked where
    it may be cut and with the page numbers left to reports.pdfparts (see sheet_pdf).
    `attached`: the files the PDF will carry, which the decision document lists."""
    snapshot: dict[str, Any] = sheet.snapshot
    with translation.override(sheet.language):
        common = {
            "sheet": sheet,
            "sheet_date": sheet.created_at.date().isoformat(),
            "s": snapshot,
            # The sign-off page alone (sealing) prints none of the body.
            **({} if signoff_only else _summary_context(snapshot)),
            "keywords": sheet_keywords(sheet),
            "probes": {p["candidate"]: p for p in snapshot.get("probe_facts", [])},
            "required_role_labels": [str(TeamRole(r).label) for r in sheet.required_roles],
            "one_signer_many_roles": sheet.one_signer_many_roles,
            "header_left": f"{snapshot['project']['name']} · r{sheet.revision}",
            "signoffs": signoffs or [],
            "signed_after_changes": any(so.after_changes for so in signoffs or []),
            "signer_subject": signer_subject,
            "self_signed": self_signed,
            "signoff_only": signoff_only,
            "total_pages": total_pages,
        }
        if sheet.layout == Layout.DECISION:
            return render_to_string(
                "reports/pdf/decision.html",
                {
                    **common,
                    **({} if signoff_only else decision.decision_context(snapshot)),
                    "has_terms": any(c.get("terms") for c in snapshot["candidates"]),
                    "evidence_count": len(snapshot.get("evidence", [])),
                    "unassigned_word": _("unassigned"),
                    "parts": False,
                    "attachments": attached or [],
                },
            )
        return render_to_string(
            "reports/pdf/sheet.html",
            {**common, **({} if signoff_only else _full_context(snapshot, parts))},
        )


def _full_context(snapshot: dict[str, Any], parts: bool) -> dict[str, Any]:
    """What the layout that prints every result adds: the matrix in slices, the evidence
    index, and stand-ins for the contents of a sheet laid out in parts."""
    rows = list(zip(snapshot["matrix"]["actions"], snapshot["matrix"]["rows"], strict=True))
    return {
        "matrix_chunks": [
            rows[i : i + MATRIX_PART_ROWS] for i in range(0, len(rows), MATRIX_PART_ROWS)
        ]
        if parts and rows
        else [rows],
        "parts": parts,
        # Stand-ins in the contents' part for what other parts hold, so that its links are
        # kept; the merged document points them at the real places.
        "part_anchors": [
            *(["summary"] if snapshot.get("scenario_coverage") else []),
            "framing",
            "shortlist",
            "matrix",
            *(f"c-{c['slug']}" for c in snapshot["candidates"]),
            *(["costs"] if snapshot.get("costs") else []),
            *(["to-confirm"] if snapshot.get("to_confirm") is not None else []),
            "evidence",
            "signoff",
        ],
        # Product names; revisions frozen before they were kept show their references.
        "matrix_columns": snapshot["matrix"].get("column_names") or snapshot["matrix"]["columns"],
        "evidence_groups": _evidence_groups(snapshot),
        "evidence_header": evidence_index_header(),
        "outcome_order": OUTCOME_ORDER,
    }


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_resume = False


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration, then collect once.

    Laying out a large sheet creates hundreds of thousands of objects that live until the PDF
    is written; the collector's repeated passes over them took about a third of the rendering
    time and left memory more fragmented (docs/performance.md). Reference counting still frees
    everything that is not in a cycle while paused. Nested and concurrent callers are counted:
    the collector comes back on when the last one leaves.
    """
    global _gc_pausers, _gc_resume
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_resume:
                gc.enable()
        gc.collect(0)  # the young generation holds all that the pause left behind


# The decision document is written as PDF/A-3b (archival, with embedded files allowed):
# WeasyPrint adds the output intent and the XMP identification; reports.attachments adds the
# associated files the way part 3 asks. The layout that prints every result stays plain PDF
# (its parts are merged by pypdf, which keeps neither).
ARCHIVAL_VARIANT = "pdf/a-3b"


def html_to_pdf(html: str, *, variant: str | None = None) -> Rendered:
    from weasyprint import HTML  # imported here: loading Pango is slow for unrelated commands

    with cyclic_gc_paused():
        document = HTML(string=html, base_url=".").render()
        pdf = document.write_pdf(pdf_variant=variant) if variant else document.write_pdf()
        rendered = Rendered(pdf=pdf, pages=len(document.pages))
        del document
    return rendered


def sheet_rows(sheet: Sheet) -> int:
    """The sheet's bulk: results matrix cells and evidence index lines."""
    matrix = sheet.snapshot["matrix"]
    return len(matrix["actions"]) * len(matrix["columns"]) + len(sheet.snapshot.get("evidence", []))


def sheet_pdf(
    sheet: Sheet,
    *,
    signoffs: list[SignOff] | None = None,
    signer_subject: str = "",
    self_signed: bool = False,
    signoff_only: bool = False,
    total_pages: int = 0,
) -> Rendered:
    """The sheet's PDF: one document, or for a sheet over SHEET_PARTS_ABOVE rows, laid out in
    parts one after another (reports.pdfparts), which bounds memory by the largest part."""
    from django.conf import settings

    from reports import pdfparts

    files = [] if signoff_only else attachments.sheet_attachments(sheet)

    def html(*, parts: bool) -> str:
        return sheet_html(
            sheet,
            signoffs=signoffs,
            signer_subject=signer_subject,
            self_signed=self_signed,
            signoff_only=signoff_only,
            total_pages=total_pages,
            parts=parts,
            attached=files,
        )

    if signoff_only:
        return html_to_pdf(html(parts=False))
    attachments.check_size(files, settings.SHEET_ATTACHMENTS_MAX_BYTES)
    rendered = None
    limit = settings.SHEET_PARTS_ABOVE
    if sheet.layout == Layout.FULL and limit and sheet_rows(sheet) > limit:
        try:
            with cyclic_gc_paused():
                pdf, pages = pdfparts.render_in_parts(html(parts=True))
            rendered = Rendered(pdf=pdf, pages=pages)
        except pdfparts.Unsettled:
            pass  # laid out as one document below
    if rendered is None:
        variant = ARCHIVAL_VARIANT if sheet.layout == Layout.DECISION else None
        rendered = html_to_pdf(html(parts=False), variant=variant)
    when = sheet.created_at.replace(microsecond=0)
    return Rendered(pdf=attachments.embed(rendered.pdf, files, when), pages=rendered.pages)


def replace_last_page(pdf: bytes, page_pdf: bytes) -> bytes:
    """The document with its last page (the sign-off placeholder) showing the one page of
    `page_pdf` instead: sealing then renders one page, not the whole sheet again.

    The last page object itself stays, with new contents and resources: the contents
    list's link, the named destination and the bookmark that point at it stay valid. What only
    the placeholder used is dropped from the file."""
    from io import BytesIO

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject

    writer = PdfWriter(clone_from=PdfReader(BytesIO(pdf)))
    replacement = PdfReader(BytesIO(page_pdf))
    if len(replacement.pages) != 1:
        raise ValueError(f"the sign-off page rendered as {len(replacement.pages)} pages")
    source, last = replacement.pages[0], writer.pages[-1]
    for key in ("/Contents", "/Resources"):
        last[NameObject(key)] = source.raw_get(key).clone(writer)
    if "/Annots" in last:  # the placeholder's links; the sign-off page has none of its own
        del last[NameObject("/Annots")]
    writer.compress_identical_objects(remove_duplicates=False, remove_unreferenced=True)
    out = BytesIO()
    writer.write(out)
    return out.getvalue()
