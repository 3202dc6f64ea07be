"""The one service that turns groups into team roles (`sso_memberships_apply`), tested directly."""

import logging

import pytest

from evaluations.models import Membership, ProjectEvent
from evaluations.services import membership_remove, membership_set, sso_memberships_apply
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def rows(user) -> set[tuple[str, str, bool, str]]:
    return {
        (m.project.slug, m.role, m.is_admin, m.source)
        for m in Membership.objects.filter(user=user).select_related("project")
    }


def test_grants_updates_and_removes_only_what_single_sign_on_gave(personas) -> None:
    sam = UserFactory(username="sam")
    membership_set(project=personas["alpha"], user=sam, role="observer", actor=personas["alice"])
    changes = sso_memberships_apply(user=sam, groups=["wb-alpha-ops", "wb-alpha-admins"])
    assert changes.granted == [("alpha", "ops"), ("alpha", "platform")]
    assert rows(sam) == {
        ("alpha", "observer", False, "manual"),
        ("alpha", "ops", False, "sso"),
        ("alpha", "platform", True, "sso"),
    }
    # The same groups again change nothing and write no history.
    before = ProjectEvent.objects.count()
    again = sso_memberships_apply(user=sam, groups=["wb-alpha-ops", "wb-alpha-admins"])
    assert not (again.granted or again.updated or again.removed)
    assert ProjectEvent.objects.count() == before
    # No group at all: single sign-on's roles go, the manual one stays.
    gone = sso_memberships_apply(user=sam, groups=[])
    assert sorted(gone.removed) == [("alpha", "ops"), ("alpha", "platform")]
    assert rows(sam) == {("alpha", "observer", False, "manual")}


def test_a_role_given_both_ways_stays_manual(personas) -> None:
    sam = UserFactory(username="sam")
    sso_memberships_apply(user=sam, groups=["wb-alpha-ops"])
    membership_set(project=personas["alpha"], user=sam, role="ops", actor=personas["alice"])
    event = ProjectEvent.objects.filter(verb="membership.set", actor=personas["alice"]).last()
    assert event.after == {"role": "ops", "is_admin": False, "source": "manual"}
    sso_memberships_apply(user=sam, groups=[])
    assert rows(sam) == {("alpha", "ops", False, "manual")}
    # A group mapping to a role held by hand leaves it as the project admin set it.
    sso_memberships_apply(user=sam, groups=["wb-alpha-ops"])
    assert rows(sam) == {("alpha", "ops", False, "manual")}


def test_a_role_removed_by_hand_comes_back_while_the_group_gives_it(personas) -> None:
    sam = UserFactory(username="sam")
    sso_memberships_apply(user=sam, groups=["wb-alpha-ops"])
    membership_remove(
        membership=Membership.objects.get(user=sam, role="ops"), actor=personas["alice"]
    )
    sso_memberships_apply(user=sam, groups=["wb-alpha-ops"])
    assert rows(sam) == {("alpha", "ops", False, "sso")}


def test_the_last_admin_of_a_project_is_kept(personas, settings, caplog) -> None:
    settings.SSO_GROUP_ROLES = {
        "gamma-admins": [{"project": "gamma", "role": "ops", "admin": True}]
    }
    from tests.factories import ProjectFactory

    gamma = ProjectFactory(slug="gamma", name="Gamma")
    sam = UserFactory(username="sam")
    sso_memberships_apply(user=sam, groups=["gamma-admins"])
    caplog.set_level(logging.WARNING, logger="evaluations.services.sso")
    changes = sso_memberships_apply(user=sam, groups=[])
    assert changes.kept_last_admin == [("gamma", "ops")] and not changes.removed
    assert rows(sam) == {("gamma", "ops", True, "sso")}
    assert "whose last admin they are" in caplog.text
    # Once someone else administers gamma, the next login takes the role away.
    membership_set(project=gamma, user=personas["alice"], role="platform", is_admin=True, actor=sam)
    assert sso_memberships_apply(user=sam, groups=[]).removed == [("gamma", "ops")]


def test_an_unknown_project_is_logged_once_per_process_and_ignored(personas, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="evaluations.services.sso")
    for name in ("sam", "tess"):
        changes = sso_memberships_apply(
            user=UserFactory(username=name), groups=["wb-ghost", "wb-alpha-ops"]
        )
        assert changes.granted == [("alpha", "ops")]
    assert caplog.text.count("names project 'ghost', which does not exist") == 1


def test_the_team_page_marks_the_roles_single_sign_on_gave(personas, login) -> None:
    from django.urls import reverse

    url = reverse("evaluations:project_members", args=["alpha"])
    assert "follow the person's groups" not in login(personas["bob"]).get(url).content.decode()
    sam = UserFactory(username="sam")
    sso_memberships_apply(user=sam, groups=["wb-alpha-ops"])
    page = login(personas["bob"]).get(url).content.decode()
    row = next(line for line in page.splitlines() if ">sam<" in line)
    assert "single sign-on" in row
    bob_row = next(line for line in page.splitlines() if ">bob<" in line)
    assert "single sign-on" not in bob_row  # given by hand
    assert "follow the person's groups" in page
