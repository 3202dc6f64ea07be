from importlib import import_module

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.utils.translation import gettext_lazy as _


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = _("Evaluations")

    def ready(self) -> None:
        from evaluations import checks as _checks  # noqa: F401 - registers the audit key check
        from evaluations import signals  # noqa: F401 - deactivation ends sessions and tokens
        from evaluations.api import schema  # noqa: F401 - registers the OpenAPI auth extensions
        from evaluations.sso.checks import oidc_issuer_check
        from evaluations.sso.extra import ldap_extra_check, ldap_missing
        from workbench.readiness import TAG as READINESS

        # LDAP variables without the LDAP extra installed stop every process at start-up.
        checks.register(ldap_extra_check)
        # Only what is configured is checked (and listed on /readyz/): a check of single
        # sign-on asks the provider or the directory over the network.
        if settings.OIDC_ISSUER:
            checks.register(oidc_issuer_check, READINESS, "oidc")
        if settings.LDAP_SERVER_URI and not ldap_missing():
            ldap_checks = import_module("evaluations.sso.ldap_checks")  # the LDAP extra's
            checks.register(ldap_checks.ldap_bind_check, READINESS, "ldap")
