from django import template
from django.utils.translation import gettext

from poc.models import Outcome, Verdict

register = template.Library()


@register.filter
def css_string(value: str) -> str:
    """Text safe inside a CSS double-quoted string (the page header)."""
    return "".join(ch for ch in str(value) if ch >= " ").replace("\\", "\\\\").replace('"', '\\"')


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
