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
