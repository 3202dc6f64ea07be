"""Licences as SPDX expressions, checked against the SPDX licence and exception lists that the
`license-expression` package carries (no download).

`Apache-2.0`, `GPL-2.0-or-later WITH Classpath-exception-2.0`, `MIT OR Apache-2.0` and
proprietary parts as `LicenseRef-<name>` are accepted; an identifier that is on neither list is
refused, naming it and the nearest known identifiers.
"""

import difflib
import re
from functools import cache

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from license_expression import ExpressionError, Licensing, get_spdx_licensing

MAX_LENGTH = 500
# A reference to a licence outside the SPDX list (SPDX 2.3, annex D).
LICENSE_REF = re.compile(r"^(DocumentRef-[A-Za-z0-9.\-]+:)?LicenseRef-[A-Za-z0-9.\-]+$")


@cache
def _licensing() -> Licensing:
    return get_spdx_licensing()


@cache
def _known_keys() -> tuple[str, ...]:
    # The package also knows scancode's own LicenseRef- names: not suggested to people.
    return tuple(sorted(k for k in _licensing().known_symbols if not k.startswith("LicenseRef-")))


def nearest(key: str, limit: int = 3) -> list[str]:
    """The known SPDX identifiers closest to `key` (case ignored)."""
    by_lower = {k.lower(): k for k in _known_keys()}
    found = difflib.get_close_matches(key.lower(), list(by_lower), n=limit, cutoff=0.6)
    return [by_lower[k] for k in found]


def spdx_normalize(expression: str) -> str:
    """The expression in SPDX's spelling (`apache-2.0 or mit` -> `Apache-2.0 OR MIT`); raises
    ValidationError with a message naming what is wrong."""
    text = " ".join(expression.split())
    if not text:
        raise ValidationError(_("Give an SPDX expression, for example Apache-2.0."))
    if len(text) > MAX_LENGTH:
        raise ValidationError(
            _("An SPDX expression has at most %(max)s characters.") % {"max": MAX_LENGTH}
        )
    licensing = _licensing()
    parsed = _parse(licensing, text, strict=False)
    unknown = [
        key
        for key in licensing.unknown_license_keys(parsed, unique=True)
        if not LICENSE_REF.match(key)
    ]
    if unknown:
        key = unknown[0]
        near = nearest(key)
        hint = (
            _("the nearest known are %(near)s") % {"near": ", ".join(near)}
            if near
            else _("no known identifier is near it")
        )
        raise ValidationError(
            _(
                "%(key)s is not an SPDX licence or exception identifier (%(hint)s); name a "
                "licence outside the SPDX list as LicenseRef-<name>."
            )
            % {"key": key, "hint": hint}
        )
    return str(_parse(licensing, text, strict=True))


def _parse(licensing: Licensing, text: str, *, strict: bool) -> object:
    try:
        parsed = licensing.parse(text, validate=False, strict=strict)
    except ExpressionError as exc:
        raise ValidationError(
            _("%(expression)s is no SPDX expression: %(reason)s")
            % {"expression": text, "reason": str(exc).split("\n")[0][:200]}
        ) from None
    if parsed is None:
        raise ValidationError(_("Give an SPDX expression, for example Apache-2.0."))
    return parsed


def is_spdx(expression: str) -> bool:
    try:
        spdx_normalize(expression)
    except ValidationError:
        return False
    return True
