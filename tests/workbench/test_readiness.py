"""/healthz/ says the process is alive; /readyz/ says whether it can serve, part by part."""

import json

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def parts(response) -> dict[str, dict]:
    return {part["name"]: part for part in json.loads(response.content)["parts"]}


def test_ready_lists_every_part(client) -> None:
    response = client.get("/readyz/")
    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "no-store"
    assert json.loads(response.content)["status"] == "ready"
    assert list(parts(response)) == [
        "database",
        "broker",
        "static_files",
        "audit_key",
        "credentials_key",
        "signing_certificate",
    ]


def test_probes_answer_any_host_over_plain_http(client) -> None:
    # Orchestrators probe by pod IP; that host is not allowed for pages, and is for probes.
    with override_settings(ALLOWED_HOSTS=["workbench.example.com"], SECURE_SSL_REDIRECT=True):
        assert client.get("/healthz/", HTTP_HOST="10.42.0.17:8000").status_code == 200
        assert client.head("/readyz/", HTTP_HOST="10.42.0.17:8000").status_code == 200
        assert client.get("/accounts/login/", HTTP_HOST="10.42.0.17:8000").status_code == 400
        page = client.get("/accounts/login/", HTTP_HOST="workbench.example.com")
        assert page.status_code == 301 and page["Location"].startswith("https://")


def test_probes_take_only_get_and_head(client) -> None:
    client.enforce_csrf_checks = False
    assert client.post("/healthz/").status_code == 405
    assert client.post("/readyz/").status_code == 405


SCRAPER = {"Authorization": "Bearer readiness-reader-7"}


def test_a_configuration_problem_makes_it_unready_and_is_named(client) -> None:
    with override_settings(
        PRODUCTION=True,
        WORKBENCH_CREDENTIALS_KEYS="",
        WORKBENCH_AUDIT_KEYS="",
        SHEET_SIGNING_P12="",
        METRICS_TOKEN="readiness-reader-7",
    ):
        response = client.get("/readyz/", headers=SCRAPER)
    assert response.status_code == 503
    assert json.loads(response.content)["status"] == "not ready"
    found = parts(response)
    assert found["database"]["ok"] and found["broker"]["ok"]
    assert found["credentials_key"]["problem"].startswith("poc.E001: ")
    assert "WORKBENCH_CREDENTIALS_KEYS is not set" in found["credentials_key"]["problem"]
    assert found["audit_key"]["problem"].startswith("evaluations.E010: ")
    assert "WORKBENCH_AUDIT_KEYS is not set" in found["audit_key"]["problem"]
    assert found["signing_certificate"]["problem"].startswith("reports.E001: ")


def test_a_database_outage_is_unready_but_alive(client, monkeypatch) -> None:
    from django.db import OperationalError

    from workbench import readiness

    class Down:
        def cursor(self):
            raise OperationalError("connection to server at 10.0.0.5 failed")

    monkeypatch.setattr(readiness, "connection", Down())
    assert client.get("/healthz/").status_code == 200
    with override_settings(METRICS_ALLOWED_NETWORKS=["127.0.0.0/8"]):
        response = client.get("/readyz/")
    assert response.status_code == 503
    assert parts(response)["database"]["problem"].startswith("OperationalError: ")


def test_the_public_answer_names_failing_parts_without_their_problems(client, monkeypatch) -> None:
    """Anyone may ask whether the process is ready; only a metrics reader reads why not (the
    problem texts name hosts and settings)."""
    from django.db import OperationalError

    from workbench import readiness

    class Down:
        def cursor(self):
            raise OperationalError("connection to server at 10.0.0.5 failed")

    monkeypatch.setattr(readiness, "connection", Down())
    with override_settings(
        METRICS_TOKEN="readiness-reader-7",
        METRICS_ALLOWED_NETWORKS=[],
        WORKBENCH_CREDENTIALS_KEYS="",
    ):
        public = client.get("/readyz/")
        wrong = client.get("/readyz/", headers={"Authorization": "Bearer guess"})
        reader = client.get("/readyz/", headers=SCRAPER)
    for response in (public, wrong):
        assert response.status_code == 503
        assert parts(response)["database"] == {"name": "database", "ok": False}
        assert b"10.0.0.5" not in response.content and b"problem" not in response.content
    assert reader.status_code == 503
    assert "10.0.0.5" in parts(reader)["database"]["problem"]
