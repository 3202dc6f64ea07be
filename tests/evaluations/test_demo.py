"""`manage.py demo`: the demo project and users, idempotent, never in production."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import CommandError, call_command
from django.test import RequestFactory
from django.urls import reverse

from evaluations.models import Candidate, Membership, Project, ProjectEvent, TeamRole, Tier

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")  # the demo stores evidence files


def _counts() -> tuple[int, ...]:
    return (
        Project.objects.count(),
        get_user_model().objects.count(),
        Membership.objects.count(),
        Candidate.objects.count(),
        ProjectEvent.objects.count(),
    )


def test_demo_creates_one_user_per_role_and_is_idempotent() -> None:
    out = StringIO()
    call_command("demo", stdout=out)
    assert "password workbench-demo" in out.getvalue()
    project = Project.objects.get(slug="demo")
    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {role: role for role in TeamRole.values}
    assert Membership.objects.get(project=project, user__username="platform").is_admin
    login = RequestFactory().post("/accounts/login/")  # login throttling reads the request
    assert authenticate(login, username="procurement", password="workbench-demo") is not None
    tiers = set(Candidate.objects.filter(project=project).values_list("tier", flat=True))
    assert tiers == {Tier.FIRST, Tier.ALTERNATIVE, Tier.NOT_APPLICABLE}
    assert all(c.reason for c in Candidate.objects.filter(project=project))
    first = _counts()
    call_command("demo", stdout=StringIO())
    assert _counts() == first


def test_demo_refuses_production(settings) -> None:
    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="production"):
        call_command("demo", stdout=StringIO())
    assert not get_user_model().objects.exists()
    assert not Project.objects.exists()


def test_no_default_accounts_without_demo() -> None:
    assert not get_user_model().objects.exists()


def test_demo_platform_user_sees_the_shortlist(client) -> None:
    call_command("demo", stdout=StringIO())
    response = client.post(
        reverse("login"), {"username": "platform", "password": "workbench-demo"}, follow=True
    )
    assert response.status_code == 200
    assert "Demo: shared GPU pool" in response.content.decode()
    page = client.get(reverse("evaluations:project_detail", kwargs={"slug": "demo"}))
    body = page.content.decode()
    for name in ("Volcano", "Slurm", "Run:ai", "OpenShift AI"):
        assert name in body


def test_demo_admin_and_the_login_page_lists_the_accounts(client, settings) -> None:
    assert "demo-accounts" not in client.get(reverse("login")).content.decode()  # none yet
    call_command("demo", stdout=StringIO())
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    page = client.get(reverse("login")).content.decode()
    assert "Demo accounts (development only)" in page and "<code>workbench-demo</code>" in page
    assert "<code>procurement</code> · Procurement" in page
    assert "<code>admin</code> · administrator" in page
    settings.PRODUCTION = True  # production never shows them, even where they exist
    assert "workbench-demo" not in client.get(reverse("login")).content.decode()
    settings.PRODUCTION = False
    response = client.post(
        reverse("login"), {"username": "admin", "password": "workbench-demo"}, follow=True
    )
    assert response.status_code == 200
    assert client.get(reverse("system_status")).status_code == 200  # staff page
