"""Start-up checks: production refuses to run without a usable key for the history chain."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from evaluations import audit
from workbench.readiness import TAG as READINESS


@register(READINESS, "audit_key", deploy=False)
def audit_keys_check(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    if not settings.PRODUCTION:
        return []
    try:
        audit.audit_keys()
    except audit.AuditKeysUnavailable as exc:
        return [
            Error(
                f"The project history cannot be keyed: {exc}",
                id="evaluations.E010",
                hint=(
                    "Set WORKBENCH_AUDIT_KEYS to ID:KEY "
                    "(manage.py rotate_audit_key --new-key prints one)."
                ),
            )
        ]
    return []
