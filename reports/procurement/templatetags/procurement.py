"""Amounts as their reader reads them: grouped in the active language, with the currency's
sign, rounded to whole units for display only (the figures stay exact)."""

from decimal import Decimal

from babel.numbers import format_compact_currency, format_currency
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


def compact_money(value: Decimal, currency: str) -> str:
    """An amount short enough for a chart's axis: $1.2M, ¥123.5万."""
    return format_compact_currency(
        value, currency, locale=to_locale(get_language() or "en"), fraction_digits=1
    )


@register.filter
def signed_money(value: Decimal | str | None, currency: str) -> str:
    """A difference: +$1,200 or −$800 (a frozen figure comes as text)."""
    if value is None:
        return "—"
    amount = Decimal(value)
    sign = "+" if amount > 0 else "−" if amount < 0 else "±"
    return sign + money(abs(amount), currency)


@register.filter
def money_cents(value: Decimal | None, currency: str) -> str:
    """A small amount (per GPU-hour) to the cent."""
    if value is None:
        return "—"
    cents = Decimal(value).quantize(Decimal("0.01"))
    return format_currency(cents, currency, locale=to_locale(get_language() or "en"))
