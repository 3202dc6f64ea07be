from typing import Any

from django import template

register = template.Library()


@register.filter
def localized(obj: Any, field: str) -> str:
    """A catalog text in the active language: {{ solution|localized:"scale" }}."""
    return obj.localized(field)


@register.filter
def lookup(mapping: dict[str, Any] | None, key: str) -> Any:
    if not mapping:
        return None
    return mapping.get(key)


SUMMARY_VERBS = {"template.applied", "suite.imported", "membership.set"}


@register.filter
def event_changes(event: Any) -> list[tuple[str, Any, Any]]:
    """What an event changed, as (field, before, after); creations list only their summary."""
    before, after = event.before or {}, event.after or {}
    if before and after:
        return [(key, before.get(key), value) for key, value in after.items()]
    if after and event.verb in SUMMARY_VERBS:
        return [(key, None, value) for key, value in after.items()]
    if before and not after:
        return [(key, value, None) for key, value in before.items() if not isinstance(value, list)]
    return []
