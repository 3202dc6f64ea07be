from django import template
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from poc.models import (
    Outcome,
)
from poc.probes.models import (
    Verdict,
)

register = template.Library()


@register.filter
def css_string(value: str) -> SafeString:
    """Text safe inside a CSS double-quoted string in a <style> element (the page header).
    A style element's text is not HTML: entities would be shown as written ("R&amp;D"), so
    nothing is HTML-escaped; instead CSS escapes keep quotes, backslashes and angle brackets
    (a "</style>") from ending the string or the element."""
    text = "".join(ch for ch in str(value) if ch >= " ")
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("<", "\\3c ").replace(">", "\\3e ")
    return mark_safe(text)  # noqa: S308 - CSS-escaped above, inside a CSS string only


@register.filter
def outcome_word(value: str) -> str:
    try:
        return gettext(str(Outcome(value).label))
    except ValueError:
        return value


@register.filter
def verdict_word(value: str) -> str:
    try:
        return gettext(str(Verdict(value).label))
    except ValueError:
        return value or "—"


@register.filter
def beyond(items: object, shown: int) -> int:
    """How many of `items` are left once the first `shown` are listed."""
    try:
        return max(0, len(items) - int(shown))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
