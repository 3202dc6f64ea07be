"""Property-based calls generated from our own OpenAPI schema, sent over HTTP to a live
server: whatever the input, the API never answers with a server error."""

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from workbench.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


@pytest.fixture
def bearer(suite) -> str:
    from tests.poc.api_helpers import token_client

    # Every scope, so that bodies reach the code that reads them (probe bundles included).
    _client, _token, raw = token_client(
        suite["alpha"], scopes=("read", "results:write", "probes:write")
    )
    return raw


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_server_error(case, bearer, live_server) -> None:
    if "slug" in (case.path_parameters or {}):
        case.path_parameters["slug"] = "alpha"
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {bearer}"}
    response = case.call(base_url=live_server.url)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:500])
