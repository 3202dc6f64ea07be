"""Start-up checks: production refuses to run without a usable signing certificate."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from reports.signing import SigningUnavailable, signing_identity
from workbench.readiness import TAG as READINESS


@register(READINESS, "signing_certificate", deploy=False)
def signing_certificate_check(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    if not settings.PRODUCTION:
        return []
    try:
        signing_identity()
    except (SigningUnavailable, ValueError, OSError) as exc:
        return [
            Error(
                f"Sheets cannot be sealed: {exc}",
                id="reports.E001",
                hint="Set SHEET_SIGNING_P12 and SHEET_SIGNING_PASSPHRASE.",
            )
        ]
    return []
