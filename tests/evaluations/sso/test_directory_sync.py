"""The directory sync against a real slapd: people gone from the directory are deactivated and
roles follow groups between logins; a directory that does not answer, or a pass that would
deactivate most people, changes nothing."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from evaluations.models import Membership, ProjectEvent
from evaluations.sso.ldap import directory_sync
from evaluations.tasks import directory_sync_task
from tests import ldap_rig
from tests.evaluations.sso.conftest import password_login

pytestmark = pytest.mark.django_db


def roles(username: str) -> set[tuple[str, str]]:
    return set(
        Membership.objects.filter(user__username=username).values_list("project__slug", "role")
    )


@pytest.fixture
def signed_in(personas: dict[str, Any], ldap_on: ldap_rig.Directory) -> dict[str, Client]:
    """lena, omar and ivan signed in through LDAP once, each with a session kept."""
    clients = {}
    for name in ("lena", "omar", "ivan"):
        clients[name] = Client()
        assert password_login(clients[name], name, ldap_rig.PASSWORDS[name]).status_code == 302
    return clients


def test_gone_people_lose_access_and_roles_follow_groups_without_a_login(
    signed_in: dict[str, Client], ldap_on: ldap_rig.Directory
) -> None:
    from evaluations.services import api_token_create

    assert roles("lena") == {("alpha", "ops"), ("beta", "business")}
    omar = User.objects.get(username="omar")
    _token, raw = api_token_create(
        project=Membership.objects.get(user=omar, role="ops").project,
        name="omar-ci",
        scopes=["read"],
        actor=omar,
    )
    ldap_on.delete_person("omar")
    ldap_on.remove_member("wb-alpha-ops", "lena")

    report = directory_sync()
    assert report.problem == "" and report.checked == 3
    assert report.deactivated == ["omar"] and report.roles_changed == 1
    assert not User.objects.get(username="omar").is_active
    assert signed_in["omar"].get("/projects/alpha/").status_code == 302  # the session ended
    api = Client(headers={"Authorization": f"Bearer {raw}"})
    assert api.get("/api/v1/projects/alpha/").status_code == 401  # and the token went
    assert roles("lena") == {("beta", "business")}
    assert User.objects.get(username="lena").is_active
    removed = ProjectEvent.objects.get(verb="membership.removed", subject="lena")
    assert removed.actor is None and removed.before["source"] == "sso"
    # A second pass finds nothing more to do.
    again = directory_sync()
    assert (again.checked, again.deactivated, again.roles_changed) == (2, [], 0)


def test_a_directory_that_does_not_answer_changes_nothing(
    signed_in: dict[str, Client], ldap_on: ldap_rig.Directory
) -> None:
    ldap_on.delete_person("omar")
    ldap_on.stop()
    report = directory_sync()
    assert report.problem.startswith("the directory did not answer, nothing was changed")
    assert report.deactivated == [] and User.objects.get(username="omar").is_active
    with pytest.raises(CommandError, match="did not answer"):
        call_command("sync_directory")


def test_a_pass_that_would_deactivate_most_people_deactivates_nobody(
    signed_in: dict[str, Client], settings: Any, capsys: Any
) -> None:
    # A filter changed by mistake matches nobody: everyone looks gone.
    settings.LDAP_USER_FILTER = "(&(uid=%(user)s)(employeeType=no-such-type))"
    report = directory_sync()
    assert "3 of 3 accounts are not in the directory any more" in report.problem
    assert report.deactivated == [] and User.objects.filter(is_active=False).count() == 0
    with pytest.raises(CommandError, match="nobody was deactivated"):
        call_command("sync_directory")
    call_command("sync_directory", "--allow-mass-deactivation")
    assert "deactivated: ivan, lena, omar" in capsys.readouterr().out
    assert not User.objects.filter(username__in=["ivan", "lena", "omar"], is_active=True)


def test_the_dn_template_tells_a_missing_entry_apart(
    signed_in: dict[str, Client], ldap_on: ldap_rig.Directory, settings: Any
) -> None:
    settings.LDAP_USER_DN_TEMPLATE = f"uid=%(user)s,ou=people,{ldap_rig.SUFFIX}"
    ldap_on.delete_person("ivan")
    directory_sync_task()  # what the beat runs
    assert list(User.objects.filter(is_active=False).values_list("username", flat=True)) == ["ivan"]


def test_without_ldap_the_sync_says_so(personas: dict[str, Any], settings: Any) -> None:
    settings.LDAP_SERVER_URI = ""
    assert directory_sync().problem == "LDAP is not configured (LDAP_SERVER_URI)"
