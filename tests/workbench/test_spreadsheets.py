"""The formula guard of every CSV and XLSX the product writes: what a spreadsheet would run is
kept as text, and reading the file back gives the original."""

import pytest

from workbench.spreadsheets import formula_safe, formula_unescaped

RUN = [
    '=HYPERLINK("http://evil.example","x")',
    "+cmd|' /C calc'!A0",
    "-1+1",
    "@SUM(A1:A9)",
    "\t=1+1",
    " =1+1",  # spreadsheets skip leading spaces
    "   +1",
    "\n=cmd",  # a line break first
    "\r\n@x",
    "\u3000=1",  # the ideographic space
    '＝HYPERLINK("http://evil.example")',  # full-width equals sign
    "＋1",
    "－1",
    "＠SUM(A1)",
]
KEEP = ["plain", "a = b", "1-1", "", "  text", "名称＝值", "'quoted"]


@pytest.mark.parametrize("value", RUN)
def test_what_a_spreadsheet_would_run_is_written_as_text(value: str) -> None:
    assert formula_safe(value) == "'" + value
    assert formula_unescaped(str(formula_safe(value))) == value


@pytest.mark.parametrize("value", KEEP)
def test_other_text_is_written_as_it_is(value: str) -> None:
    assert formula_safe(value) == value
    assert formula_unescaped(value) == value


def test_numbers_and_other_values_pass_through() -> None:
    assert formula_safe(-3) == -3 and formula_safe(None) is None
