"""Text that cannot be stored as it is: PostgreSQL refuses NUL characters in text columns, and
a lone surrogate (JSON's "\\ud800") is no Unicode text at all; both would fail the write."""

from django.utils.translation import gettext as _


def text_problem(value: str) -> str:
    """Why `value` cannot be stored ("" when it can), in the active language."""
    if "\x00" in value:
        return _("contains a NUL character (\\u0000)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _("is not valid Unicode text (a lone surrogate such as \\ud800)")
    return ""
