"""Single sign-on settings come from the environment; a present but malformed one stops
start-up with the variable named."""

import pytest

from evaluations.models import TeamRole
from tests.workbench.test_settings_env import run_django
from workbench import settings as workbench_settings
from workbench.env import ImproperEnvironment


def test_the_team_roles_the_mapping_accepts_are_the_models() -> None:
    assert list(workbench_settings.SSO_TEAM_ROLES) == list(TeamRole.values)


def test_a_mapping_is_read() -> None:
    mapping = workbench_settings._sso_group_roles(
        '{"gpu-admins": [{"project": "alpha", "role": "platform", "admin": true},'
        ' {"project": "beta", "role": "observer"}]}'
    )
    assert mapping == {
        "gpu-admins": [
            {"project": "alpha", "role": "platform", "admin": True},
            {"project": "beta", "role": "observer", "admin": False},
        ]
    }


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("{not json", "not JSON"),
        ('["a"]', "must be an object"),
        ('{"g": {"project": "alpha"}}', "'g' must map to a list"),
        ('{"g": [{"project": "alpha", "role": "root"}]}', "role 'root' is not one of"),
        ('{"g": [{"role": "ops"}]}', "a grant has no project slug"),
        ('{"g": [{"project": "a", "role": "ops", "admin": "yes"}]}', "admin must be true or false"),
        ('{"g": [{"project": "a", "role": "ops", "owner": 1}]}', "each grant is"),
    ],
)
def test_a_malformed_mapping_names_the_variable(raw: str, said: str) -> None:
    with pytest.raises(ImproperEnvironment, match="^SSO_GROUP_ROLES: ") as caught:
        workbench_settings._sso_group_roles(raw)
    assert said in str(caught.value)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"OIDC_ISSUER": "https://id.example.com", "OIDC_CLIENT_ID": "wb"}, "OIDC_CLIENT_SECRET"),
        ({"OIDC_ISSUER": "id.example.com"}, "OIDC_ISSUER='id.example.com' is not an http(s) URL"),
        ({"LDAP_SERVER_URI": "ldap://dir.example.com"}, "LDAP_USER_SEARCH_BASE"),
        (
            {
                "LDAP_SERVER_URI": "ldap://d",
                "LDAP_USER_SEARCH_BASE": "ou=p",
                "SSO_GROUP_ROLES": "{}x",
            },
            "SSO_GROUP_ROLES: not JSON",
        ),
        ({"LDAP_GROUP_TYPE": "nested"}, "LDAP_GROUP_TYPE='nested' must be one of"),
    ],
)
def test_start_up_stops_with_the_variable_named(env, said, tmp_path) -> None:
    done = run_django(["-c", "import django; django.setup()"], env, tmp_path)
    assert done.returncode != 0 and "ImproperEnvironment" in done.stderr
    assert said in done.stderr
