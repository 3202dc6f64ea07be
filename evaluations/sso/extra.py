"""The LDAP extra: LDAP sign-in needs python-ldap and django-auth-ldap, which the default install
leaves out (python-ldap ships no wheels and builds against the OpenLDAP and SASL headers).

Nothing here imports them: `ldap_enabled()` answers from the settings alone, and
`ldap_extra_check` (a system check every process runs at start-up) stops a workbench whose
environment sets any `LDAP_*` variable while the packages are missing, naming them and the
command that installs them, instead of failing at the first LDAP login.
"""

import importlib
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error

# Distribution name -> the module it provides.
LDAP_PACKAGES = {"python-ldap": "ldap", "django-auth-ldap": "django_auth_ldap"}
LDAP_INSTALL = "pip install 'gpu-selection-workbench[ldap]' (from a clone: make run EXTRAS=ldap)"


def ldap_enabled() -> bool:
    return bool(settings.LDAP_SERVER_URI)


def ldap_missing() -> list[str]:
    """The LDAP extra's packages that cannot be imported here."""
    missing = []
    for package, module in LDAP_PACKAGES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(package)
    return missing


def ldap_extra_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    names = settings.LDAP_VARIABLES_SET
    if not names:
        return []
    missing = ldap_missing()
    if not missing:
        return []
    return [
        Error(
            f"{', '.join(names)} set, but LDAP sign-in needs {' and '.join(missing)}, "
            f"which are not installed: {LDAP_INSTALL}",
            id="evaluations.E104",
        )
    ]
