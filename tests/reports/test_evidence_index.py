"""The sheet's evidence index: lines of a monospaced grid, each value in its column, wide
(CJK) characters two cells, long values continuing on the next line of their own column; and
in the rendered PDF the columns line up whatever the names hold."""

import re
import subprocess
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from poc import services as poc_services
from reports.rendering import INDEX_COLUMNS, index_lines
from tests.reports.helpers import rendered

WIDTHS = (6, 4, 8)


def test_values_start_at_their_columns_and_wide_characters_take_two_cells() -> None:
    lines = index_lines([("a", "名称", "x"), ("bb", "ab", "y")], WIDTHS).split("\n")
    assert lines == ["a      名称 x", "bb     ab   y"]


def test_a_long_value_continues_in_its_own_column() -> None:
    url = "https://ci.example.com/" + "z" * 10
    lines = index_lines([("key", "log", url)], WIDTHS).split("\n")
    assert lines[0] == "key    log  " + url[:8]
    assert all(line.startswith(" " * 12) for line in lines[1:])
    assert "".join(line[12:] for line in lines) == url  # nothing cut off
    # A wide character never splits across the column's edge: 名称名称名 is 10 cells.
    assert index_lines([("k", "名称名称名", "v")], WIDTHS).split("\n") == [
        "k      名称 v",
        "       名称",
        "       名",
    ]


def test_breaks_and_tabs_in_a_value_do_not_break_the_grid() -> None:
    lines = index_lines([("k", "a\nb\tc", "v")], (2, 6, 2)).split("\n")
    assert lines == ["k  a b c  v"]


def _words(pdf: Path) -> list[tuple[float, float, str]]:
    """(x, y, word) of every word in the PDF, from poppler's bounding boxes."""
    out = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return [
        (float(x), float(y), unescape(word))
        for x, y, word in re.findall(
            r'<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]*)</word>', out
        )
    ]


@pytest.mark.django_db
def test_the_rendered_index_lines_up_whatever_the_names_hold(evaluation: dict[str, Any]) -> None:
    volcano, (first, second, third) = evaluation["volcano"], evaluation["actions"][:3]
    long_url = "https://ci.example.com/" + "/".join(f"segment{i:02d}" for i in range(14))
    assert len(long_url) > INDEX_COLUMNS[2]
    result = poc_services.result_record(
        candidate=volcano, action=first, outcome="passed", change_reason="rerun", actor=None
    )
    stored = poc_services.evidence_attach_file(
        result=result,
        upload=SimpleUploadedFile("训练日志-第二次.log", b"step 40\n"),
        actor=evaluation["bob"],
    )
    for action, url in ((second, long_url), (third, "https://ci.example.com/short")):
        poc_services.evidence_attach_link(
            result=poc_services.result_record(
                candidate=volcano,
                action=action,
                outcome="passed",
                change_reason="rerun",
                actor=None,
            ),
            url=url,
            name="CI",
            actor=None,
        )
    sheet = rendered(evaluation, language="zh-hans", layout="full")
    words = _words(Path(sheet.pdf.path))
    x_of = {word: x for x, _, word in words}
    # The hash after a Chinese name starts where the addresses after ASCII names do.
    assert stored.sha256 in x_of
    assert x_of[stored.sha256] == pytest.approx(x_of["https://ci.example.com/short"], abs=0.5)
    # The long address is whole once its continuation lines are joined, each in its column.
    column = sorted((y, w) for x, y, w in words if abs(x - x_of[stored.sha256]) < 0.5)
    start = next(i for i, (_, w) in enumerate(column) if w.startswith(long_url[:30]))
    joined = ""
    for _, word in column[start:]:
        if not long_url.startswith(joined + word):
            break
        joined += word
    assert joined == long_url
