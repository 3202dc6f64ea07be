"""Start-up checks: production refuses to run without usable credential keys."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from poc.probes import credentials
from workbench.readiness import TAG as READINESS


@register(READINESS, "credentials_key", deploy=False)
def credentials_keys_check(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    if not settings.PRODUCTION:
        return []
    try:
        credentials.keys()
    except credentials.CredentialsUnavailable as exc:
        return [
            Error(
                f"Cluster credentials cannot be used: {exc}",
                id="poc.E001",
                hint=(
                    "Set WORKBENCH_CREDENTIALS_KEYS to ID:KEY "
                    "(manage.py rotate_credentials_key --new-key prints one)."
                ),
            )
        ]
    return []
