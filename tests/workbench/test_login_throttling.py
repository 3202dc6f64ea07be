"""Wrong passwords are throttled: after the limit the login is refused with a message, even
with the right password, until the cool-off passes or staff unlock it."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def _login(client: Client, password: str):
    return client.post("/accounts/login/", {"username": "pat", "password": password})


def test_the_account_is_locked_after_the_limit_and_unlocked_by_staff(settings) -> None:
    get_user_model().objects.create_user("pat", password="right-horse-battery")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = _login(client, "wrong")
        assert response.status_code == 200 and b"id_password" in response.content
    assert _login(client, "wrong").status_code == 429  # the limit-th wrong password
    locked = _login(client, "right-horse-battery")
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "15 minutes" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    call_command("axes_reset_username", "pat", verbosity=0)
    assert _login(client, "right-horse-battery").status_code == 302
    assert "_auth_user_id" in client.session


def test_a_success_before_the_limit_resets_the_count(settings) -> None:
    get_user_model().objects.create_user("pat", password="right-horse-battery")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "wrong")
    assert _login(client, "right-horse-battery").status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "wrong").status_code == 200
    assert _login(client, "right-horse-battery").status_code == 302
