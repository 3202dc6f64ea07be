"""The product's two languages: English and Simplified Chinese."""

from django.utils.translation import get_language

ENGLISH, CHINESE = "en", "zh-hans"


def is_chinese(code: str | None) -> bool:
    return (code or "").lower().startswith("zh")


def product_language(code: str | None = None) -> str:
    """`zh-hans` for any Chinese code (zh, zh-CN, zh-Hans...), else `en`; by default the active
    language."""
    return CHINESE if is_chinese(code if code is not None else get_language()) else ENGLISH
