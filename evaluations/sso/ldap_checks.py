"""The start-up check of the LDAP directory's service account (see `checks` for the rules).

Imports python-ldap: `EvaluationsConfig.ready()` loads it only when LDAP is configured and the
LDAP extra is installed (`extra.ldap_extra_check` says so when it is not).
"""

from typing import Any

import ldap
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning

from evaluations.sso import ldap as directory
from evaluations.sso.extra import ldap_enabled


def ldap_bind_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if not ldap_enabled():
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
