"""Cluster credentials at rest: AES-256-GCM under versioned keys, bound to their row, failing
closed, rotated by a command."""

import base64
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from poc.probes import credentials
from poc.probes.models import (
    Cluster,
)
from poc.probes.services import clusters as services

pytestmark = pytest.mark.django_db

OLD = "t1:" + base64.urlsafe_b64encode(b"o" * 32).decode()
NEW = "t2:" + base64.urlsafe_b64encode(b"n" * 32).decode()


def make(suite: dict[str, Any], name: str = "lab", password: str = "s3cret-pw") -> Cluster:
    return services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(
            name=name, kind="ssh", candidate=suite["volcano"], hosts="127.0.0.2", ssh_user="ops"
        ),
        secrets={"ssh_password": password},
        actor=suite["alice"],
    )


def test_secrets_round_trip_and_are_not_stored_in_clear(personas, settings) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    cluster = make(personas)
    row = Cluster.objects.get(pk=cluster.pk)
    assert "s3cret-pw" not in row.secrets and row.secrets.startswith("wbc1:t1:")
    assert row.read_secrets() == {"ssh_password": "s3cret-pw"}
    assert row.secret_summary == {"ssh_password": "set"}  # never its length


def test_summaries_stored_with_a_length_lose_it(personas, settings) -> None:
    """probes.0003 rewrites what was stored before: the length goes, a key's fingerprint stays."""
    import importlib

    from django.apps import apps

    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    cluster = make(personas)
    old = {"ssh_password": "set, 9 characters", "ssh_private_key": "ssh-ed25519 SHA256:abc"}
    Cluster.objects.filter(pk=cluster.pk).update(secret_summary=old)
    importlib.import_module("poc.probes.migrations.0003_secret_summary_set").forward(apps, None)
    assert Cluster.objects.get(pk=cluster.pk).secret_summary == {
        "ssh_password": "set",
        "ssh_private_key": "ssh-ed25519 SHA256:abc",
    }


def test_a_ciphertext_copied_to_another_row_does_not_decrypt(personas, settings) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    first, second = make(personas, "a", "first-pw"), make(personas, "b", "second-pw")
    Cluster.objects.filter(pk=second.pk).update(secrets=first.secrets)
    with pytest.raises(credentials.CredentialsUnavailable, match="another row"):
        Cluster.objects.get(pk=second.pk).read_secrets()
    assert Cluster.objects.get(pk=first.pk).read_secrets() == {"ssh_password": "first-pw"}


def test_an_altered_ciphertext_or_a_wrong_key_fails_closed(personas, settings) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    cluster = make(personas)
    tampered = (
        cluster.secrets[:-6] + ("A" if cluster.secrets[-6] != "A" else "B") + cluster.secrets[-5:]
    )
    Cluster.objects.filter(pk=cluster.pk).update(secrets=tampered)
    with pytest.raises(credentials.CredentialsUnavailable):
        Cluster.objects.get(pk=cluster.pk).read_secrets()
    Cluster.objects.filter(pk=cluster.pk).update(secrets=cluster.secrets)
    settings.WORKBENCH_CREDENTIALS_KEYS = "t1:" + base64.urlsafe_b64encode(b"x" * 32).decode()
    with pytest.raises(
        credentials.CredentialsUnavailable, match="do not decrypt under key id 't1'"
    ):
        Cluster.objects.get(pk=cluster.pk).read_secrets()
    settings.WORKBENCH_CREDENTIALS_KEYS = NEW
    with pytest.raises(credentials.CredentialsUnavailable, match="no longer holds"):
        Cluster.objects.get(pk=cluster.pk).read_secrets()


def test_a_run_with_unreadable_credentials_fails_with_the_reason(personas, settings) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    cluster = make(personas)
    settings.WORKBENCH_CREDENTIALS_KEYS = NEW
    run = services.probe_run_start(cluster=cluster, actor=None)
    services.probe_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "credentials cannot be read" in run.error
    assert "s3cret" not in run.error


def test_rotation_re_encrypts_every_row_under_the_new_key(personas, settings) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    clusters = [make(personas, f"c{i}", f"pw-{i}") for i in range(3)]
    settings.WORKBENCH_CREDENTIALS_KEYS = f"{NEW},{OLD}"
    out = StringIO()
    call_command("rotate_credentials_key", stdout=out)
    assert "re-encrypted 3 cluster(s) under key 't2'" in out.getvalue()
    settings.WORKBENCH_CREDENTIALS_KEYS = NEW  # the old key can go now
    for i, cluster in enumerate(clusters):
        row = Cluster.objects.get(pk=cluster.pk)
        assert row.secrets.startswith("wbc1:t2:")
        assert row.read_secrets() == {"ssh_password": f"pw-{i}"}
    call_command("rotate_credentials_key", stdout=out)
    assert "re-encrypted 0 cluster(s)" in out.getvalue().splitlines()[-1]


def test_rotation_names_the_rows_it_cannot_read_and_leaves_them(personas, settings) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    cluster = make(personas)
    settings.WORKBENCH_CREDENTIALS_KEYS = NEW  # the old key was dropped too early
    with pytest.raises(CommandError, match=f"cluster {cluster.pk} \\(lab\\)"):
        call_command("rotate_credentials_key", stdout=StringIO())
    assert Cluster.objects.get(pk=cluster.pk).secrets == cluster.secrets


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "is not set"),
        ("t1:" + base64.urlsafe_b64encode(b"short").decode(), "5 bytes, not 32"),
        ("t1-no-colon", "is not ID:KEY"),
        ("t1:!!!notbase64!!!", "is not base64"),
        (f"{OLD},{OLD}", "repeats"),
    ],
)
def test_bad_keys_are_refused_with_the_reason(settings, text: str, problem: str) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = text
    settings.PRODUCTION = True
    with pytest.raises(credentials.CredentialsUnavailable, match=problem):
        credentials.keys()


def test_changing_a_cluster_keeps_secrets_left_empty_and_clears_the_named_ones(
    personas, settings
) -> None:
    settings.WORKBENCH_CREDENTIALS_KEYS = OLD
    cluster = make(personas)
    data = services.ClusterData(
        name="lab", kind="ssh", candidate=personas["volcano"], hosts="127.0.0.3", ssh_user="ops"
    )
    services.cluster_save(
        project=personas["alpha"],
        data=data,
        secrets={"ssh_password": ""},
        actor=None,
        cluster=cluster,
    )
    assert Cluster.objects.get(pk=cluster.pk).read_secrets() == {"ssh_password": "s3cret-pw"}
    services.cluster_save(
        project=personas["alpha"],
        data=data,
        secrets={},
        actor=None,
        cluster=cluster,
        clear=("ssh_password",),
    )
    row = Cluster.objects.get(pk=cluster.pk)
    assert (row.secrets, row.secret_summary) == ("", {})


def test_a_secret_the_kind_does_not_take_is_refused_and_nothing_is_stored(personas) -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as caught:
        services.cluster_save(
            project=personas["alpha"],
            data=services.ClusterData(
                name="k8s",
                kind="kubernetes",
                candidate=personas["volcano"],
                api_url="https://127.0.0.9:6443",
            ),
            secrets={"ssh_password": "x"},
            actor=None,
        )
    assert "ssh_password" in caught.value.message_dict
    assert not Cluster.objects.exists()
