"""Start-up checks: a wrong OIDC issuer and a wrong LDAP bind password stop start-up with the
variable named and no secret in the message; an unreachable server only warns."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core import checks
from django.test import Client

from evaluations.sso.checks import oidc_issuer_check
from evaluations.sso.ldap_checks import ldap_bind_check
from tests import ldap_rig
from tests.oidc_provider.rig import Provider
from tests.sshd import free_port

ROOT = Path(__file__).resolve().parents[3]


def test_a_wrong_issuer_is_an_error_naming_oidc_issuer(oidc_on: Provider, settings) -> None:
    assert oidc_issuer_check() == []
    # The same server under another name: its document describes another issuer.
    settings.OIDC_ISSUER = oidc_on.issuer.replace("127.0.0.1", "localhost")
    (found,) = oidc_issuer_check()
    assert found.level == checks.ERROR and found.id == "evaluations.E101"
    assert found.msg.startswith("OIDC_ISSUER is wrong: ") and "describes issuer" in found.msg
    # An issuer with no discovery document.
    settings.OIDC_ISSUER = oidc_on.issuer + "/nowhere"
    (found,) = oidc_issuer_check()
    assert found.level == checks.ERROR and "HTTP 404" in found.msg
    assert oidc_on.client_secret not in found.msg + str(found.hint)


def test_an_issuer_that_does_not_answer_only_warns(settings) -> None:
    settings.OIDC_ISSUER = f"http://127.0.0.1:{free_port()}/o"
    settings.OIDC_CLIENT_ID, settings.OIDC_CLIENT_SECRET = "wb", "top-secret-5"
    (found,) = oidc_issuer_check()
    assert found.level == checks.WARNING and found.msg.startswith("OIDC_ISSUER: ")


def test_a_wrong_bind_password_is_an_error_naming_it_without_the_password(
    ldap_on, settings
) -> None:
    assert ldap_bind_check() == []
    settings.LDAP_BIND_PASSWORD = "guessed-Secret-88"
    (found,) = ldap_bind_check()
    assert found.level == checks.ERROR and found.id == "evaluations.E102"
    assert found.msg.startswith("LDAP_BIND_PASSWORD is wrong")
    assert "guessed-Secret-88" not in found.msg + str(found.hint)
    assert ldap_rig.SERVICE_PASSWORD not in found.msg + str(found.hint)


def test_a_directory_that_does_not_answer_only_warns(settings) -> None:
    settings.LDAP_SERVER_URI = f"ldap://127.0.0.1:{free_port()}"
    settings.LDAP_BIND_DN, settings.LDAP_BIND_PASSWORD = ldap_rig.SERVICE_DN, "pw-1"
    (found,) = ldap_bind_check()
    assert found.level == checks.WARNING and found.msg.startswith("LDAP_SERVER_URI: ")


def test_manage_py_refuses_to_start_and_names_both_variables(
    oidc_on: Provider, directory, tmp_path: Path
) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OIDC_", "LDAP_", "SSO_"))},
        "DJANGO_SETTINGS_MODULE": "workbench.settings",
        "WORKBENCH_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "",
        "OIDC_ISSUER": oidc_on.issuer.replace("127.0.0.1", "localhost"),
        "OIDC_CLIENT_ID": oidc_on.client_id,
        "OIDC_CLIENT_SECRET": oidc_on.client_secret,
        "LDAP_SERVER_URI": directory.uri,
        "LDAP_BIND_DN": ldap_rig.SERVICE_DN,
        "LDAP_BIND_PASSWORD": "guessed-Secret-88",
        "LDAP_USER_SEARCH_BASE": f"ou=people,{ldap_rig.SUFFIX}",
        "LDAP_GROUP_SEARCH_BASE": f"ou=groups,{ldap_rig.SUFFIX}",
        "SSO_GROUP_ROLES": json.dumps({"wb-alpha-ops": [{"project": "alpha", "role": "ops"}]}),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "OIDC_ISSUER is wrong" in said and "LDAP_BIND_PASSWORD is wrong" in said
    assert "guessed-Secret-88" not in said and oidc_on.client_secret not in said


@pytest.fixture
def sso_checks_registered() -> Iterator[None]:
    """What `EvaluationsConfig.ready()` registers when OIDC and LDAP are configured."""
    checks.register(oidc_issuer_check, "readiness", "oidc")
    checks.register(ldap_bind_check, "readiness", "ldap")
    yield
    checks.registry.registry.registered_checks.discard(oidc_issuer_check)
    checks.registry.registry.registered_checks.discard(ldap_bind_check)


@pytest.mark.django_db
def test_readiness_lists_single_sign_on_and_names_the_problem(
    sso_checks_registered, oidc_on, ldap_on, settings
) -> None:
    settings.METRICS_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    ready = json.loads(Client().get("/readyz/").content)
    parts = {part["name"]: part for part in ready["parts"]}
    assert parts["oidc"]["ok"] and parts["ldap"]["ok"], parts
    settings.LDAP_BIND_PASSWORD = "guessed-Secret-88"
    answer = Client().get("/readyz/")
    parts = {part["name"]: part for part in json.loads(answer.content)["parts"]}
    assert answer.status_code == 503
    assert parts["ldap"]["problem"].startswith("evaluations.E102: LDAP_BIND_PASSWORD is wrong")
    assert "guessed-Secret-88" not in answer.content.decode()
