"""Sheets to PDF with WeasyPrint: A4, running header with project, revision and hash, page
numbers, a table of contents, repeating table headers, CJK text in an embedded Noto font."""

from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation

from reports.models import Sheet, SignOff


@dataclass(frozen=True)
class Rendered:
    pdf: bytes
    pages: int


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
) -> str:
    snapshot: dict[str, Any] = sheet.snapshot
    with translation.override(sheet.language):
        return render_to_string(
            "reports/pdf/sheet.html",
            {
                "sheet": sheet,
                "s": snapshot,
                "matrix_rows": list(
                    zip(snapshot["matrix"]["actions"], snapshot["matrix"]["rows"], strict=True)
                ),
                "keywords": sheet_keywords(sheet),
                "header_left": f"{snapshot['project']['name']} · r{sheet.revision}",
                "signoffs": signoffs or [],
                "signer_subject": signer_subject,
                "self_signed": self_signed,
            },
        )


def html_to_pdf(html: str) -> Rendered:
    from weasyprint import HTML  # imported here: loading Pango is slow for unrelated commands

    document = HTML(string=html, base_url=".").render()
    return Rendered(pdf=document.write_pdf(), pages=len(document.pages))
