"""Per-caller rate limits (429 with Retry-After) and the OpenAPI schema and docs."""

import pytest

from evaluations.api.throttling import CallerRateThrottle
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db


def test_each_token_has_its_own_budget(suite, monkeypatch) -> None:
    monkeypatch.setattr(CallerRateThrottle, "THROTTLE_RATES", {"caller": "3/minute"})
    first, _, _ = token_client(suite["alpha"])
    second, _, _ = token_client(suite["alpha"])
    for _ in range(3):
        assert first.get("/api/v1/projects/alpha/").status_code == 200
    refused = first.get("/api/v1/projects/alpha/")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert second.get("/api/v1/projects/alpha/").status_code == 200


def test_schema_and_docs_work_offline(client, suite) -> None:
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in (
        "/api/v1/projects/{slug}/results/",
        "/api/v1/projects/{slug}/junit/",
        "/api/v1/projects/{slug}/matrix/",
        "/api/v1/runs/{run_id}/",
    ):
        assert path in paths
    assert schema.json()["components"]["securitySchemes"]["projectToken"]["scheme"] == "bearer"
    docs = client.get("/api/docs/").content.decode()
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in docs
    assert "cdn" not in docs.lower()
