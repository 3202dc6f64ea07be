"""docker-compose.yml: the services exist and are wired by the variables settings read."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SETTINGS_SOURCE = (ROOT / "workbench" / "settings.py").read_text()
README = (ROOT / "README.md").read_text()


def _env(service: str) -> dict:
    return COMPOSE["services"][service]["environment"]


def test_services() -> None:
    assert set(COMPOSE["services"]) == {"postgres", "redis", "web", "worker", "beat"}


def test_app_services_share_one_environment() -> None:
    assert _env("web") == _env("worker") == _env("beat")
    for service in ("web", "worker", "beat"):
        assert COMPOSE["services"][service]["build"] == "."


def test_every_variable_is_read_by_settings_and_documented() -> None:
    read = set(re.findall(r'env_\w+\(\s*"([A-Z0-9_]+)"', SETTINGS_SOURCE))
    for name in _env("web"):
        assert name in read, f"compose sets {name}, which settings never read"
        assert f"`{name}`" in README, f"{name} is not documented in the README"
    for name in read:
        assert f"`{name}`" in README, f"settings read {name}, which the README does not document"


def test_urls_point_at_the_compose_services() -> None:
    env = _env("web")
    assert "@postgres:5432/" in env["DATABASE_URL"]
    assert env["REDIS_URL"].startswith("redis://redis:6379")
    assert env["CELERY_BROKER_URL"] == env["REDIS_URL"]
    postgres = COMPOSE["services"]["postgres"]["environment"]
    assert f"{postgres['POSTGRES_USER']}:" in env["DATABASE_URL"]
    assert env["DATABASE_URL"].endswith("/" + postgres["POSTGRES_DB"])
    assert env["DJANGO_ENV"] == "production"


def test_app_services_wait_for_healthy_dependencies() -> None:
    for service in ("web", "worker"):
        depends = COMPOSE["services"][service]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
    assert "healthcheck" in COMPOSE["services"]["postgres"]
    assert "healthcheck" in COMPOSE["services"]["redis"]


def test_commands() -> None:
    assert "gunicorn workbench.wsgi" in COMPOSE["services"]["web"]["command"]
    assert "migrate" in COMPOSE["services"]["web"]["command"]
    assert COMPOSE["services"]["worker"]["command"][:4] == ["celery", "-A", "workbench", "worker"]
    assert COMPOSE["services"]["beat"]["command"][:4] == ["celery", "-A", "workbench", "beat"]
