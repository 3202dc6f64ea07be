"""LDAP is an optional extra: without python-ldap and django-auth-ldap, password and OIDC sign-in
work and nothing imports them; LDAP variables without them stop start-up in one line naming the
missing packages and the command that installs them.

"Not installed" is made by putting None in sys.modules for both packages (an import then fails as
it does for a missing package), in this process or in a `manage.py` of its own.
"""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from evaluations.sso import extra
from tests.evaluations.sso.conftest import oidc_login, password_login
from tests.oidc_provider.rig import Provider

ROOT = Path(__file__).resolve().parents[3]
HIDE = "import sys; sys.modules.update({'ldap': None, 'django_auth_ldap': None}); "
LDAP_MODULES = ("ldap", "django_auth_ldap", "evaluations.sso.ldap", "evaluations.sso.ldap_checks")


def run_without_ldap(code: str, tmp_path: Path, **variables: str) -> subprocess.CompletedProcess:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LDAP_", "OIDC_", "SSO_"))},
        "DJANGO_SETTINGS_MODULE": "workbench.settings",
        "WORKBENCH_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "",
        **variables,
    }
    return subprocess.run(
        [sys.executable, "-c", HIDE + code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def manage_py(*args: str) -> str:
    return (
        f"import runpy; sys.argv = ['manage.py', *{args!r}]; "
        "runpy.run_path('manage.py', run_name='__main__')"
    )


@pytest.mark.parametrize(
    "variables",
    [
        {"LDAP_SERVER_URI": "ldap://127.0.0.1:9", "LDAP_USER_SEARCH_BASE": "ou=people,dc=x"},
        {"LDAP_BIND_DN": "cn=svc,dc=x", "LDAP_BIND_PASSWORD": "svc-Secret-4"},
    ],
    ids=["configured", "one-variable"],
)
def test_ldap_variables_without_the_extra_stop_start_up_in_one_line(
    variables: dict[str, str], tmp_path: Path
) -> None:
    done = run_without_ldap(manage_py("check"), tmp_path, **variables)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    (line,) = [line for line in said.splitlines() if "evaluations.E104" in line]
    for name in variables:
        assert name in line
    assert "python-ldap and django-auth-ldap" in line and "not installed" in line
    assert "pip install 'gpu-selection-workbench[ldap]'" in line
    assert "make run EXTRAS=ldap" in line
    assert "svc-Secret-4" not in said and "Traceback" not in said


def test_without_ldap_variables_the_workbench_starts_and_imports_no_ldap(tmp_path: Path) -> None:
    """The checks pass, and every module a web server or a worker loads (the URL conf with all
    views, the authentication backends, the Celery tasks) imports without the extra."""
    code = (
        "import django; django.setup(); "
        "from django.core.management import call_command; call_command('check'); "
        "import workbench.urls; "
        "from django.contrib.auth import get_backends; "
        "print('backends', [type(b).__name__ for b in get_backends()]); "
        "from workbench.celery import app; app.loader.import_default_modules(); "
        "print('tasks', 'evaluations.tasks.directory_sync_task' in app.tasks); "
        "print('ldap loaded', sorted(m for m in sys.modules if 'ldap' in m and sys.modules[m]))"
    )
    done = run_without_ldap(code, tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "'LocalAccountsBackend'" in said and "DirectoryBackend" not in said
    assert "tasks True" in said
    assert "ldap loaded []" in said


@pytest.fixture
def ldap_not_installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in LDAP_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "ldap", None)
    monkeypatch.setitem(sys.modules, "django_auth_ldap", None)
    assert extra.ldap_missing() == ["python-ldap", "django-auth-ldap"]
    yield


@pytest.mark.django_db
def test_password_and_oidc_sign_in_work_without_the_extra(
    personas, oidc_on: Provider, ldap_not_installed: None, settings
) -> None:
    assert settings.LDAP_BACKEND not in settings.AUTHENTICATION_BACKENDS
    alice = personas["alice"]
    alice.set_password("alice-local-pw-8")
    alice.save()
    client = Client()
    assert password_login(client, "alice", "alice-local-pw-8").status_code == 302
    assert client.get("/projects/alpha/").status_code == 200
    assert password_login(Client(), "alice", "wrong").status_code == 200

    provider_client = Client()
    # pia's provider group gives her the ops role in alpha.
    answer = oidc_login(provider_client, oidc_on, "pia", next_url="/projects/alpha/")
    assert answer.status_code == 302 and answer["Location"] == "/projects/alpha/"
    assert provider_client.get("/projects/alpha/").status_code == 200
    assert "ldap" not in sys.modules or sys.modules["ldap"] is None


def test_the_check_is_quiet_when_the_extra_is_installed(settings) -> None:
    settings.LDAP_VARIABLES_SET = ["LDAP_SERVER_URI"]
    assert extra.ldap_missing() == []
    assert extra.ldap_extra_check() == []
