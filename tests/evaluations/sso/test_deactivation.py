"""A deactivated account loses its sessions and its API tokens at once, whichever way it was
deactivated: the service, the admin (form and action), a command, or a plain save."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.test import Client

from evaluations.models import ApiToken, ProjectEvent
from evaluations.services import api_token_create, user_deactivate
from tests.evaluations.sso.conftest import password_login

pytestmark = pytest.mark.django_db

PAGE = "/projects/alpha/"
API = "/api/v1/projects/alpha/actions/"


@pytest.fixture
def signed_in(personas: dict[str, Any]) -> dict[str, Any]:
    """bob signed in twice (two browsers, real password logins) with a token of his; alice
    signed in too, with a token of her own."""
    bob = personas["bob"]
    bob.set_password("bob-secret-9")
    bob.save()
    browsers = [Client(), Client()]
    for browser in browsers:
        assert password_login(browser, "bob", "bob-secret-9").status_code == 302
        assert browser.get(PAGE).status_code == 200
    alice = Client()
    alice.force_login(personas["alice"])
    _bob_token, bob_raw = api_token_create(
        project=personas["alpha"], name="bob-ci", scopes=["read"], actor=bob
    )
    _alice_token, alice_raw = api_token_create(
        project=personas["alpha"], name="alice-ci", scopes=["read"], actor=personas["alice"]
    )
    return {
        **personas,
        "browsers": browsers,
        "alice_browser": alice,
        "bob_api": Client(headers={"Authorization": f"Bearer {bob_raw}"}),
        "alice_api": Client(headers={"Authorization": f"Bearer {alice_raw}"}),
    }


def assert_bob_is_out(s: dict[str, Any]) -> None:
    for browser in s["browsers"]:  # the old session cookies no longer work
        answer = browser.get(PAGE)
        assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
    assert s["bob_api"].get(API).status_code == 401
    assert ApiToken.objects.get(name="bob-ci").revoked_at is not None
    assert not Session.objects.filter(
        session_key__in=[b.session.session_key for b in s["browsers"]]
    ).exists()
    # Nobody else is touched.
    assert s["alice_browser"].get(PAGE).status_code == 200
    assert s["alice_api"].get(API).status_code == 200
    revoked = ProjectEvent.objects.get(project=s["alpha"], verb="token.revoked")
    assert revoked.subject.startswith("bob-ci")
    assert ProjectEvent.objects.filter(
        project=s["alpha"], verb="account.deactivated", subject="bob"
    ).exists()


def test_the_service_ends_sessions_and_revokes_tokens_at_once(signed_in) -> None:
    withdrawn = user_deactivate(user=signed_in["bob"], actor=signed_in["alice"], reason="left")
    assert (withdrawn.sessions, withdrawn.tokens) == (2, 1)
    assert not User.objects.get(username="bob").is_active
    assert_bob_is_out(signed_in)
    again = user_deactivate(user=signed_in["bob"], actor=None)
    assert (again.sessions, again.tokens) == (0, 0)
    assert ProjectEvent.objects.filter(verb="account.deactivated").count() == 1


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.test", "root-pw-1"))
    return client


def test_unticking_active_in_the_admin_goes_through_the_service(signed_in, admin_client) -> None:
    bob = User.objects.get(username="bob")
    url = f"/admin/auth/user/{bob.pk}/change/"
    page = admin_client.get(url)
    form = page.context["adminform"].form
    data = {
        name: value
        for name, value in form.initial.items()
        if name not in ("password", "is_active") and value is not None
    }
    data["groups"] = []
    data["user_permissions"] = []
    data["last_login_0"], data["last_login_1"] = bob.last_login.strftime(
        "%Y-%m-%d %H:%M:%S"
    ).split()
    data["date_joined_0"], data["date_joined_1"] = bob.date_joined.strftime(
        "%Y-%m-%d %H:%M:%S"
    ).split()
    for inline in page.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        data.update({management.add_prefix(k): v for k, v in management.initial.items()})
    answer = admin_client.post(url, data)
    assert answer.status_code == 302, answer.context["adminform"].form.errors
    assert not User.objects.get(pk=bob.pk).is_active
    assert_bob_is_out(signed_in)
    event = ProjectEvent.objects.get(verb="account.deactivated")
    assert event.actor_name == "root" and event.after == {"reason": "deactivated in the admin"}


def test_the_admin_action_deactivates_the_selected_accounts(signed_in, admin_client) -> None:
    answer = admin_client.post(
        "/admin/auth/user/",
        {"action": "deactivate", "_selected_action": [signed_in["bob"].pk]},
        follow=True,
    )
    said = [str(m) for m in answer.context["messages"]]
    assert said == ["bob is inactive. Sessions ended: 2; API tokens revoked: 1."]
    assert_bob_is_out(signed_in)


def test_the_command_deactivates(signed_in, capsys) -> None:
    call_command("deactivate_user", "bob")
    assert "bob: inactive; 2 session(s) ended, 1 API token(s) revoked" in capsys.readouterr().out
    assert_bob_is_out(signed_in)


def test_any_other_save_that_turns_active_off_does_the_same(signed_in) -> None:
    bob = User.objects.get(username="bob")
    bob.is_active = False
    bob.save()
    assert_bob_is_out(signed_in)


def test_a_token_whose_creator_is_inactive_is_refused_even_if_missed(signed_in) -> None:
    # An update() sends no signal: the token is still caught at its next use.
    User.objects.filter(username="bob").update(is_active=False)
    assert signed_in["bob_api"].get(API).status_code == 401
    assert ApiToken.objects.get(name="bob-ci").revoked_at is not None
