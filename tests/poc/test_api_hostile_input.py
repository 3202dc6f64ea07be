"""Defects found by an outside review of the results API: each bad input is a 400 naming the
field, and nothing is stored."""

import json

import pytest

from poc.models import (
    Result,
    Run,
)
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db


def _row(**change):
    row = {"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}
    row.update(change)
    return row


def _integration(effort):
    return _row(
        outcome="needs_integration",
        integration={"what": "SSO bridge", "owner_team": "platform", "effort_days": effort},
    )


@pytest.mark.parametrize("effort", ["999999.95", "999999.99", 999999.96, "1e6", "-0.1"])
def test_effort_is_checked_after_rounding_to_the_column(suite, effort) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = post_results(client, "alpha", payload([_integration(effort)]))
    assert response.status_code == 400
    assert "integration.effort_days" in json.dumps(response.json())
    assert not Result.objects.exists() and not Run.objects.exists()


def test_the_largest_effort_the_column_holds_is_stored(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = post_results(client, "alpha", payload([_integration("999999.94")]))
    assert response.status_code == 201, response.content
    assert str(Result.objects.get().integration_effort_days) == "999999.9"


@pytest.mark.parametrize(
    "row, field",
    [
        (_row(outcome=["passed"]), "outcome"),
        (_row(outcome={"x": 1}), "outcome"),
        (_row(candidate=["volcano"]), "candidate"),
        (_row(action={"k": "v"}), "action"),
        (
            _row(
                outcome="needs_integration",
                integration={"what": "x", "owner_team": ["ops"], "effort_days": 1},
            ),
            "integration.owner_team",
        ),
        (
            _row(
                outcome="needs_integration",
                integration={"what": "x", "owner_team": {"a": 1}, "effort_days": 1},
            ),
            "integration.owner_team",
        ),
        (_row(note="before\x00after"), "note"),
        (_row(outcome="failed", failure_cause="nul \x00 here"), "failure_cause"),
    ],
)
def test_wrong_types_and_nul_characters_name_the_field(suite, row, field) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = post_results(client, "alpha", payload([row]))
    assert response.status_code == 400, response.content
    (error,) = response.json()["errors"]
    assert field in error["errors"]
    assert not Result.objects.exists()


def test_a_lone_surrogate_is_a_clear_400(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    row = '{"candidate": "volcano", "action": "quota-hit", "outcome": "passed", "note": "\\ud800"}'
    body = '{"run": {"external_id": "x"}, "results": [' + row + "]}"
    response = client.post("/api/v1/projects/alpha/results/", body, content_type="application/json")
    assert response.status_code == 400
    assert "note" in json.dumps(response.json())
    assert not Result.objects.exists()


def test_json_nested_a_thousand_deep_is_a_clear_400(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    body = '{"run": {"external_id": "x"}, "results": [' + "[" * 1000 + "]" * 1000 + "]}"
    response = client.post("/api/v1/projects/alpha/results/", body, content_type="application/json")
    assert response.status_code == 400
    assert not Result.objects.exists()


def test_a_content_length_that_is_not_a_number_is_a_400(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = client.generic(
        "POST",
        "/api/v1/projects/alpha/results/",
        json.dumps(payload([_row()])),
        content_type="application/json",
        headers={"Content-Length": "abc"},
    )
    assert response.status_code == 400
    assert not Result.objects.exists()


def test_the_api_keeps_storing_results_when_redis_is_down(suite, settings, caplog) -> None:
    caches = dict(settings.CACHES)
    caches["default"] = {
        **caches["default"],
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
    }
    settings.CACHES = caches
    from workbench.metrics import REGISTRY

    def unchecked() -> float:
        return REGISTRY.get_sample_value("workbench_rate_limit_unchecked_total") or 0.0

    before = unchecked()
    client, _, _ = token_client(suite["alpha"])
    for number in range(3):
        response = post_results(client, "alpha", payload([_row()], run=f"run-{number}"))
        assert response.status_code == 201, response.content
    assert Result.objects.count() == 3
    warnings = [r for r in caplog.records if "rate limits are off" in r.getMessage()]
    assert len(warnings) <= 1
    assert unchecked() - before == 3  # each request let through unchecked is counted


def test_a_body_between_ten_and_twenty_mib_is_read_and_one_over_the_limit_is_json(suite) -> None:
    from django.conf import settings as django_settings

    client, _, _ = token_client(suite["alpha"])
    body = payload([_row()])
    body["padding"] = "x" * (12 * 1024 * 1024)  # over Django's own 10 MiB default
    assert django_settings.API_MAX_BODY_BYTES == 20 * 1024 * 1024
    response = post_results(client, "alpha", body)
    assert response.status_code == 201, response.content[:300]
    body["padding"] = "x" * (21 * 1024 * 1024)  # over the limit and the form room beside it
    response = post_results(client, "alpha", body)
    assert response.status_code == 413
    assert "limited to 20 MB" in response.json()["detail"]
    body["padding"] = "x" * (20 * 1024 * 1024 + 512 * 1024)  # past the view's own check only
    response = post_results(client, "alpha", body)
    assert response.status_code == 413
    assert "bytes" in response.json()["detail"]


@pytest.mark.parametrize("query", ["candidate=volcano&run=ci%00x", "candidate=vol%00cano&run=ci"])
def test_junit_query_parameters_with_a_nul_are_a_400(suite, query) -> None:
    client, _, _ = token_client(suite["alpha"])
    junit = b'<testsuite name="s"><testcase name="quota-hit" classname="c"/></testsuite>'
    response = client.post(
        f"/api/v1/projects/alpha/junit/?{query}", junit, content_type="application/xml"
    )
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]
    assert not Result.objects.exists()


@pytest.mark.parametrize("field", ["external_id", "name", "commit"])
def test_a_lone_surrogate_or_nul_in_the_run_is_a_400_naming_the_field(suite, field) -> None:
    client, _, _ = token_client(suite["alpha"])
    row = '{"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}'
    for bad in ("\\ud800", "\\u0000"):
        run = {"external_id": "ci-1", field: f"x{bad}y"}
        body = '{"run": ' + json.dumps(run).replace("\\\\u", "\\u") + ', "results": [' + row + "]}"
        response = client.post(
            "/api/v1/projects/alpha/results/", body, content_type="application/json"
        )
        assert response.status_code == 400, response.content[:300]
        assert field in json.dumps(response.json())
    assert not Result.objects.exists() and not Run.objects.exists()
