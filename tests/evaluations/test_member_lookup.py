"""The team page finds people by name, e-mail address or user name: suggestions while typing
(for the project's admins only), and the form takes any of the three when it names one person."""

import pytest
from django.urls import reverse

from evaluations.models import Membership
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(personas):
    UserFactory(username="wang.li", first_name="Li", last_name="Wang", email="li.wang@corp.example")
    UserFactory(username="wang.lei", first_name="Lei", last_name="Wang", email="lei@corp.example")
    UserFactory(username="lwang", first_name="Li", last_name="Wang", email="lw@other.example")
    UserFactory(username="gone", first_name="Wang", email="gone@corp.example", is_active=False)
    return personas


def _lookup(client, text: str):
    return client.get(
        reverse("evaluations:people_lookup", args=["alpha"]),
        {"username": text},
        headers={"HX-Request": "true"},
    )


def test_suggestions_match_names_and_addresses_for_admins_only(people, login) -> None:
    answer = _lookup(login(people["alice"]), "wang")
    assert answer.status_code == 200
    options = answer.content.decode()
    for username in ("wang.li", "wang.lei", "lwang"):
        assert f'<option value="{username}">' in options
    assert "gone" not in options  # deactivated people are not offered
    assert "Li Wang &lt;li.wang@corp.example&gt;" in options
    by_address = _lookup(login(people["alice"]), "lei@corp").content.decode()
    assert '<option value="wang.lei">' in by_address and "wang.li" not in by_address
    assert _lookup(login(people["alice"]), "w").content.decode().strip() == ""  # two letters
    assert _lookup(login(people["bob"]), "wang").status_code == 403  # a member, not an admin
    assert _lookup(login(people["charlie"]), "wang").status_code == 404  # another project's


@pytest.mark.parametrize(
    ("given", "added"),
    [("LEI@corp.example", "wang.lei"), ("Wang.Lei", "wang.lei"), ("Lei Wang", "wang.lei")],
)
def test_the_form_takes_an_address_a_user_name_or_a_name(people, login, given, added) -> None:
    url = reverse("evaluations:project_members", args=["alpha"])
    answer = login(people["alice"]).post(url, {"username": given, "role": "ops"})
    assert answer.status_code == 302
    assert Membership.objects.filter(project=people["alpha"], user__username=added).exists()


def test_a_name_two_people_share_is_named_with_both(people, login) -> None:
    url = reverse("evaluations:project_members", args=["alpha"])
    answer = login(people["alice"]).post(url, {"username": "Li Wang", "role": "ops"})
    assert answer.status_code == 200
    page = answer.content.decode()
    assert "Several people match Li Wang" in page
    assert "(wang.li)" in page and "(lwang)" in page
    nobody = login(people["alice"]).post(url, {"username": "gone", "role": "ops"})
    assert "No active person is called gone" in nobody.content.decode()
    assert not Membership.objects.filter(project=people["alpha"], user__username="gone").exists()
