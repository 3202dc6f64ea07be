"""Text that cannot be stored as it is: PostgreSQL refuses NUL characters in text columns, and
a lone surrogate (JSON's "\\ud800") is no Unicode text at all; both would fail the write."""

from typing import Any

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


def first_unstorable(value: Any, where: str) -> str:
    """The first string in decoded JSON that the database cannot store (a NUL, a lone
    surrogate), named by its place ("bundle.host is ..."); "" when there is none."""
    pending: list[tuple[Any, str]] = [(value, where)]
    while pending:
        item, path = pending.pop()
        if isinstance(item, str):
            if problem := text_problem(item):
                return f"{path} {problem}"
        elif isinstance(item, dict):
            for key, child in item.items():
                if problem := text_problem(str(key)):
                    return f"a key in {path} {problem}"
                pending.append((child, f"{path}.{key}"))
        elif isinstance(item, list):
            pending.extend((child, f"{path}[{n}]") for n, child in enumerate(item))
    return ""


def first_free(base: str, taken: set[str] | frozenset[str]) -> str:
    """`base`, or `base-2`, `base-3`... whichever is first not in `taken`."""
    name, n = base, 2
    while name in taken:
        name = f"{base}-{n}"
        n += 1
    return name
