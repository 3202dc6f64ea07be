"""LDAP sign-in behind the password form, through django-auth-ldap.

The user name typed is looked up in the directory (`LDAP_USER_SEARCH_BASE` and
`LDAP_USER_FILTER`, or `LDAP_USER_DN_TEMPLATE`) with the service account (`LDAP_BIND_DN`), and
the password is checked by binding as the entry found. The account here has the same user name
(made at the first login, without a local password); name and e-mail follow the directory.
Groups are read here, not by the library, so that a failed group search keeps the person's
roles as they were instead of taking them all away. A known LDAP account whose entry the
directory no longer returns is deactivated at its next login attempt, and `directory_sync` (the
beat, every LDAP_SYNC_MINUTES; `manage.py sync_directory`) does the same, and makes roles follow
groups, for everyone who ever signed in this way, without waiting for them to come back.
"""

import logging
from dataclasses import dataclass, field
from typing import Any

import ldap
from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from django_auth_ldap.backend import LDAPBackend, _LDAPUser
from django_auth_ldap.config import LDAPSearch, LDAPSettings
from ldap.dn import escape_dn_chars
from ldap.filter import escape_filter_chars

from evaluations.sso.extra import ldap_enabled

logger = logging.getLogger(__name__)

USER_ATTRIBUTES = {"first_name": "givenName", "last_name": "sn", "email": "mail"}


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


def _bound(dn: str, password: str) -> Any:
    """A connection to the directory, bound as `dn` (raises ldap.LDAPError)."""
    connection = ldap.initialize(settings.LDAP_SERVER_URI)
    try:
        for option, value in connection_options().items():
            connection.set_option(option, value)
        if settings.LDAP_START_TLS:
            connection.start_tls_s()
        connection.simple_bind_s(dn, password)
    except ldap.LDAPError:
        connection.unbind_s()
        raise
    return connection


def bind(dn: str, password: str) -> None:
    """Bind to the directory as `dn` (raises ldap.LDAPError), as the backend would."""
    _bound(dn, password).unbind_s()


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
        if not ldap_enabled():
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
        """The person's groups, or None when the search fails (see `directory_groups`)."""
        uid = (ldap_user.attrs or {}).get("uid", [ldap_user._username])[0]
        try:
            return directory_groups(ldap_user.connection, dn=ldap_user.dn, uid=uid)
        except ldap.LDAPError as exc:
            logger.warning("LDAP group search failed: %s", exc)
            return None

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


def directory_groups(connection: Any, *, dn: str, uid: str) -> set[str]:
    """The names (cn) of the groups under LDAP_GROUP_SEARCH_BASE that hold the entry `dn`
    (groupOfNames) or the user id `uid` (posixGroup); no search base: no groups. Raises
    ldap.LDAPError when the directory does not answer."""
    base = settings.LDAP_GROUP_SEARCH_BASE
    if not base:
        return set()
    if settings.LDAP_GROUP_TYPE == "posixgroup":
        query = f"(&(objectClass=posixGroup)(memberUid={escape_filter_chars(uid)}))"
    else:
        query = f"(&(objectClass=groupOfNames)(member={escape_filter_chars(dn)}))"
    names: set[str] = set()
    for entry_dn, attributes in connection.search_s(base, ldap.SCOPE_SUBTREE, query, ["cn"]):
        if entry_dn is None:  # a referral
            continue
        names.update(value.decode() for value in attributes.get("cn", []))
    return names


# --- directory sync ------------------------------------------------------------------------

# A pass that finds more than this share of the directory's accounts gone (and more than one)
# deactivates nobody: a changed search base or filter is likelier than half the staff leaving.
MASS_DEACTIVATION_SHARE = 0.5


@dataclass
class DirectorySync:
    """What one pass did: accounts compared, deactivated, and roles granted or removed."""

    checked: int = 0
    deactivated: list[str] = field(default_factory=list)
    roles_changed: int = 0
    problem: str = ""  # why nothing (or no deactivation) was done


def _entry(connection: Any, name: str) -> tuple[str, dict[str, list[bytes]]] | None:
    """The directory entry of user name `name`, or None when the directory answers that there
    is none. Raises ldap.LDAPError when it does not answer."""
    attributes = ["uid"]
    if settings.LDAP_USER_DN_TEMPLATE:
        dn = settings.LDAP_USER_DN_TEMPLATE % {"user": escape_dn_chars(name)}
        try:
            found = connection.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", attributes)
        except ldap.NO_SUCH_OBJECT:
            return None
    else:
        query = settings.LDAP_USER_FILTER % {"user": escape_filter_chars(name)}
        found = connection.search_s(
            settings.LDAP_USER_SEARCH_BASE, ldap.SCOPE_SUBTREE, query, attributes
        )
    entries = [(dn, attrs) for dn, attrs in found if dn is not None]
    return entries[0] if len(entries) == 1 else None


def directory_sync(*, allow_mass_deactivation: bool = False) -> DirectorySync:
    """Compare every active account that signed in through LDAP with the directory now: one
    whose entry is gone is deactivated (sessions and API tokens with it, as at a login
    attempt), and the others' roles follow their groups as at a login. The directory is read
    whole first: if it stops answering midway, nothing is changed. More than
    MASS_DEACTIVATION_SHARE of the accounts gone deactivates nobody unless allowed."""
    from evaluations.models import SsoIdentity, SsoProvider
    from evaluations.services import sso_groups_refresh, user_deactivate

    report = DirectorySync()
    if not ldap_enabled():
        report.problem = "LDAP is not configured (LDAP_SERVER_URI)"
        return report
    identities = list(
        SsoIdentity.objects.select_related("user")
        .filter(provider=SsoProvider.LDAP, issuer="", user__is_active=True)
        .order_by("pk")
    )
    gone: list[SsoIdentity] = []
    present: list[tuple[SsoIdentity, set[str]]] = []
    try:
        connection = _bound(settings.LDAP_BIND_DN, settings.LDAP_BIND_PASSWORD)
        try:
            for identity in identities:
                entry = _entry(connection, identity.subject)
                if entry is None:
                    gone.append(identity)
                    continue
                dn, attributes = entry
                uid = next(iter(attributes.get("uid", [])), identity.subject.encode())
                groups = directory_groups(connection, dn=dn, uid=uid.decode())
                present.append((identity, groups))
        finally:
            connection.unbind_s()
    except ldap.LDAPError as exc:
        report.problem = f"the directory did not answer, nothing was changed: {_ldap_words(exc)}"
        logger.warning("LDAP sync: %s", report.problem)
        return report
    report.checked = len(identities)
    for identity, groups in present:
        changes = sso_groups_refresh(identity=identity, groups=sorted(groups))
        report.roles_changed += len(changes.granted) + len(changes.updated) + len(changes.removed)
    too_many = len(gone) > 1 and len(gone) > MASS_DEACTIVATION_SHARE * len(identities)
    if too_many and not allow_mass_deactivation:
        report.problem = (
            f"{len(gone)} of {len(identities)} accounts are not in the directory any more: "
            "nobody was deactivated (check LDAP_USER_SEARCH_BASE and LDAP_USER_FILTER; "
            "`manage.py sync_directory --allow-mass-deactivation` if it is true)"
        )
        logger.error("LDAP sync: %s", report.problem)
        return report
    for identity in gone:
        user_deactivate(user=identity.user, actor=None, reason="no longer in the LDAP directory")
        report.deactivated.append(identity.user.get_username())
        logger.warning("LDAP sync: %s is no longer in the directory; deactivated", identity.subject)
    return report


def _ldap_words(exc: ldap.LDAPError) -> str:
    detail = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
    return str(detail.get("desc") or exc)[:200] + (
        f" ({detail['info']})" if detail.get("info") else ""
    )
