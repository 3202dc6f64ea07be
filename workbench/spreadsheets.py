"""Cells a spreadsheet would run: text written to CSV or XLSX that starts like a formula is
written with a leading apostrophe, which spreadsheets show as text; reading a file back takes
the apostrophe off again, so export and import round-trip."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(value: object) -> object:
    if isinstance(value, str) and value[:1] in FORMULA_STARTS:
        return "'" + value
    return value


def formula_unescaped(value: str) -> str:
    """A cell read back from a file this product wrote (or one a spreadsheet saved)."""
    if value[:1] == "'" and value[1:2] in FORMULA_STARTS and value[1:2]:
        return value[1:]
    return value
