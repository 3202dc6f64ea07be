"""Fixtures of the single sign-on tests: a real slapd with a test directory (tests/ldap_rig.py),
a real OpenID Connect provider (tests/oidc_provider/), and the workbench configured for them."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import ldap_rig
from tests.oidc_provider.rig import Provider, start_provider

CALLBACK = "http://testserver/accounts/oidc/callback/"
GROUP_ROLES = {
    "wb-alpha-ops": [{"project": "alpha", "role": "ops"}],
    "wb-alpha-admins": [{"project": "alpha", "role": "platform", "admin": True}],
    "wb-beta-business": [{"project": "beta", "role": "business"}],
    "wb-alpha-observers": [{"project": "alpha", "role": "observer"}],
    "wb-ghost": [{"project": "ghost", "role": "observer"}],
}
PROVIDER_USERS = {
    "nora": {"password": "nora-pass-52", "email": "nora@example.test", "groups": []},
    "pia": {"password": "pia-pass-19", "email": "pia@example.test", "groups": ["wb-alpha-ops"]},
}


@pytest.fixture(autouse=True)
def _fresh_sso_state(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    from evaluations.services import sso
    from evaluations.sso import oidc

    monkeypatch.setattr(oidc, "_discovered", {})
    monkeypatch.setattr(sso, "_unknown_projects_logged", set())
    # Whatever proxy the machine has, the test servers are on loopback.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    settings.SSO_GROUP_ROLES = GROUP_ROLES


@pytest.fixture
def directory(tmp_path: Path) -> Iterator[ldap_rig.Directory]:
    """A slapd of this test's own; fails (not skips) when slapd is not installed."""
    running = ldap_rig.start_directory(tmp_path / "slapd")
    yield running
    running.stop()


@pytest.fixture
def ldap_on(settings: Any, directory: ldap_rig.Directory) -> ldap_rig.Directory:
    settings.LDAP_SERVER_URI = directory.uri
    settings.LDAP_BIND_DN = ldap_rig.SERVICE_DN
    settings.LDAP_BIND_PASSWORD = ldap_rig.SERVICE_PASSWORD
    settings.LDAP_USER_SEARCH_BASE = f"ou=people,{ldap_rig.SUFFIX}"
    settings.LDAP_USER_FILTER = "(uid=%(user)s)"
    settings.LDAP_USER_DN_TEMPLATE = ""
    settings.LDAP_GROUP_SEARCH_BASE = f"ou=groups,{ldap_rig.SUFFIX}"
    settings.LDAP_GROUP_TYPE = "groupofnames"
    # As the settings list it when LDAP_SERVER_URI is set: after local accounts.
    backends = list(settings.AUTHENTICATION_BACKENDS)
    backends.insert(
        backends.index("evaluations.sso.local.LocalAccountsBackend") + 1, settings.LDAP_BACKEND
    )
    settings.AUTHENTICATION_BACKENDS = backends
    return directory


@pytest.fixture(scope="session")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    running = start_provider(tmp_path_factory.mktemp("oidc-provider"), CALLBACK, PROVIDER_USERS)
    yield running
    running.stop()


@pytest.fixture
def oidc_on(settings: Any, provider: Provider) -> Provider:
    settings.OIDC_ISSUER = provider.issuer
    settings.OIDC_CLIENT_ID = provider.client_id
    settings.OIDC_CLIENT_SECRET = provider.client_secret
    settings.OIDC_BUTTON_LABEL = "Test IdP"
    for name, person in PROVIDER_USERS.items():
        provider.set_groups(name, list(person["groups"]))  # type: ignore[arg-type]
    return provider


def password_login(client: Any, username: str, password: str) -> Any:
    return client.post("/accounts/login/", {"username": username, "password": password})


def oidc_login(
    client: Any,
    provider: Provider,
    username: str,
    next_url: str = "/projects/",
    browser: Any = None,
) -> Any:
    """The authorization code flow as a browser goes through it: the workbench sends it to the
    provider, it signs in there, and comes back to the callback with a code; the workbench
    then fetches the token, keys and userinfo from the provider over HTTP."""
    start = client.get("/accounts/oidc/authenticate/", {"next": next_url})
    assert start.status_code == 302 and start["Location"].startswith(provider.issuer), start
    back = provider.sign_in(
        start["Location"], username, str(PROVIDER_USERS[username]["password"]), CALLBACK, browser
    )
    return client.get(back.removeprefix("http://testserver"))
