"""A non-member gets 404 on every project page and is never shown the project."""

import pytest
from django.urls import reverse

from evaluations.models import Candidate, Membership
from tests.urlwalk import iter_routes


def _project_routes() -> list:
    return [
        r for r in iter_routes() if "slug" in r.converters and r.name.startswith("evaluations:")
    ]


@pytest.fixture
def personas(personas):
    """The shared personas, plus an acceptance suite in alpha and the template library."""
    from evaluations import services
    from evaluations.catalog import load_templates

    services.template_catalog_seed(sets=load_templates())
    requirement = services.requirement_create(
        project=personas["alpha"],
        actor=None,
        feature="Quotas",
        dimension="tenancy",
        owner_team="platform",
    )
    action = services.action_create(
        requirement=requirement,
        actor=None,
        key="quota-hit",
        question="q?",
        pass_criterion="p",
        scenario="resource_shortage",
    )
    return {**personas, "requirement": requirement, "action": action}


def _kwargs(route, personas) -> dict:
    values = {
        "slug": personas["alpha"].slug,
        "candidate_slug": personas["volcano"].slug,
        "membership_id": Membership.objects.get(user=personas["bob"]).pk,
        "requirement_id": personas["requirement"].pk,
        "action_id": personas["action"].pk,
        "set_key": "elasticity",
        "fmt": "yaml",
    }
    return {name: values[name] for name in route.converters}


def _suite_state() -> list:
    from evaluations.models import AcceptanceAction, Requirement

    return [
        list(Requirement.objects.order_by("pk").values_list("pk", "feature", "position")),
        list(AcceptanceAction.objects.order_by("pk").values_list("pk", "key", "position")),
    ]


def test_every_project_route_is_covered() -> None:
    names = {r.name for r in _project_routes()}
    assert len(names) >= 8
    assert "evaluations:candidate_update" in names


@pytest.mark.django_db
@pytest.mark.parametrize("route", _project_routes(), ids=lambda r: r.name)
def test_outsider_gets_404_for_get_and_post(route, personas, login) -> None:
    client = login(personas["charlie"])
    url = reverse(route.name, kwargs=_kwargs(route, personas))
    before = (Candidate.objects.count(), Membership.objects.count(), _suite_state())
    assert client.get(url).status_code == 404
    assert (
        client.post(url, {"tier": "not_applicable", "reason": "x", "role": "ops"}).status_code
        == 404
    )
    assert client.get(url, headers={"HX-Request": "true"}).status_code == 404
    assert (Candidate.objects.count(), Membership.objects.count(), _suite_state()) == before


POST_ONLY = {
    "evaluations:member_remove",
    "evaluations:candidate_remove",
    "evaluations:requirement_delete",
    "evaluations:requirement_move",
    "evaluations:action_delete",
    "evaluations:action_move",
}


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(POST_ONLY))
def test_post_only_routes_refuse_get_for_members(name, personas, login) -> None:
    route = next(r for r in _project_routes() if r.name == name)
    response = login(personas["bob"]).get(reverse(name, kwargs=_kwargs(route, personas)))
    assert response.status_code == 405


# Pages for the project's admins only (members get 403: tests/evaluations/test_member_lookup.py).
ADMIN_ONLY = {"evaluations:people_lookup"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "route",
    [r for r in _project_routes() if r.name not in POST_ONLY | ADMIN_ONLY],
    ids=lambda r: r.name,
)
def test_member_can_open_every_project_page(route, personas, login) -> None:
    client = login(personas["bob"])
    url = reverse(route.name, kwargs=_kwargs(route, personas))
    assert client.get(url).status_code == 200


@pytest.mark.django_db
def test_project_list_shows_only_my_projects(personas, login) -> None:
    response = login(personas["charlie"]).get(reverse("evaluations:project_list"))
    assert response.status_code == 200
    assert b"Beta" in response.content
    assert b"Alpha" not in response.content
    assert b"/projects/alpha/" not in response.content


@pytest.mark.django_db
def test_observer_can_read_but_not_write(personas, login) -> None:
    client = login(personas["dave"])
    detail = reverse("evaluations:project_detail", kwargs={"slug": "alpha"})
    assert client.get(detail).status_code == 200
    url = reverse(
        "evaluations:candidate_update", kwargs={"slug": "alpha", "candidate_slug": "volcano"}
    )
    assert client.post(url, {"tier": "alternative"}).status_code == 403
    personas["volcano"].refresh_from_db()
    assert personas["volcano"].tier == "validate_first"


@pytest.mark.django_db
def test_only_admins_manage_members(personas, login) -> None:
    url = reverse("evaluations:project_members", kwargs={"slug": "alpha"})
    response = login(personas["bob"]).post(url, {"username": "charlie", "role": "ops"})
    assert response.status_code == 403
    assert not Membership.objects.filter(
        user=personas["charlie"], project=personas["alpha"]
    ).exists()
    response = login(personas["alice"]).post(url, {"username": "charlie", "role": "ops"})
    assert response.status_code == 302
    assert Membership.objects.filter(user=personas["charlie"], project=personas["alpha"]).exists()


@pytest.mark.django_db
def test_member_remove_needs_admin_and_keeps_the_last_admin(personas, login) -> None:
    bob_row = Membership.objects.get(user=personas["bob"], project=personas["alpha"])
    alice_row = Membership.objects.get(user=personas["alice"], project=personas["alpha"])
    url = reverse(
        "evaluations:member_remove", kwargs={"slug": "alpha", "membership_id": bob_row.pk}
    )
    assert login(personas["bob"]).get(url).status_code == 405
    assert login(personas["dave"]).post(url).status_code == 403
    assert Membership.objects.filter(pk=bob_row.pk).exists()
    admin = login(personas["alice"])
    assert admin.post(url).status_code == 302
    assert not Membership.objects.filter(pk=bob_row.pk).exists()
    last = reverse(
        "evaluations:member_remove", kwargs={"slug": "alpha", "membership_id": alice_row.pk}
    )
    admin.post(last)
    assert Membership.objects.filter(pk=alice_row.pk).exists()
