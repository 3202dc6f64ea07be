"""A large sheet is laid out in parts (reports.pdfparts): the reader gets the same sheet as
one document would give, with page numbers, contents, links and bookmarks over the whole."""

import io
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pypdf import PdfReader

from poc import services as poc_services
from reports import attachments, pdfparts, rendering
from tests.factories import make_actions
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db


def _page_texts(pdf: bytes, folder: Path, name: str) -> list[str]:
    path = folder / name
    path.write_bytes(pdf)
    text = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split("\f")[:-1]


def _reading(pages: list[str]) -> list[str]:
    """Every line in reading order but the running header and the footer, spaces squeezed;
    without the contents' page numbers and the matrix's column headings, which each page of
    the matrix repeats (where pages break is what differs)."""
    lines = []
    for page in pages:
        # A subset font may map the list bullet and the middle dot to one glyph: which of the
        # two text extraction reads back depends on which the file's subset met first.
        page = page.replace("•", "·")
        kept = [" ".join(line.split()) for line in page.splitlines() if line.strip()][1:-1]
        lines += [
            re.sub(r"\s*\.{3,}\s*\d+$", "", line)
            for line in kept
            if not line.startswith("Acceptance action Scenario")
        ]
    return lines


def _outline(reader: PdfReader) -> list[tuple[int, str]]:
    def walk(items: list[Any], depth: int) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        for item in items:
            if isinstance(item, list):
                out += walk(item, depth + 1)
            else:
                out.append((depth, item.title))
        return out

    return walk(reader.outline, 0)


@pytest.fixture(params=[1, pdfparts.PART_BYTES], ids=["every mark cuts", "slices share parts"])
def many_parts(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> list[str]:
    """Ten matrix rows and two evidence items a slice; parts as small as they can be (every
    mark cuts), or as large as they are (slices share a part). Returns the HTML of each part,
    as it is laid out."""
    settings.SHEET_PARTS_ABOVE = 1
    monkeypatch.setattr(pdfparts, "PART_BYTES", request.param)
    monkeypatch.setattr(rendering, "MATRIX_PART_ROWS", 10)
    monkeypatch.setattr(rendering, "INDEX_PART_LINES", 2)
    laid: list[str] = []
    real_lay_out = pdfparts.lay_out

    def recording(html: str) -> pdfparts.LaidOut:
        laid.append(html)
        return real_lay_out(html)

    monkeypatch.setattr(pdfparts, "lay_out", recording)
    return laid


@pytest.fixture
def busy(evaluation: dict[str, Any]) -> dict[str, Any]:
    """The project with a matrix over several pages and evidence in the index."""
    _, actions = make_actions(
        evaluation["alpha"],
        [(f"extra-{n:03d}", "real_task") for n in range(40)],
        feature="Scheduling",
        dimension="scheduling",
    )
    for action in actions[:5]:
        result = poc_services.result_record(
            candidate=evaluation["volcano"],
            action=action,
            outcome="failed",
            failure_cause=f"stuck at {action.key}",
            actor=None,
        )
        poc_services.evidence_attach_file(
            result=result,
            upload=SimpleUploadedFile(f"{action.key}.log", b"log\n"),
            actor=evaluation["bob"],
        )
    return evaluation


def test_in_parts_the_sheet_reads_as_one_document_does(
    busy, settings, tmp_path, many_parts
) -> None:
    settings.SHEET_PARTS_ABOVE = 0
    whole = rendered(busy, "en", layout="full")
    one_pdf = whole.pdf.read()
    assert many_parts == []
    settings.SHEET_PARTS_ABOVE = 1
    cut_pdf = rendering.sheet_pdf(whole).pdf  # the same revision, laid out in parts
    if pdfparts.PART_BYTES == 1:  # cover, contents, matrix slices, candidates, index slices
        assert len(many_parts) >= 12
    one = _page_texts(one_pdf, tmp_path, "one.pdf")
    cut = _page_texts(cut_pdf, tmp_path, "cut.pdf")
    # Every line the reader sees, in the same order: parts only start sections on new pages.
    assert _reading(cut) == _reading(one)
    assert len(one) < len(cut)
    # Each page says "n / N" over the whole document, and has the running header.
    for number, page in enumerate(cut, start=1):
        lines = [line for line in page.splitlines() if line.strip()]
        assert lines[-1].replace(" ", "") == f"{number}/{len(cut)}"
        assert f"sha256 {whole.sha256}" in lines[0]
    # Each page of the matrix, the first slice's and every later slice's, starts with the
    # column headings.
    start = next(n for n, page in enumerate(cut) if "Results matrix" in page and "extra-" in page)
    end = next(n for n, page in enumerate(cut) if "Failures and their causes" in page)
    assert end - start >= 5  # five slices of ten rows, each on a page of its own
    for page in cut[start + 1 : end]:
        body = [line.split()[:3] for line in page.splitlines() if line.strip()][1:-1]
        assert body[0] == ["Acceptance", "action", "Scenario"], page
        assert ["Acceptance", "action", "Scenario"] not in body[1:], page  # none mid-page
    # The same bookmarks in the same nesting, the metadata the verifier reads, the language.
    one_reader, cut_reader = PdfReader(io.BytesIO(one_pdf)), PdfReader(io.BytesIO(cut_pdf))
    assert _outline(cut_reader) == _outline(one_reader)
    for key in ("/Keywords", "/Title"):
        assert cut_reader.metadata[key] == one_reader.metadata[key]
    assert cut_reader.root_object["/Lang"] == one_reader.root_object["/Lang"] == "en"
    # The record is attached to the merged document as to the one laid out whole.
    assert [(f["name"], f["sha256"], f["in_af"]) for f in attachments.embedded(cut_pdf)] == [
        (f["name"], f["sha256"], f["in_af"]) for f in attachments.embedded(one_pdf)
    ]
    assert len(attachments.embedded(cut_pdf)) == 5
    # Every font embedded, the footer's too.
    fonts = subprocess.run(
        ["pdffonts", str(tmp_path / "cut.pdf")], capture_output=True, text=True, check=True
    ).stdout.splitlines()[2:]
    assert any("DejaVuSans" in line for line in fonts)
    assert {line.split()[-5] for line in fonts} == {"yes"}, fonts


@pytest.mark.parametrize("many_parts", [1], indirect=True)  # every mark cuts
def test_contents_links_and_destinations_point_at_each_section(busy, tmp_path, many_parts) -> None:
    sheet = rendered(busy, "en", layout="full")
    pdf = sheet.pdf.read()
    pages = _page_texts(pdf, tmp_path, "cut.pdf")
    reader = PdfReader(io.BytesIO(pdf))
    starts = {
        "matrix": next(
            n for n, p in enumerate(pages) if "Results matrix" in p and "extra-000" in p
        ),
        "c-volcano": next(n for n, p in enumerate(pages) if "Failures and their causes" in p),
        "evidence": next(n for n, p in enumerate(pages) if "Evidence index" in p and ".log" in p),
        "signoff": len(pages) - 1,
    }
    destinations = {
        name: reader.get_destination_page_number(dest)
        for name, dest in reader.named_destinations.items()
    }
    assert {name: destinations[name] for name in starts} == starts
    # The contents give those pages (1-based), each entry a link to its named destination.
    contents_page = next(n for n, p in enumerate(pages) if re.search(r"^\s*Contents\s*$", p, re.M))
    listed = dict(
        re.findall(r"^[ \t]*(\S[^.\n]*?)[ \t]*\.{3,}[ \t]*(\d+)[ \t]*$", pages[contents_page], re.M)
    )
    assert int(listed["Results matrix"]) == starts["matrix"] + 1
    assert int(listed["Evidence index"]) == starts["evidence"] + 1
    assert int(listed["Sign-off"]) == len(pages)
    targets = {
        str(annotation.get_object()["/Dest"])
        for annotation in reader.pages[contents_page]["/Annots"]
    }
    assert set(starts) <= targets <= set(destinations)


def test_contents_longer_or_shorter_than_guessed_are_laid_out_again(
    busy, settings, tmp_path, monkeypatch
) -> None:
    """The contents' length is guessed from its lines; a wrong guess moves every page after
    it, so the contents are laid out again with the numbers their real length gives."""
    settings.SHEET_PARTS_ABOVE = 1
    contents_laid: list[int] = []
    real_lay_out = pdfparts.lay_out

    def counting(html: str) -> pdfparts.LaidOut:
        result = real_lay_out(html)
        if '<nav class="toc">' in html:
            contents_laid.append(result.pages)
        return result

    monkeypatch.setattr(pdfparts, "lay_out", counting)
    monkeypatch.setattr(pdfparts, "CONTENTS_LINES_PER_PAGE", 2)  # guesses several pages
    sheet = rendered(busy, "en", layout="full")
    pages = _page_texts(sheet.pdf.read(), tmp_path, "cut.pdf")
    assert contents_laid == [1, 1]  # laid out with the guess, then again for its real length
    contents = next(p for p in pages if re.search(r"^\s*Contents\s*$", p, re.M))
    listed = dict(re.findall(r"^[ \t]*(\S[^.\n]*?)[ \t]*\.{3,}[ \t]*(\d+)[ \t]*$", contents, re.M))
    assert int(listed["Sign-off"]) == len(pages) == sheet.page_count


def test_parts_are_grouped_up_to_their_size_at_the_marks(monkeypatch) -> None:
    monkeypatch.setattr(pdfparts, "PART_BYTES", 10)
    mark, contents = pdfparts.PART_MARK, pdfparts.CONTENTS_MARK
    html = (
        f"<html><head></head><body>cover{contents}toc{contents}aaaa{mark}bbbb{mark}"
        f"cccccccccccc{mark}d</body></html>"
    )
    pieces = pdfparts.split(html)
    assert (pieces.front, pieces.contents) == ("cover", "toc")
    assert pieces.parts == ["aaaabbbb", "cccccccccccc", "d"]
    assert pieces.document("x") == "<html><head></head><body>x</body></html>"


def test_which_sheets_are_laid_out_in_parts(busy, settings, monkeypatch) -> None:
    """Over SHEET_PARTS_ABOVE rows, in parts; at it or below, or with 0, one document; the
    sign-off page alone (sealing) always as one document."""
    sheet = rendered(busy, "en", layout="full")
    laid_out = sheet.pdf.read()
    calls: list[str] = []
    monkeypatch.setattr(
        pdfparts, "render_in_parts", lambda html: calls.append("parts") or (laid_out, 1)
    )
    rows = rendering.sheet_rows(sheet)
    matrix = sheet.snapshot["matrix"]
    assert rows == len(matrix["actions"]) * len(matrix["columns"]) + len(sheet.snapshot["evidence"])
    for limit, expected in ((rows, []), (0, []), (rows - 1, ["parts"])):
        settings.SHEET_PARTS_ABOVE = limit
        calls.clear()
        rendering.sheet_pdf(sheet)
        assert calls == expected, limit
    calls.clear()
    rendering.sheet_pdf(sheet, signoff_only=True, total_pages=9)
    assert calls == []
    # The decision document is short: one document whatever the size of the record.
    sheet.layout = "decision"
    settings.SHEET_PARTS_ABOVE = 1
    rendering.sheet_pdf(sheet)
    assert calls == []


def test_a_contents_that_never_settles_gives_one_document(busy, settings, monkeypatch) -> None:
    settings.SHEET_PARTS_ABOVE = 1

    def unsettled(html: str) -> tuple[bytes, int]:
        raise pdfparts.Unsettled("moving")

    monkeypatch.setattr(pdfparts, "render_in_parts", unsettled)
    sheet = rendered(busy, "en", layout="full")
    assert sheet.page_count >= 3
    assert "<!--sheet-part-->" not in rendering.sheet_html(sheet)
