"""Every page demands a login: anonymous visitors are sent to the login page."""

import pytest
from django.urls import reverse

from tests.urlwalk import iter_routes

PUBLIC = {
    "login",
    "logout",
    "set_language",
    "healthz",
    "readyz",
    "metrics",
    "ci_client_download",
    "probe_agent_download",
    "api_schema",
    "api_docs",
}
SAMPLE = {"SlugConverter": "alpha", "IntConverter": "1", "StringConverter": "x"}


def _routes() -> list:
    routes = []
    for route in iter_routes():
        if route.name in PUBLIC or route.pattern.startswith(("admin/", "i18n/", "api/")):
            continue
        if not route.name:
            continue
        routes.append(route)
    return routes


def test_the_walk_finds_the_project_pages() -> None:
    names = {route.name for route in _routes()}
    assert {"evaluations:project_detail", "evaluations:candidate_update", "catalog"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize("route", _routes(), ids=lambda r: r.name)
def test_anonymous_is_sent_to_login(client, route) -> None:
    kwargs = {name: SAMPLE[conv] for name, conv in route.converters.items()}
    url = reverse(route.name, kwargs=kwargs)
    for method in ("get", "post"):
        response = getattr(client, method)(url)
        if route.name == "home":
            assert response.status_code == 302
            continue
        assert response.status_code == 302, (method, url)
        assert response["Location"].startswith(reverse("login")), (method, url)


def _api_routes() -> list:
    return [r for r in iter_routes() if r.pattern.startswith("api/v1/") and r.name]


def test_the_walk_finds_the_api() -> None:
    assert "api_action_list" in {r.name for r in _api_routes()}


@pytest.mark.django_db
@pytest.mark.parametrize("route", _api_routes(), ids=lambda r: r.name)
def test_anonymous_api_calls_are_refused_as_json(client, route) -> None:
    kwargs = {name: SAMPLE[conv] for name, conv in route.converters.items()}
    response = client.get(reverse(route.name, kwargs=kwargs))
    assert response.status_code in (401, 403)
    assert response["Content-Type"].startswith("application/json")
