"""Junk in query strings and form posts never makes a page fail: every route answers below 500,
for plain and HTMX requests, as a project admin who may reach all of them."""

from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from tests.poc.test_route_isolation import objects  # noqa: F401 - the fixture
from tests.urlwalk import iter_routes

pytestmark = pytest.mark.django_db

QUERIES = ["?page=-1", "?page=abc", "?candidate=%00", "?outcome=bogus&q=" + "a" * 5000, "?x=%%"]
JUNK_POST = {
    "name": "x" * 100_000,
    "slug": "../../etc",
    "language": "xx",
    "candidates": ["nobody"],
    "role": "root",
    "decision": "maybe",
    "sheet_sha256": "z" * 100,
    "signing_roles": ["observer", "x"],
    "outcome": "bogus",
    "tier": "?",
    "reason": "\x00",
    "key": "Bad Key!",
    "position": "-5",
    "integration_effort_days": "1e400",
    "scopes": ["root"],
    "expires_at": "yesterday",
    "url": "javascript:alert(1)",
    "workloads": ["x"],
    "phase": "done",
    "party": "nobody",
    "file": "not a file",
}
SKIP = {"logout", "login", "set_language"}  # would end or change the session under test


@pytest.fixture
def routes(suite: dict[str, Any], objects: dict[str, Any]) -> list[str]:  # noqa: F811
    from reports import services

    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=suite["alpha"], language="en", actor=None
    )
    sheet.pdf.save("alpha-r1.pdf", ContentFile(b"%PDF-1.7 stand-in"), save=True)
    values = {
        **objects,
        "revision": 1,
        "table": "matrix",
        "fmt": "csv",
        "set_key": "elasticity",
        "membership_id": 1,
        "requirement_id": 1,
        "check_id": 1,
        "group": "price",
        "line_id": 1,
        "key": "volcano",  # a catalog entry (the shipped one: its edit page is refused)
    }
    urls = []
    for route in iter_routes():
        if not route.name or route.name in SKIP or route.pattern.startswith(("admin", "api/")):
            continue
        urls.append(reverse(route.name, kwargs={k: values[k] for k in route.converters}))
    assert len(urls) >= 40
    return urls


def test_junk_queries_and_posts_never_fail_a_page(suite, routes, login) -> None:
    client = login(suite["alice"])
    failed, reached = [], 0
    for url in routes:
        for headers in ({}, {"HX-Request": "true"}):
            answers = [client.get(url + query, headers=headers) for query in QUERIES]
            answers += [client.post(url, JUNK_POST, headers=headers), client.post(url, {})]
            failed += [(url, a.status_code) for a in answers if a.status_code >= 500]
            reached += answers[0].status_code == 200
    assert not failed
    assert reached >= 40  # the pages were really served, not redirected to the login
