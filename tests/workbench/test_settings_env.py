"""Settings come from the environment only, and a bad value stops start-up with its name."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from workbench.env import ImproperEnvironment, env_bool, env_int, env_list, env_str

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'debug': s.DEBUG, 'engine': s.DATABASES['default']['ENGINE'], "
    "'db_name': str(s.DATABASES['default']['NAME']), 'broker': s.CELERY_BROKER_URL, "
    "'hosts': s.ALLOWED_HOSTS, 'secret': s.SECRET_KEY, 'port': s.PORT, "
    "'ssl_redirect': getattr(s, 'SECURE_SSL_REDIRECT', False)}))"
)
PRODUCTION_ENV = {
    "DJANGO_ENV": "production",
    "SECRET_KEY": "p7Qf0v-" + "Zr9xWm2LkT4sNq8bYc3HdJ6gVe1uAo5i" * 2,
    "ALLOWED_HOSTS": "workbench.example.com",
    "WORKBENCH_CREDENTIALS_KEYS": "k1:" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY=",
}
VARIABLES = (
    "DJANGO_ENV",
    "SECRET_KEY",
    "SECRET_KEY_FILE",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "SHEET_SIGNING_P12",
    "SHEET_SIGNING_PASSPHRASE",
    "DEBUG",
    "PORT",
    "WORKBENCH_VAR_DIR",
    "WORKBENCH_CREDENTIALS_KEYS",
    "WORKBENCH_CREDENTIALS_KEYS_FILE",
)


def run_django(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    clean.update(
        {"DJANGO_SETTINGS_MODULE": "workbench.settings", "WORKBENCH_VAR_DIR": str(tmp_path)}
    )
    clean.update(env)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


def settings_with(env: dict[str, str], tmp_path: Path) -> dict:
    result = run_django(["-c", PROBE], env, tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_development_defaults_need_no_server(tmp_path: Path) -> None:
    s = settings_with({}, tmp_path)
    assert s["debug"] is True
    assert s["engine"] == "django.db.backends.sqlite3"
    assert s["db_name"] == str(tmp_path / "workbench.sqlite3")
    assert s["broker"] == "filesystem://"
    assert (tmp_path / "broker" / "queue").is_dir()
    assert s["port"] == 8000


def test_urls_from_the_environment(tmp_path: Path) -> None:
    s = settings_with(
        {
            "DATABASE_URL": "postgres://u:p@db.internal:5433/wb",
            "REDIS_URL": "redis://cache:6379/2",
            "PORT": "9000",
        },
        tmp_path,
    )
    assert s["engine"] == "django.db.backends.postgresql"
    assert s["db_name"] == "wb"
    assert s["broker"] == "redis://cache:6379/2"
    assert s["port"] == 9000


def test_broker_url_wins_over_redis_url(tmp_path: Path) -> None:
    s = settings_with(
        {"REDIS_URL": "redis://cache:6379/2", "CELERY_BROKER_URL": "redis://queue:6379/5"}, tmp_path
    )
    assert s["broker"] == "redis://queue:6379/5"


def test_secret_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("from-a-file-" + "x" * 50 + "\n")
    s = settings_with({"SECRET_KEY_FILE": str(secret)}, tmp_path)
    assert s["secret"] == "from-a-file-" + "x" * 50


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"PORT": "eighty"}, "PORT='eighty' is not an integer"),
        ({"DJANGO_ENV": "staging"}, "DJANGO_ENV='staging' must be one of"),
        ({"DJANGO_ENV": "production", "ALLOWED_HOSTS": "x"}, "SECRET_KEY must be set"),
        ({"DJANGO_ENV": "production", "SECRET_KEY": "k" * 60}, "ALLOWED_HOSTS must be set"),
        ({"DATABASE_URL": "nonsense://"}, "DATABASE_URL='nonsense://' is not a database URL"),
        ({"SECRET_KEY_FILE": "/nonexistent/secret"}, "SECRET_KEY_FILE='/nonexistent/secret'"),
    ],
)
def test_bad_values_stop_start_up_naming_the_variable(env, message, tmp_path: Path) -> None:
    result = run_django(["-c", PROBE], env, tmp_path)
    assert result.returncode != 0
    assert message in result.stderr


def test_production_check_deploy_is_clean(tmp_path: Path) -> None:
    from reports.signing import create_self_signed_p12

    create_self_signed_p12(tmp_path / "org.p12", "pass-phrase")
    env = {
        **PRODUCTION_ENV,
        "SHEET_SIGNING_P12": str(tmp_path / "org.p12"),
        "SHEET_SIGNING_PASSPHRASE": "pass-phrase",
    }
    result = run_django(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env, tmp_path
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout
    s = settings_with(env, tmp_path)
    assert s["debug"] is False
    assert s["ssl_redirect"] is True


def test_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG", default=False) is True
    monkeypatch.setenv("FLAG", "off")
    assert env_bool("FLAG", default=True) is False
    monkeypatch.setenv("COUNT", "-3")
    with pytest.raises(ImproperEnvironment, match="below the minimum"):
        env_int("COUNT", 1, minimum=0)
    monkeypatch.setenv("HOSTS", " a.example , ,b.example ")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]
    monkeypatch.delenv("MISSING_VAR", raising=False)
    assert env_str("MISSING_VAR", "fallback") == "fallback"


def test_evidence_storage_switches_to_s3_when_a_bucket_is_set(tmp_path: Path) -> None:
    probe = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        'from django.core.files.storage import storages; d = storages["default"]; '
        "print(json.dumps([s.EVIDENCE_MAX_BYTES, type(d).__name__, "
        "getattr(d, 'bucket_name', None), getattr(d, 'endpoint_url', None)]))"
    )
    local = run_django(["-c", probe], {"EVIDENCE_MAX_MB": "7"}, tmp_path)
    assert json.loads(local.stdout) == [7 * 1024 * 1024, "FileSystemStorage", None, None]
    s3 = run_django(
        ["-c", probe],
        {"EVIDENCE_S3_BUCKET": "poc-evidence", "EVIDENCE_S3_ENDPOINT_URL": "http://127.0.0.1:9"},
        tmp_path,
    )
    assert s3.returncode == 0, s3.stderr
    assert json.loads(s3.stdout)[1:] == ["S3Storage", "poc-evidence", "http://127.0.0.1:9"]


def test_production_without_a_signing_certificate_fails_loudly(tmp_path: Path) -> None:
    env = dict(PRODUCTION_ENV)
    result = run_django(["manage.py", "check"], env, tmp_path)
    assert result.returncode != 0
    assert "reports.E001" in result.stderr and "SHEET_SIGNING_P12" in result.stderr


@pytest.mark.parametrize(
    "keys, problem",
    [
        (None, "WORKBENCH_CREDENTIALS_KEYS is not set"),
        ("k1:c2hvcnQ=", "is 5 bytes, not 32"),
        ("no-colon-here", "is not ID:KEY"),
    ],
)
def test_production_without_usable_credential_keys_fails_loudly(
    tmp_path: Path, keys: str | None, problem: str
) -> None:
    from reports.signing import create_self_signed_p12

    create_self_signed_p12(tmp_path / "org.p12", "pass-phrase")
    env = {
        **PRODUCTION_ENV,
        "SHEET_SIGNING_P12": str(tmp_path / "org.p12"),
        "SHEET_SIGNING_PASSPHRASE": "pass-phrase",
    }
    del env["WORKBENCH_CREDENTIALS_KEYS"]
    if keys is not None:
        env["WORKBENCH_CREDENTIALS_KEYS"] = keys
    result = run_django(["manage.py", "check"], env, tmp_path)
    assert result.returncode != 0
    assert "poc.E001" in result.stderr and problem in result.stderr
    assert "reports.E001" not in result.stderr


def test_production_web_server_and_worker_refuse_to_start_without_a_certificate(
    tmp_path: Path,
) -> None:
    """Gunicorn and the Celery worker run no `manage.py check`: they check at start-up."""
    env = dict(PRODUCTION_ENV)
    web = run_django(["-c", "import workbench.wsgi"], env, tmp_path)
    assert web.returncode != 0
    assert "The web server cannot start" in web.stderr and "reports.E001" in web.stderr
    worker = run_django(
        ["-m", "celery", "-A", "workbench", "worker", "--pool=solo", "--queues=reports"],
        env,
        tmp_path,
    )
    assert worker.returncode != 0
    assert "The worker cannot start" in worker.stderr and "SHEET_SIGNING_P12" in worker.stderr

    from reports.signing import create_self_signed_p12

    create_self_signed_p12(tmp_path / "org.p12", "secret", subject="Example Org")
    signed = {
        **env,
        "SHEET_SIGNING_P12": str(tmp_path / "org.p12"),
        "SHEET_SIGNING_PASSPHRASE": "secret",
    }
    started = run_django(["-c", "import workbench.wsgi; print('serving')"], signed, tmp_path)
    assert started.returncode == 0 and "serving" in started.stdout, started.stderr


def test_the_example_environment_names_only_variables_the_settings_read() -> None:
    source = (ROOT / "workbench" / "settings.py").read_text() + (
        ROOT / "workbench" / "env.py"
    ).read_text()
    example = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        name, sep, value = line.removeprefix("# ").partition("=")
        if sep and name.isupper() and " " not in name:
            example[name] = value
    assert {"OIDC_ISSUER", "LDAP_SERVER_URI", "SSO_GROUP_ROLES", "DATABASE_URL"} <= set(example)
    unread = [name for name in example if f'"{name.removesuffix("_FILE")}"' not in source]
    assert unread == []
    from workbench.settings import _sso_group_roles

    assert _sso_group_roles(example["SSO_GROUP_ROLES"])  # the example's mapping is valid


def test_the_directory_sync_is_scheduled_only_with_ldap(tmp_path: Path) -> None:
    probe = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps(s.CELERY_BEAT_SCHEDULE.get('directory-sync')))"
    )
    ldap = {"LDAP_SERVER_URI": "ldap://127.0.0.1:1", "LDAP_USER_SEARCH_BASE": "ou=people"}

    def entry(env: dict[str, str]) -> Any:
        result = run_django(["-c", probe], env, tmp_path)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    assert entry({}) is None
    assert entry(ldap) == {"task": "evaluations.tasks.directory_sync_task", "schedule": 3600.0}
    assert entry({**ldap, "LDAP_SYNC_MINUTES": "15"})["schedule"] == 900.0
    assert entry({**ldap, "LDAP_SYNC_MINUTES": "0"}) is None
    refused = run_django(["-c", probe], {**ldap, "LDAP_SYNC_MINUTES": "-5"}, tmp_path)
    assert refused.returncode != 0 and "LDAP_SYNC_MINUTES=-5 is below the minimum" in refused.stderr


def test_provider_logout_lets_the_logout_form_go_on_to_the_provider(tmp_path: Path) -> None:
    probe = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps(s.SECURE_CSP['form-action']))"
    )
    oidc = {
        "OIDC_ISSUER": "https://id.example.com/realms/gpu",
        "OIDC_CLIENT_ID": "workbench",
        "OIDC_CLIENT_SECRET": "s3cret",
    }

    def form_action(env: dict[str, str]) -> Any:
        result = run_django(["-c", probe], env, tmp_path)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    assert form_action({}) == ["'self'"]
    assert form_action(oidc) == ["'self'", "https://id.example.com"]
    assert form_action({**oidc, "OIDC_END_SESSION_ENDPOINT": "https://out.example.com/x"}) == [
        "'self'",
        "https://id.example.com",
        "https://out.example.com",
    ]
    assert form_action({**oidc, "OIDC_PROVIDER_LOGOUT": "false"}) == ["'self'"]
