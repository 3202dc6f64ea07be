"""A large sheet laid out in parts, one after another, each written and let go before the next.

WeasyPrint keeps every laid-out page in memory until the PDF is written (about 3-5 MB a page of
a dense sheet), so one document's memory grows with the project: a 10 x 1,000 sheet of 300
pages needed about 2 GB. Laid out in parts of a few dozen pages, the memory is that of the
largest part, whatever the size of the project (docs/performance.md).

The sheet's HTML marks where it may be cut (`<!--sheet-part-->`: between the matrix's slices,
the candidates, the evidence index's slices and the sign-off page) and its table of contents
(`<!--sheet-contents-->`); each part starts on a page of its own. What spans the whole document
is set once the parts are merged: the page numbers "n / N" in the footer (stamped on each
page), the contents' page numbers (the contents are laid out last, when every other part's
pages are known), the named destinations the contents' links and the sign-off replacement
point at, and the bookmarks.
"""

import gc
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    Fit,
    FloatObject,
    IndirectObject,
    NameObject,
    NumberObject,
    PdfObject,
    TextStringObject,
)

if TYPE_CHECKING:
    from fontTools.ttLib import TTFont
    from weasyprint import Document

PART_MARK = "<!--sheet-part-->"
CONTENTS_MARK = "<!--sheet-contents-->"  # before and after the table of contents
CONTENTS_LINES_PER_PAGE = 40  # about, at the contents' type size: a first guess, checked
# In the contents: the page of a section, given once every part is laid out. Only as an
# attribute's whole value (text the team wrote cannot hold a bare quote: it is escaped).
PAGE_MARK = re.compile(r'data-page="@@page:([A-Za-z0-9_-]{1,120})@@"')
# HTML laid out per part, about: a dense sheet runs 6-10 KB of HTML a page, so a part is 15-25
# pages. Halving it from 300,000 lowered a 10 x 1,000 sheet's peak by 57 MB for 7 % more time
# (each part's fonts are subset and written on their own) and a larger file (docs/performance.md).
PART_BYTES = 150_000
_PX_TO_PT = 0.75  # WeasyPrint lays out in CSS pixels; PDF coordinates are points
# The footer's page number as one document's margin box prints it: 8 pt DejaVu Sans (its
# digits, space and slash, embedded as a subset like every font of the sheet), the running
# header's grey, centred in the bottom margin (16 mm).
_FOOTER_SIZE = 8.0
_FOOTER_BASELINE = 19.8
_FOOTER_CHARS = " /0123456789"
_FOOTER_FONT_FILES = (  # fonts-dejavu-core, where distributions put it
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/local/share/fonts/DejaVuSans.ttf",
)


class Unsettled(Exception):
    """The contents' length kept changing with its own page numbers (never seen: the caller
    lays the sheet out as one document instead)."""


@dataclass
class LaidOut:
    pdf: bytes
    pages: int
    # name -> (page in the part, x, y), PDF points from the page's bottom left
    anchors: dict[str, tuple[int, float, float]]
    # (level, label, page in the part, x, y)
    bookmarks: list[tuple[int, str, int, float, float]]


@dataclass
class Pieces:
    head: str  # up to and with <body>
    front: str  # cover and summary
    contents: str  # the table of contents
    parts: list[str]  # the rest, grouped into parts of about PART_BYTES
    tail: str  # from </body>

    def document(self, body: str) -> str:
        return self.head + body + self.tail


def split(html: str) -> Pieces:
    """The sheet's HTML in the pieces laid out one by one."""
    start = html.index("<body>") + len("<body>")
    end = html.rindex("</body>")
    front, contents, rest = html[start:end].split(CONTENTS_MARK)
    parts: list[str] = []
    for chunk in rest.split(PART_MARK):
        if parts and len(parts[-1]) + len(chunk) <= PART_BYTES:
            parts[-1] += chunk
        else:
            parts.append(chunk)
    return Pieces(html[:start], front, contents, parts, html[end:])


def lay_out(html: str) -> LaidOut:
    """One part laid out and written; its pages are let go before this returns."""
    from weasyprint import HTML  # imported here: loading Pango is slow for unrelated commands

    laid_out = _written(HTML(string=html, base_url=".").render())
    gc.collect()  # the part's boxes hold cycles; free them before the next part is laid out
    return laid_out


def _written(document: "Document") -> LaidOut:
    """The document's PDF and what the merge needs of its pages (no page outlives this)."""
    anchors: dict[str, tuple[int, float, float]] = {}
    bookmarks: list[tuple[int, str, int, float, float]] = []
    for number, page in enumerate(document.pages):
        height = page.height
        for name, (x, y, _, _) in page.anchors.items():
            anchors.setdefault(name, (number, x * _PX_TO_PT, (height - y) * _PX_TO_PT))
        for level, label, (x, y), _state in page.bookmarks:
            bookmarks.append((level, label, number, x * _PX_TO_PT, (height - y) * _PX_TO_PT))
    return LaidOut(
        pdf=document.write_pdf(), pages=len(document.pages), anchors=anchors, bookmarks=bookmarks
    )


def render_in_parts(html: str) -> tuple[bytes, int]:
    """The PDF of `html` (a sheet with part marks) and its page count.

    The cover and summary, then every other part are laid out first; the contents last, when
    the page of each section is known. Its own length moves every page after it, so it is
    laid out again in the rare case that it takes more pages than its lines suggest."""
    pieces = split(html)
    front = lay_out(pieces.document(pieces.front))
    parts = [lay_out(pieces.document(part)) for part in pieces.parts]
    contents_pages = 1 + pieces.contents.count("<li>") // CONTENTS_LINES_PER_PAGE
    for _ in range(3):
        body = _with_pages(pieces.contents, front, contents_pages, parts)
        contents = lay_out(pieces.document(body))
        if contents.pages == contents_pages:
            return merge([front, contents, *parts])
        contents_pages = contents.pages
    raise Unsettled("the sheet's contents did not settle on a page count")


def _with_pages(
    contents: str, front: LaidOut, contents_pages: int, parts: Iterable[LaidOut]
) -> str:
    """The contents with the page number, in the merged document, of each section: the front
    first, then the contents (`contents_pages` long), then the parts."""
    pages: dict[str, int] = {name: 1 + number for name, (number, _, _) in front.anchors.items()}
    offset = front.pages + contents_pages + 1
    for part in parts:
        for name, (number, _, _) in part.anchors.items():
            pages.setdefault(name, offset + number)
        offset += part.pages
    return PAGE_MARK.sub(lambda found: f'data-page="{pages.get(found[1], "?")}"', contents)


def merge(parts: list[LaidOut]) -> tuple[bytes, int]:
    """The parts in one PDF: the first part's metadata, every part's anchors as named
    destinations (where a part holds an anchor, not the contents' stand-in for it), one
    outline from every part's headings, and "n / N" stamped in each page's footer."""
    writer = PdfWriter()
    starts: list[int] = []
    for position, part in enumerate(parts):
        reader = PdfReader(BytesIO(part.pdf))
        if position == 0:  # title, keywords (the verifier reads them), language
            if reader.metadata:
                writer.add_metadata(dict(reader.metadata.items()))
            if "/Lang" in reader.root_object:
                writer.root_object[NameObject("/Lang")] = reader.root_object["/Lang"].clone(writer)
        starts.append(len(writer.pages))
        for page in reader.pages:
            writer.add_page(page)

    anchors: dict[str, tuple[int, float, float]] = {}
    placed = [*zip(parts, starts, strict=True)]
    for part, start in [placed[0], *placed[2:], placed[1]]:  # the contents' stand-ins last
        for name, (number, x, y) in part.anchors.items():
            anchors.setdefault(name, (start + number, x, y))
    names = ArrayObject()
    for name in sorted(anchors):
        number, x, y = anchors[name]
        names.append(TextStringObject(name))
        names.append(
            ArrayObject(
                [
                    writer.pages[number].indirect_reference,
                    NameObject("/XYZ"),
                    FloatObject(round(x, 2)),
                    FloatObject(round(y, 2)),
                    NumberObject(0),
                ]
            )
        )
    dests = writer._add_object(DictionaryObject({NameObject("/Names"): names}))
    writer.root_object[NameObject("/Names")] = DictionaryObject({NameObject("/Dests"): dests})

    stack: list[tuple[int, IndirectObject]] = []
    for part, start in zip(parts, starts, strict=True):
        for level, label, number, x, y in part.bookmarks:
            while stack and stack[-1][0] >= level:
                stack.pop()
            item = writer.add_outline_item(
                title=label,
                page_number=start + number,
                parent=stack[-1][1] if stack else None,
                fit=Fit.xyz(left=round(x, 2), top=round(y, 2), zoom=0),
            )
            stack.append((level, item))

    total = len(writer.pages)
    _stamp_page_numbers(writer, total)
    out = BytesIO()
    writer.write(out)
    return out.getvalue(), total


def _footer_font_file() -> str | None:
    found = next((path for path in _FOOTER_FONT_FILES if Path(path).is_file()), None)
    if found is None and shutil.which("fc-match"):
        out = subprocess.run(
            ["fc-match", "-f", "%{file}", "DejaVu Sans:style=Book"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
        found = out if out.lower().endswith(".ttf") and Path(out).is_file() else None
    return found


def _cap_height(font: "TTFont") -> float:
    """The capital letters' height: OS/2 version 2 on says it; else the "H" glyph's top."""
    height = getattr(font["OS/2"], "sCapHeight", 0)
    if height:
        return float(height)
    glyph = font["glyf"][font.getBestCmap().get(ord("H"), ".notdef")]
    return float(getattr(glyph, "yMax", 0) or font["hhea"].ascent * 0.7)


def _footer_font(writer: PdfWriter) -> tuple[IndirectObject, dict[str, float]]:
    """The footer's font in `writer` and each of its characters' advance (per 1,000 units of
    the size): DejaVu Sans cut to the characters of "n / N", embedded (a simple TrueType font,
    WinAnsi codes, which for these characters are their ASCII codes)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    path = _footer_font_file()
    if path is None:
        raise FileNotFoundError("DejaVu Sans (fonts-dejavu-core) is not installed")
    font = TTFont(path)
    cap_height = _cap_height(font)  # from the whole font: the subset has no "H"
    options = subset.Options(layout_features=[], name_IDs=[1, 2, 4, 6])
    options.drop_tables += ["FFTM"]  # a font editor's timestamp, which fontTools cannot subset
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=_FOOTER_CHARS)
    subsetter.subset(font)
    program = BytesIO()
    font.save(program)
    scale = 1000 / font["head"].unitsPerEm
    cmap = font.getBestCmap()
    advance = {ch: font["hmtx"][cmap[ord(ch)]][0] * scale for ch in _FOOTER_CHARS}
    first, last = ord(min(_FOOTER_CHARS)), ord(max(_FOOTER_CHARS))
    head, hhea = font["head"], font["hhea"]
    stream = DecodedStreamObject()
    stream.set_data(program.getvalue())
    stream[NameObject("/Length1")] = NumberObject(len(program.getvalue()))
    name = NameObject("/WBPAGE+DejaVuSans")
    descriptor = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/FontDescriptor"),
            NameObject("/FontName"): name,
            NameObject("/Flags"): NumberObject(32),  # non-symbolic
            NameObject("/FontBBox"): ArrayObject(
                [
                    FloatObject(round(v * scale, 1))
                    for v in (head.xMin, head.yMin, head.xMax, head.yMax)
                ]
            ),
            NameObject("/ItalicAngle"): NumberObject(0),
            NameObject("/Ascent"): FloatObject(round(hhea.ascent * scale, 1)),
            NameObject("/Descent"): FloatObject(round(hhea.descent * scale, 1)),
            NameObject("/CapHeight"): FloatObject(round(cap_height * scale, 1)),
            NameObject("/StemV"): NumberObject(80),
            NameObject("/FontFile2"): writer._add_object(stream),
        }
    )
    widths = ArrayObject(
        [FloatObject(round(advance.get(chr(code), 0), 1)) for code in range(first, last + 1)]
    )
    return writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/TrueType"),
                NameObject("/BaseFont"): name,
                NameObject("/FirstChar"): NumberObject(first),
                NameObject("/LastChar"): NumberObject(last),
                NameObject("/Widths"): widths,
                NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
                NameObject("/FontDescriptor"): writer._add_object(descriptor),
            }
        )
    ), advance


def _stamp_page_numbers(writer: PdfWriter, total: int) -> None:
    def stream(data: str) -> IndirectObject:
        obj = DecodedStreamObject()
        obj.set_data(data.encode("ascii"))
        return writer._add_object(obj)

    font, advance = _footer_font(writer)
    save = stream("q\n")  # the pages' own drawing, wrapped so that the stamp starts clean
    for number, page in enumerate(writer.pages, start=1):
        text = f"{number} / {total}"
        width = sum(advance[ch] for ch in text) * _FOOTER_SIZE / 1000
        x = (float(page.mediabox.width) - width) / 2 + float(page.mediabox.left)
        stamp = stream(
            f"\nQ q 0.333 0.333 0.333 rg BT /WbPageNumber {_FOOTER_SIZE:g} Tf "
            f"{x:.2f} {_FOOTER_BASELINE + float(page.mediabox.bottom):.2f} Td ({text}) Tj ET Q\n"
        )
        contents = page.get("/Contents")
        if contents is None:
            own: list[PdfObject] = []
        elif isinstance(contents.get_object(), list):
            own = list(contents.get_object())
        else:
            own = [contents]
        page[NameObject("/Contents")] = ArrayObject([save, *own, stamp])
        resources = page["/Resources"].get_object()
        assert isinstance(resources, DictionaryObject)  # WeasyPrint gives every page its fonts
        if "/Font" not in resources:
            resources[NameObject("/Font")] = DictionaryObject()
        fonts = resources["/Font"].get_object()
        assert isinstance(fonts, DictionaryObject)
        fonts[NameObject("/WbPageNumber")] = font
