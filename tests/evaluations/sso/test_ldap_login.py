"""LDAP logins through the password form, against a real slapd: groups become team roles at each
login, a group left in the directory takes its role away at the next one, manual roles stay."""

import logging
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client

from evaluations.models import Membership, ProjectEvent, SsoIdentity
from evaluations.services import membership_set
from tests import ldap_rig
from tests.evaluations.sso.conftest import password_login

pytestmark = pytest.mark.django_db


def roles(username: str) -> set[tuple[str, str, bool, str]]:
    return {
        (m.project.slug, m.role, m.is_admin, m.source)
        for m in Membership.objects.filter(user__username=username).select_related("project")
    }


def test_an_ldap_login_maps_the_directory_groups_to_team_roles(personas, ldap_on) -> None:
    client = Client()
    response = password_login(client, "omar", ldap_rig.PASSWORDS["omar"])
    assert response.status_code == 302, response.content.decode()[:2000]
    omar = User.objects.get(username="omar")
    assert client.session["_auth_user_id"] == str(omar.pk)
    assert omar.email == "omar@example.test" and omar.first_name == "Omar"
    assert not omar.has_usable_password()  # the directory keeps the password
    assert roles("omar") == {("alpha", "ops", False, "sso"), ("alpha", "platform", True, "sso")}
    assert SsoIdentity.objects.get(user=omar).groups == ["wb-alpha-admins", "wb-alpha-ops"]
    granted = ProjectEvent.objects.filter(project=personas["alpha"], verb="membership.set")
    assert {(e.subject, e.after["role"], e.after["source"]) for e in granted} >= {
        ("omar", "ops", "sso"),
        ("omar", "platform", "sso"),
    }
    assert client.get("/projects/alpha/").status_code == 200  # the role opens the project
    assert client.get("/projects/beta/").status_code == 404


def test_leaving_a_group_removes_its_role_at_the_next_login_and_manual_roles_stay(
    personas, ldap_on
) -> None:
    assert password_login(Client(), "lena", ldap_rig.PASSWORDS["lena"]).status_code == 302
    assert roles("lena") == {("alpha", "ops", False, "sso"), ("beta", "business", False, "sso")}
    lena = User.objects.get(username="lena")
    # A project admin gives lena a role by hand, and takes over the one single sign-on gave.
    membership_set(project=personas["alpha"], user=lena, role="observer", actor=personas["alice"])
    membership_set(project=personas["beta"], user=lena, role="business", actor=personas["charlie"])
    ldap_on.remove_member("wb-alpha-ops", "lena")
    ldap_on.remove_member("wb-beta-business", "lena")

    assert password_login(Client(), "lena", ldap_rig.PASSWORDS["lena"]).status_code == 302
    assert roles("lena") == {
        ("alpha", "observer", False, "manual"),
        ("beta", "business", False, "manual"),
    }
    removed = ProjectEvent.objects.get(project=personas["alpha"], verb="membership.removed")
    assert removed.subject == "lena" and removed.actor is None
    assert removed.before == {"role": "ops", "is_admin": False, "source": "sso"}


def test_posix_groups_are_read_by_member_uid(personas, ldap_on, settings) -> None:
    settings.LDAP_GROUP_SEARCH_BASE = f"ou=posix,{ldap_rig.SUFFIX}"
    settings.LDAP_GROUP_TYPE = "posixgroup"
    assert password_login(Client(), "ivan", ldap_rig.PASSWORDS["ivan"]).status_code == 302
    assert roles("ivan") == {("alpha", "observer", False, "sso")}


def test_a_group_naming_an_unknown_project_is_logged_once_and_ignored(
    personas, ldap_on, caplog
) -> None:
    caplog.set_level(logging.WARNING, logger="evaluations.services.sso")
    for _ in range(3):
        assert password_login(Client(), "ivan", ldap_rig.PASSWORDS["ivan"]).status_code == 302
    said = [r.getMessage() for r in caplog.records if "does not exist" in r.getMessage()]
    assert said == [
        "SSO_GROUP_ROLES: group 'wb-ghost' names project 'ghost', which does not exist; ignored"
    ]
    assert roles("ivan") == set()


def test_wrong_ldap_passwords_are_refused_and_throttled(personas, ldap_on, settings) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    client = Client()
    first = password_login(client, "lena", "not-her-password")
    assert first.status_code == 200 and "_auth_user_id" not in client.session
    assert password_login(client, "lena", "still-wrong").status_code == 429
    assert AccessAttempt.objects.get(username="lena").failures_since_start == 2
    # Locked out: even the right password is refused until staff unlock it.
    assert password_login(client, "lena", ldap_rig.PASSWORDS["lena"]).status_code == 429
    assert not User.objects.filter(username="lena").exists()


def test_someone_removed_from_the_directory_is_deactivated_at_the_next_attempt(
    personas, ldap_on
) -> None:
    from evaluations.services import api_token_create

    old = Client()
    assert password_login(old, "lena", ldap_rig.PASSWORDS["lena"]).status_code == 302
    lena = User.objects.get(username="lena")
    _token, raw = api_token_create(
        project=personas["alpha"], name="lena-ci", scopes=["read"], actor=lena
    )
    api = Client(headers={"Authorization": f"Bearer {raw}"})
    assert api.get("/api/v1/projects/alpha/actions/").status_code == 200
    ldap_on.delete_person("lena")

    refused = password_login(Client(), "lena", ldap_rig.PASSWORDS["lena"])
    assert refused.status_code == 200
    lena.refresh_from_db()
    assert not lena.is_active
    assert old.get("/projects/alpha/")["Location"].startswith("/accounts/login/")
    assert api.get("/api/v1/projects/alpha/actions/").status_code == 401


def test_a_wrong_password_for_a_known_account_deactivates_nothing(personas, ldap_on) -> None:
    assert password_login(Client(), "lena", ldap_rig.PASSWORDS["lena"]).status_code == 302
    assert password_login(Client(), "lena", "wrong").status_code == 200
    assert User.objects.get(username="lena").is_active


def test_without_ldap_the_directory_is_not_asked(personas, directory, settings: Any) -> None:
    settings.LDAP_SERVER_URI = ""
    assert password_login(Client(), "lena", ldap_rig.PASSWORDS["lena"]).status_code == 200
    assert not User.objects.filter(username="lena").exists()
