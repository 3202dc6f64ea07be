"""Start-up checks of single sign-on, each naming the variable to fix and never a secret.

Registered by `EvaluationsConfig.ready()` when OIDC or LDAP is configured, under the
`readiness` tag (so `/readyz/` lists them as `oidc` and `ldap`; the LDAP one is in
`ldap_checks`, which imports the LDAP extra's packages): `manage.py` commands run them
when they start, and production web servers and workers refuse to start on an error.

A wrong configuration is an error: an issuer whose discovery document is missing or names
another issuer, a service account the directory refuses. A provider or directory that does not
answer at all (refused, timed out) is a warning: it says so at start-up and in the log, but does
not take the workbench out of service, since local accounts and CI tokens still work.
"""

from typing import Any

from django.core.checks import CheckMessage, Error, Warning

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
