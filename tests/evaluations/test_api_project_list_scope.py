"""Listing projects over the API takes the `read` scope, as reading one project does: a token
that may only post results learns nothing, not even its project's name."""

import pytest

from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db


def test_listing_projects_needs_the_read_scope(suite) -> None:
    writer, _token, _raw = token_client(suite["alpha"], scopes=("results:write",))
    refused = writer.get("/api/v1/projects/")
    assert refused.status_code == 403 and "'read'" in refused.json()["detail"]
    assert "alpha" not in refused.content.decode().lower().replace("'read'", "")
    reader, _token, _raw = token_client(suite["alpha"], scopes=("read",))
    listed = reader.get("/api/v1/projects/")
    assert listed.status_code == 200 and [p["slug"] for p in listed.json()] == ["alpha"]
