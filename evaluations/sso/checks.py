"""Start-up checks of single sign-on, each naming the variable to fix and never a secret.

Registered by `EvaluationsConfig.ready()` when OIDC or LDAP is configured, under the
`readiness` tag (so `/readyz/` lists them as `oidc` and `ldap`): `manage.py` commands run them
when they start, and production web servers and workers refuse to start on an error.

A wrong configuration is an error: an issuer whose discovery document is missing or names
another issuer, a service account the directory refuses. A provider or directory that does not
answer at all (refused, timed out) is a warning: it says so at start-up and in the log, but does
not take the workbench out of service, since local accounts and CI tokens still work.
"""

from typing import Any

import ldap
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning

from evaluations.sso import ldap as directory
from evaluations.sso import oidc


def oidc_issuer_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if not oidc.enabled():
        return []
    try:
        oidc.provider()
    except oidc.ProviderUnavailable as exc:
        if exc.unreachable:
            return [
                Warning(
                    f"OIDC_ISSUER: the identity provider does not answer: {exc}",
                    id="evaluations.W101",
                    hint="Sign-in with it fails until it answers.",
                )
            ]
        return [
            Error(
                f"OIDC_ISSUER is wrong: {exc}",
                id="evaluations.E101",
                hint=(
                    "Set OIDC_ISSUER to the provider's issuer URL exactly as its discovery "
                    "document gives it (no trailing /.well-known/...)."
                ),
            )
        ]
    return []


def ldap_bind_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if not directory.enabled():
        return []
    try:
        directory.bind(settings.LDAP_BIND_DN, settings.LDAP_BIND_PASSWORD)
    except ldap.INVALID_CREDENTIALS:
        return [
            Error(
                "LDAP_BIND_PASSWORD is wrong: the directory refused LDAP_BIND_DN "
                f"{settings.LDAP_BIND_DN!r} with it",
                id="evaluations.E102",
                hint="Set LDAP_BIND_DN and LDAP_BIND_PASSWORD to the service account's.",
            )
        ]
    except (ldap.SERVER_DOWN, ldap.TIMEOUT, ldap.TIMELIMIT_EXCEEDED) as exc:
        return [
            Warning(
                f"LDAP_SERVER_URI: the directory does not answer: {_reason(exc)}",
                id="evaluations.W102",
                hint="LDAP logins fail until it answers.",
            )
        ]
    except ldap.LDAPError as exc:
        name = "LDAP_START_TLS" if settings.LDAP_START_TLS else "LDAP_BIND_DN"
        return [
            Error(
                f"{name}: binding as LDAP_BIND_DN failed: {_reason(exc)}",
                id="evaluations.E103",
                hint="Check LDAP_SERVER_URI, LDAP_BIND_DN and LDAP_START_TLS.",
            )
        ]
    return []


def _reason(exc: Exception) -> str:
    """python-ldap's message (its `desc` and `info`), which holds no password."""
    detail = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
    words = [str(detail.get("desc", type(exc).__name__)), str(detail.get("info", ""))]
    return ": ".join(w for w in words if w)[:300]
