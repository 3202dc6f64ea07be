from typing import Any

from django import template

from evaluations import history_labels
from evaluations.history_labels import field_label, value_label, verb_label

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
    """What an event changed, as (field, before, after) in the reader's words (labels for
    field names and choice values, products for candidates); creations list only their
    summary, and what an edit left as it was is not listed."""
    before, after = event.before or {}, event.after or {}
    if before and after:
        rows = [(key, before.get(key), v) for key, v in after.items() if before.get(key) != v]
    elif after and event.verb in SUMMARY_VERBS:
        rows = [(key, None, value) for key, value in after.items()]
    elif before and not after:
        rows = [(key, value, None) for key, value in before.items() if not isinstance(value, list)]
    else:
        rows = []
    names = getattr(event, "names", None)
    return [
        (field_label(key), value_label(key, old, names), value_label(key, new, names))
        for key, old, new in rows
    ]


@register.filter
def verb_word(verb: str) -> str:
    """A history verb in the reader's language."""
    return verb_label(verb)


@register.filter
def subject_words(event: Any) -> str:
    """What a history entry is about, in the reader's language (products by name, choices by
    label), whichever language it was written in."""
    return history_labels.subject_words(event)
