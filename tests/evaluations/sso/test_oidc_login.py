"""OpenID Connect sign-in through the real authorization code flow against a real provider
(django-oauth-toolkit in a process of its own): the groups claim becomes team roles at each
login, an account is found by issuer and subject only, failures come back to the login page."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client

from evaluations.models import Membership, SsoIdentity
from evaluations.services import user_deactivate
from tests.evaluations.sso.conftest import oidc_login

pytestmark = pytest.mark.django_db


def roles(user: User) -> set[tuple[str, str, bool, str]]:
    return {
        (m.project.slug, m.role, m.is_admin, m.source)
        for m in Membership.objects.filter(user=user).select_related("project")
    }


def test_an_oidc_login_maps_the_groups_claim_and_follows_it_at_the_next_login(
    personas, oidc_on
) -> None:
    # A local account of the same name is not the provider's nora, and is left alone.
    local_nora = User.objects.create_user("nora", email="nora@example.test", password="x-local-1")
    oidc_on.set_groups("nora", ["wb-alpha-ops", "wb-alpha-admins", "wb-ghost"])
    client = Client()
    answer = oidc_login(client, oidc_on, "nora", next_url="/projects/alpha/")
    assert answer.status_code == 302 and answer["Location"] == "/projects/alpha/"
    identity = SsoIdentity.objects.get(provider="oidc", issuer=oidc_on.issuer)
    nora = identity.user
    assert nora != local_nora and nora.username == "nora-2"
    assert client.session["_auth_user_id"] == str(nora.pk)
    assert nora.email == "nora@example.test" and not nora.has_usable_password()
    assert roles(nora) == {("alpha", "ops", False, "sso"), ("alpha", "platform", True, "sso")}
    assert roles(local_nora) == set()
    assert client.get("/projects/alpha/").status_code == 200

    oidc_on.set_groups("nora", ["wb-beta-business"])
    again = Client()
    assert oidc_login(again, oidc_on, "nora").status_code == 302
    assert again.session["_auth_user_id"] == str(nora.pk)  # the same account, by subject
    assert roles(nora) == {("beta", "business", False, "sso")}
    assert SsoIdentity.objects.get(pk=identity.pk).groups == ["wb-beta-business"]


def test_the_login_page_offers_the_provider(personas, oidc_on) -> None:
    page = Client().get("/accounts/login/?next=/projects/alpha/")
    html = page.content.decode()
    assert "Sign in with Test IdP" in html
    assert 'href="/accounts/oidc/authenticate/?next=/projects/alpha/"' in html
    assert 'name="password"' in html  # local accounts are on: the form stays


def test_a_callback_this_browser_did_not_start_returns_to_the_login_page(personas, oidc_on) -> None:
    client = Client()
    answer = client.get("/accounts/oidc/callback/", {"code": "stolen", "state": "forged"})
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/"
    page = client.get("/accounts/login/").content.decode()
    assert "Signing in with Test IdP did not succeed" in page
    assert "_auth_user_id" not in client.session


def test_a_deactivated_account_cannot_sign_in_with_the_provider(personas, oidc_on) -> None:
    first = Client()
    assert oidc_login(first, oidc_on, "pia").status_code == 302
    pia = SsoIdentity.objects.get(provider="oidc", subject__isnull=False, user__username="pia").user
    user_deactivate(user=pia, actor=None, reason="left the company")
    assert first.get("/projects/alpha/")["Location"].startswith("/accounts/login/")
    again = Client()
    answer = oidc_login(again, oidc_on, "pia")
    assert answer["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in again.session
    assert roles(pia) == {("alpha", "ops", False, "sso")}  # left as it was


def test_without_oidc_its_urls_lead_to_the_login_page(personas) -> None:
    client = Client()
    for url in ("/accounts/oidc/authenticate/", "/accounts/oidc/callback/?code=x&state=y"):
        answer = client.get(url)
        assert answer.status_code == 302 and answer["Location"] == "/accounts/login/"
    assert "Sign in with" not in client.get("/accounts/login/").content.decode()


def test_logging_out_ends_the_session_at_the_provider_too(personas, oidc_on) -> None:
    import jwt

    browser = oidc_on.browser()  # the person's browser at the provider (its session cookie)
    client = Client()
    assert oidc_login(client, oidc_on, "pia", browser=browser).status_code == 302
    assert client.get("/projects/").status_code == 200
    out = client.post("/accounts/logout/")
    assert out.status_code == 302
    location = out["Location"]
    discovery = browser.get(oidc_on.issuer + "/.well-known/openid-configuration", timeout=10)
    assert location.split("?")[0] == discovery.json()["end_session_endpoint"]
    query = parse_qs(urlsplit(location).query)
    assert query["post_logout_redirect_uri"] == ["http://testserver/accounts/login/"]
    hint = jwt.decode(query["id_token_hint"][0], options={"verify_signature": False})
    assert hint["aud"] == oidc_on.client_id and hint["iss"] == oidc_on.issuer
    assert client.get("/projects/").status_code == 302  # ended here...
    # ...and at the provider, which sends the browser back to the login page.
    back = browser.get(location, allow_redirects=False, timeout=10)
    assert back.status_code == 302, back.text[:500]
    assert back.headers["Location"] == "http://testserver/accounts/login/"
    # Signing in again needs the password at the provider: its session is gone.
    start = Client().get("/accounts/oidc/authenticate/")
    asks = browser.get(start["Location"], allow_redirects=True, timeout=10)
    assert 'name="password"' in asks.text


def test_a_local_or_provider_less_logout_goes_to_the_login_page(
    personas, oidc_on, settings, login
) -> None:
    # A local account's session holds no ID token: a plain logout.
    out = login(personas["bob"]).post("/accounts/logout/")
    assert out.status_code == 302 and out["Location"] == "/accounts/login/"
    settings.OIDC_PROVIDER_LOGOUT = False
    client = Client()
    assert oidc_login(client, oidc_on, "pia").status_code == 302
    out = client.post("/accounts/logout/")
    assert out.status_code == 302 and out["Location"] == "/accounts/login/"
