"""Property-based calls generated from our own OpenAPI schema, sent through the whole WSGI
application (every middleware, authentication, throttling, the views) in this process:
whatever the input, the API never answers with a server error. SCHEMATHESIS_EXAMPLES sets the
examples per operation (200 in `make test`; deeper passes raise it)."""

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from workbench.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "200"))


@pytest.fixture
def in_process() -> object:
    """Requests run in this thread, inside the test's transaction: the connection must stay
    open across them, as Django's own test client keeps it."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def bearer(suite) -> str:
    from tests.poc.api_helpers import token_client

    # Every scope, so that bodies reach the code that reads them (probe bundles included).
    _client, _token, raw = token_client(
        suite["alpha"],
        scopes=("read", "results:write", "probes:write", "costs:write", "clusters:run"),
    )
    return raw


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_no_server_error(case, bearer, in_process) -> None:
    if "slug" in (case.path_parameters or {}):
        case.path_parameters["slug"] = "alpha"
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {bearer}"}
    response = case.call()  # through the WSGI application, in this test's transaction
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:500])
