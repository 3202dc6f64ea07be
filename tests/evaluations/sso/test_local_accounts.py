"""LOCAL_ACCOUNTS=false: local passwords are refused, except a superuser's (the way in when the
directory or the identity provider is down); LDAP keeps working through the same form."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests import ldap_rig
from tests.evaluations.sso.conftest import password_login

pytestmark = pytest.mark.django_db


def test_local_accounts_off_refuses_a_local_password(personas, settings) -> None:
    User.objects.create_user("pat", password="pat-local-pw-4")
    signed_in = Client()
    assert password_login(signed_in, "pat", "pat-local-pw-4").status_code == 302
    settings.LOCAL_ACCOUNTS = False
    refused = Client()
    answer = password_login(refused, "pat", "pat-local-pw-4")
    assert answer.status_code == 200 and "_auth_user_id" not in refused.session
    assert "enter a correct username and password" in answer.content.decode()
    # A session from before the switch ends too.
    assert signed_in.get("/projects/")["Location"].startswith("/accounts/login/")


def test_a_superuser_keeps_a_local_password(personas, settings) -> None:
    User.objects.create_superuser("root", "root@example.test", "root-local-pw-2")
    settings.LOCAL_ACCOUNTS = False
    client = Client()
    assert password_login(client, "root", "root-local-pw-2").status_code == 302
    assert client.get("/admin/").status_code == 200


def test_ldap_still_signs_in_with_local_accounts_off(personas, ldap_on, settings) -> None:
    settings.LOCAL_ACCOUNTS = False
    client = Client()
    assert password_login(client, "lena", ldap_rig.PASSWORDS["lena"]).status_code == 302
    assert client.get("/projects/alpha/").status_code == 200


def test_with_only_oidc_the_form_is_the_administrators(personas, oidc_on, settings) -> None:
    settings.LOCAL_ACCOUNTS = False
    html = Client().get("/accounts/login/").content.decode()
    assert "Sign in with Test IdP" in html
    assert "<details>" in html and "Administrator account" in html
