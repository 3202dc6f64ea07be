"""403, 404 and 500 answer with the workbench's own pages, with a way on, in both languages."""

import pytest
from django.test import Client, override_settings
from django.urls import path

from tests.factories import UserFactory


def _boom(request):
    raise RuntimeError("a bug")


urlpatterns = [path("boom/", _boom)]


@pytest.mark.django_db
def test_not_found_and_not_allowed_pages(client, personas) -> None:
    client.force_login(personas["charlie"])
    missing = client.get("/projects/alpha/")  # not a member: 404, like a project that is not
    assert missing.status_code == 404
    body = missing.content.decode()
    assert "Not found" in body and 'href="/projects/"' in body and "topbar" in body
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    assert "未找到" in client.get("/projects/nowhere/").content.decode()
    staff_only = Client()
    staff_only.force_login(UserFactory(username="plain"))
    refused = staff_only.get("/status/")
    assert refused.status_code == 403 and "Not allowed" in refused.content.decode()


@override_settings(ROOT_URLCONF=__name__)
def test_a_server_error_page_without_the_database_or_a_session() -> None:
    client = Client(raise_request_exception=False)
    response = client.get("/boom/")
    assert response.status_code == 500
    body = response.content.decode()
    assert "Something went wrong" in body and "/static/css/workbench" in body
