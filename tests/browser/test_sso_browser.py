"""Single sign-on in real Chromium against the real test provider: signing in with the provider,
and logging out, which ends the provider's session too (the logout form's answer goes on to the
provider: the page's form-action policy must let it)."""

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest

from evaluations.sso import oidc
from tests.evaluations.sso.conftest import GROUP_ROLES, PROVIDER_USERS
from tests.oidc_provider.rig import Provider, start_provider

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def provider_for_live_server(
    live_server: Any, settings: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Provider]:
    running = start_provider(
        tmp_path / "idp", f"{live_server.url}/accounts/oidc/callback/", PROVIDER_USERS
    )
    monkeypatch.setattr(oidc, "_discovered", {})
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    settings.OIDC_ISSUER = running.issuer
    settings.OIDC_CLIENT_ID = running.client_id
    settings.OIDC_CLIENT_SECRET = running.client_secret
    settings.OIDC_RP_CLIENT_ID = running.client_id
    settings.OIDC_RP_CLIENT_SECRET = running.client_secret
    settings.OIDC_BUTTON_LABEL = "Test IdP"
    settings.SSO_GROUP_ROLES = GROUP_ROLES
    # What the settings add for a configured issuer (workbench/settings.py).
    origin = "/".join(running.issuer.split("/", 3)[:3])
    settings.SECURE_CSP = {**settings.SECURE_CSP, "form-action": ["'self'", origin]}
    yield running
    running.stop()


def _sign_in_at_the_provider(page: Any, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.get_by_role("link", name="Sign in with Test IdP").click()
    page.fill("input[name=username]", "pia")
    page.fill("input[name=password]", str(PROVIDER_USERS["pia"]["password"]))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/projects/")


def test_logging_out_ends_the_provider_session_in_a_browser(
    page: Any, live_server: Any, personas: Any, provider_for_live_server: Provider
) -> None:
    base = live_server.url
    _sign_in_at_the_provider(page, base)
    assert "Alpha" in page.content()  # pia's group gives her a role in alpha
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(f"{base}/accounts/login/")
    assert refused == []
    # The provider's session ended too: signing in again asks for the password there.
    page.get_by_role("link", name="Sign in with Test IdP").click()
    page.wait_for_selector("input[name=password]")
    provider_origin = "/".join(provider_for_live_server.issuer.split("/", 3)[:3])
    assert page.url.startswith(provider_origin) and "/o/authorize" in unquote(page.url)
