"""LDAP sign-in behind the password form, through django-auth-ldap.

The user name typed is looked up in the directory (`LDAP_USER_SEARCH_BASE` and
`LDAP_USER_FILTER`, or `LDAP_USER_DN_TEMPLATE`) with the service account (`LDAP_BIND_DN`), and
the password is checked by binding as the entry found. The account here has the same user name
(made at the first login, without a local password); name and e-mail follow the directory.
Groups are read here, not by the library, so that a failed group search keeps the person's
roles as they were instead of taking them all away. A known LDAP account whose entry the
directory no longer returns is deactivated at its next login attempt.
"""

import logging
from typing import Any

import ldap
from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from django_auth_ldap.backend import LDAPBackend, _LDAPUser
from django_auth_ldap.config import LDAPSearch, LDAPSettings
from ldap.filter import escape_filter_chars

logger = logging.getLogger(__name__)

USER_ATTRIBUTES = {"first_name": "givenName", "last_name": "sn", "email": "mail"}


def enabled() -> bool:
    return bool(settings.LDAP_SERVER_URI)


def connection_options() -> dict[int, Any]:
    timeout = settings.SSO_TIMEOUT_S
    return {
        ldap.OPT_NETWORK_TIMEOUT: timeout,
        ldap.OPT_TIMEOUT: timeout,
        ldap.OPT_REFERRALS: 0,
    }


def library_settings() -> dict[str, Any]:
    """django-auth-ldap's settings (AUTH_LDAP_*), made from the LDAP_* variables."""
    template = settings.LDAP_USER_DN_TEMPLATE or None
    search = None
    if not template:
        search = LDAPSearch(
            settings.LDAP_USER_SEARCH_BASE, ldap.SCOPE_SUBTREE, settings.LDAP_USER_FILTER
        )
    return {
        "SERVER_URI": settings.LDAP_SERVER_URI,
        "BIND_DN": settings.LDAP_BIND_DN,
        "BIND_PASSWORD": settings.LDAP_BIND_PASSWORD,
        "START_TLS": settings.LDAP_START_TLS,
        "CONNECTION_OPTIONS": connection_options(),
        "USER_SEARCH": search,
        "USER_DN_TEMPLATE": template,
        "USER_ATTR_MAP": USER_ATTRIBUTES,
        "ALWAYS_UPDATE_USER": True,
    }


def bind(dn: str, password: str) -> None:
    """Bind to the directory as `dn` (raises ldap.LDAPError), as the backend would."""
    connection = ldap.initialize(settings.LDAP_SERVER_URI)
    try:
        for option, value in connection_options().items():
            connection.set_option(option, value)
        if settings.LDAP_START_TLS:
            connection.start_tls_s()
        connection.simple_bind_s(dn, password)
    finally:
        connection.unbind_s()


class DirectoryBackend(LDAPBackend):
    """Declines when LDAP is not configured; maps the person's groups at each login."""

    _settings: LDAPSettings | None = None

    @property
    def settings(self) -> LDAPSettings:
        if self._settings is None:
            self._settings = LDAPSettings(self.settings_prefix, library_settings())
        return self._settings

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if not enabled():
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)

    def authenticate_ldap_user(self, ldap_user: _LDAPUser, password: str) -> Any:
        from evaluations.models import SsoProvider
        from evaluations.services import sso_login

        user = super().authenticate_ldap_user(ldap_user, password)
        if user is None:
            self._deactivate_if_gone(ldap_user)
            return None
        if not user.is_active:
            return user  # refused by the login form, unchanged
        groups = self._groups(ldap_user)
        if groups is None:  # the directory did not answer: roles stay as they are
            return user
        sso_login(
            user=user,
            provider=SsoProvider.LDAP,
            subject=user.get_username().lower(),
            groups=sorted(groups),
        )
        return user

    def get_user(self, user_id: Any) -> Any:
        user = super().get_user(user_id)
        return user if user is not None and user.is_active else None

    def _groups(self, ldap_user: _LDAPUser) -> set[str] | None:
        """The names (cn) of the user's groups under LDAP_GROUP_SEARCH_BASE; None when the
        search fails. No search base: no groups."""
        base = settings.LDAP_GROUP_SEARCH_BASE
        if not base:
            return set()
        if settings.LDAP_GROUP_TYPE == "posixgroup":
            uid = (ldap_user.attrs or {}).get("uid", [ldap_user._username])[0]
            query = f"(&(objectClass=posixGroup)(memberUid={escape_filter_chars(uid)}))"
        else:
            query = f"(&(objectClass=groupOfNames)(member={escape_filter_chars(ldap_user.dn)}))"
        try:
            found = ldap_user.connection.search_s(base, ldap.SCOPE_SUBTREE, query, ["cn"])
        except ldap.LDAPError as exc:
            logger.warning("LDAP group search under %s failed: %s", base, exc)
            return None
        names: set[str] = set()
        for dn, attributes in found:
            if dn is None:  # a referral
                continue
            names.update(value.decode() for value in attributes.get("cn", []))
        return names

    def _deactivate_if_gone(self, ldap_user: _LDAPUser) -> None:
        """A login failed. When the account came from the directory and the directory, asked
        again, has no entry for it any more, the account is deactivated (its sessions and API
        tokens go with it). A wrong password or an unreachable directory changes nothing."""
        from evaluations.models import SsoIdentity, SsoProvider
        from evaluations.services import user_deactivate

        name = str(ldap_user._username).lower()
        identity = (
            SsoIdentity.objects.select_related("user")
            .filter(provider=SsoProvider.LDAP, issuer="", subject=name, user__is_active=True)
            .first()
        )
        if identity is None or settings.LDAP_USER_DN_TEMPLATE:
            return  # with a DN template, a missing entry and a wrong password look alike
        probe = _LDAPUser(self, username=ldap_user._username)
        try:
            entries = self.settings.USER_SEARCH.execute(probe.connection, {"user": probe._username})
        except ldap.LDAPError as exc:
            logger.warning("LDAP: could not look %s up again: %s", name, exc)
            return
        if entries:
            return
        user: User = identity.user
        logger.warning("LDAP: %s is no longer in the directory; deactivating it", name)
        user_deactivate(user=user, actor=None, reason="no longer in the LDAP directory")
