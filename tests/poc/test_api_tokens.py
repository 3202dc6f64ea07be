"""Project-scoped API tokens: hash-only storage, isolation, scopes, expiry, revocation."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from evaluations.models import ApiToken
from poc.models import (
    Result,
)
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db

READ_URLS = [
    "/api/v1/projects/{slug}/",
    "/api/v1/projects/{slug}/candidates/",
    "/api/v1/projects/{slug}/actions/",
    "/api/v1/projects/{slug}/matrix/",
]


def test_command_prints_the_token_alone_and_only_a_hash_is_kept(suite) -> None:
    out = StringIO()
    call_command(
        "create_api_token",
        "--project",
        "alpha",
        "--name",
        "gitlab",
        "--scopes",
        "read",
        "--expires-days",
        "30",
        stdout=out,
    )
    raw = out.getvalue().strip()
    assert raw.startswith("wbt_") and "\n" not in raw
    token = ApiToken.objects.get()
    assert token.prefix in raw and token.token_hash != raw
    assert raw not in str(list(ApiToken.objects.values_list()))
    assert token.scopes == ["read"]
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/projects/alpha/").status_code == 200


@pytest.mark.parametrize(
    "args",
    [
        ["--project", "nope", "--name", "x"],
        ["--project", "alpha", "--name", "x", "--scopes", "admin"],
        ["--project", "alpha", "--name", "x", "--expires-days", "0"],
    ],
)
def test_command_refuses_bad_arguments(suite, args) -> None:
    with pytest.raises(CommandError):
        call_command("create_api_token", *args, stdout=StringIO())
    assert not ApiToken.objects.exists()


def test_a_token_never_reaches_another_project(suite) -> None:
    client, _token, _raw = token_client(suite["alpha"])
    for url in READ_URLS:
        assert client.get(url.format(slug="alpha")).status_code == 200
        assert client.get(url.format(slug="beta")).status_code == 404
    listing = client.get("/api/v1/projects/").json()
    assert [p["slug"] for p in listing] == ["alpha"]
    response = post_results(
        client,
        "beta",
        payload([{"candidate": "slurm", "action": "beta-only", "outcome": "passed"}]),
    )
    assert response.status_code == 404
    assert not Result.objects.exists()


def test_scopes_are_enforced(suite) -> None:
    reader, _t, _r = token_client(suite["alpha"], scopes=("read",))
    row = [{"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}]
    assert post_results(reader, "alpha", payload(row)).status_code == 403
    writer, _t, _r = token_client(suite["alpha"], scopes=("results:write",))
    assert writer.get("/api/v1/projects/alpha/matrix/").status_code == 403
    assert post_results(writer, "alpha", payload(row)).status_code == 201


def test_expired_and_revoked_tokens_are_refused(suite, login) -> None:
    client, token, _raw = token_client(suite["alpha"], expires_days=1)
    assert client.get("/api/v1/projects/alpha/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get("/api/v1/projects/alpha/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    client, token, _raw = token_client(suite["alpha"])
    admin = login(suite["alice"])
    assert (
        admin.post(
            reverse("poc:token_revoke", kwargs={"slug": "alpha", "token_id": token.pk})
        ).status_code
        == 302
    )
    assert client.get("/api/v1/projects/alpha/").status_code == 401


@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer a b", "Bearer wbt_nope_nope", "Bearer not-a-token", "Token abc"]
)
def test_bad_authorization_headers(suite, header) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert client.get("/api/v1/projects/alpha/").status_code in (401, 403)


def test_last_used_is_recorded(suite) -> None:
    client, token, _raw = token_client(suite["alpha"])
    assert token.last_used_at is None
    client.get("/api/v1/projects/alpha/")
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_admins_create_tokens_in_the_browser_and_see_them_once(suite, login) -> None:
    url = reverse("poc:tokens", kwargs={"slug": "alpha"})
    assert login(suite["bob"]).get(url).status_code == 403  # a member but not an admin
    assert login(suite["charlie"]).get(url).status_code == 404
    admin = login(suite["alice"])
    response = admin.post(url, {"name": "github", "scopes": ["read"], "expires_days": "7"})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    body = response.content.decode()
    token = ApiToken.objects.get()
    secret = body.split('<code id="new-token">')[1].split("</code>")[0]
    assert secret.startswith(f"wbt_{token.prefix}_")
    assert secret not in admin.get(url).content.decode()  # never shown again
    bad = admin.post(url, {"name": "", "scopes": ["root"]})
    assert bad.status_code == 422
    assert ApiToken.objects.count() == 1


def test_session_callers_follow_membership(suite, login) -> None:
    client = APIClient()
    client.force_login(suite["dave"])  # observer
    row = [{"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}]
    assert client.get("/api/v1/projects/alpha/actions/").status_code == 200
    assert post_results(client, "alpha", payload(row)).status_code == 403
    client.force_login(suite["charlie"])
    assert client.get("/api/v1/projects/alpha/actions/").status_code == 404
    assert APIClient().get("/api/v1/projects/").status_code == 401


def test_tokens_expire_by_default_and_stop_when_their_creator_leaves(personas) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from evaluations import services as evaluation_services
    from evaluations.models import ApiToken, Membership
    from evaluations.services import membership_remove

    token, raw = evaluation_services.api_token_create(
        project=personas["alpha"], name="ci", scopes=["read"], actor=personas["bob"]
    )
    left = token.expires_at - timezone.now()
    assert timedelta(days=89) < left <= timedelta(days=90)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/projects/alpha/").status_code == 200
    membership_remove(
        membership=Membership.objects.get(project=personas["alpha"], user=personas["bob"]),
        actor=personas["alice"],
    )
    assert client.get("/api/v1/projects/alpha/").status_code == 401
    token = ApiToken.objects.get(pk=token.pk)
    assert token.revoked_at is not None
    event = personas["alpha"].events.filter(verb="token.revoked").get()
    assert event.actor is None and event.after == {"reason": "its creator left the project"}


def test_a_command_token_made_for_a_member_stops_when_they_leave(personas) -> None:
    from evaluations.models import Membership
    from evaluations.services import membership_remove

    out = StringIO()
    call_command(
        "create_api_token", "--project", "alpha", "--name", "gitlab", "--for", "bob", stdout=out
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {out.getvalue().strip()}")
    assert client.get("/api/v1/projects/alpha/").status_code == 200
    assert ApiToken.objects.get().created_by == personas["bob"]
    membership_remove(
        membership=Membership.objects.get(project=personas["alpha"], user=personas["bob"]),
        actor=personas["alice"],
    )
    assert client.get("/api/v1/projects/alpha/").status_code == 401
    with pytest.raises(CommandError, match="not a member of alpha"):
        call_command(
            "create_api_token",
            "--project",
            "alpha",
            "--name",
            "x",
            "--for",
            "charlie",
            stdout=StringIO(),
        )
