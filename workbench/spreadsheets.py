"""Cells a spreadsheet would run: text written to CSV or XLSX that starts like a formula is
written with a leading apostrophe, which spreadsheets show as text; reading a file back takes
the apostrophe off again, so export and import round-trip.

"Starts like a formula" looks past leading white space (spaces, line breaks, the ideographic
space), which spreadsheets skip when they decide, and takes the full-width forms of the
formula characters (＝ ＋ － ＠) that some spreadsheets convert to their ASCII forms."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
FULL_WIDTH = ("＝", "＋", "－", "＠")
LEADING_SPACE = " \t\r\n\u3000\u00a0"
# A text starting with none of these cannot run (checked first: a record has 100,000s of cells).
SUSPECT_STARTS = frozenset(FORMULA_STARTS + FULL_WIDTH) | frozenset(LEADING_SPACE)


def _runs(value: str) -> bool:
    if value[:1] in FORMULA_STARTS or value[:1] in FULL_WIDTH:
        return True
    first = value.lstrip(LEADING_SPACE)[:1]
    return first != value[:1] and (first in FORMULA_STARTS or first in FULL_WIDTH)


def formula_safe(value: object) -> object:
    if isinstance(value, str) and value[:1] in SUSPECT_STARTS and _runs(value):
        return "'" + value
    return value


def formula_unescaped(value: str) -> str:
    """A cell read back from a file this product wrote (or one a spreadsheet saved)."""
    if value[:1] == "'" and _runs(value[1:]):
        return value[1:]
    return value
