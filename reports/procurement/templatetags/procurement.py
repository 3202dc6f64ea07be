"""Amounts as their reader reads them: grouped in the active language, with the currency's
sign, rounded to whole units for display only (the figures stay exact)."""

from decimal import Decimal

from babel.numbers import format_currency
from django import template
from django.utils.translation import get_language, to_locale

register = template.Library()


@register.filter
def money(value: Decimal | None, currency: str) -> str:
    if value is None:
        return "—"
    whole = Decimal(value).quantize(Decimal(1))
    return format_currency(
        whole, currency, format="¤#,##0", locale=to_locale(get_language() or "en"),
        currency_digits=False,
    )  # fmt: skip
