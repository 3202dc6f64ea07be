"""The clusters API: listing never returns a secret; starting a run needs probes:write."""

import json

import pytest
from django.urls import reverse

from poc.probes.models import (
    ProbeRun,
)
from poc.probes.services import clusters as services
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n-----END OPENSSH PRIVATE KEY-----"


@pytest.fixture
def cluster(personas):
    return services.cluster_save(
        project=personas["alpha"],
        data=services.ClusterData(
            name="lab",
            kind="ssh",
            candidate=personas["volcano"],
            hosts="127.0.0.2\n127.0.0.3:2222",
            ssh_user="ops",
        ),
        secrets={"ssh_private_key": SECRET, "ssh_password": "pw-abcdef"},
        actor=None,
    )


def test_listing_names_the_secrets_set_and_never_their_values(personas, cluster) -> None:
    client, _token, _raw = token_client(personas["alpha"], scopes=("read",))
    response = client.get(reverse("api_clusters", args=["alpha"]))
    assert response.status_code == 200
    (row,) = response.json()
    assert row["secrets_set"] == ["ssh_password", "ssh_private_key"]
    assert row["nodes"] == ["127.0.0.2:22", "127.0.0.3:2222"]
    body = json.dumps(response.json())
    assert "pw-abcdef" not in body and "not-a-real-key" not in body and "wbc1:" not in body


def test_other_projects_tokens_get_404(personas, cluster) -> None:
    client, _token, _raw = token_client(personas["beta"], scopes=("read", "clusters:run"))
    assert client.get(reverse("api_clusters", args=["alpha"])).status_code == 404
    assert (
        client.post(reverse("api_cluster_run", args=[cluster.pk]), {}, format="json").status_code
        == 404
    )
    assert not ProbeRun.objects.exists()


@pytest.mark.parametrize(
    "scopes", [("read",), ("read", "results:write"), ("read", "probes:write", "costs:write")]
)
def test_starting_a_run_needs_clusters_run(personas, cluster, scopes) -> None:
    """Posting probe output (probes:write) does not imply starting work on a cluster."""
    client, _token, _raw = token_client(personas["alpha"], scopes=scopes)
    response = client.post(reverse("api_cluster_run", args=[cluster.pk]), {}, format="json")
    assert response.status_code == 403 and "clusters:run" in response.json()["detail"]
    assert not ProbeRun.objects.exists()


def test_a_token_with_clusters_run_queues_a_run(personas, cluster) -> None:
    client, token, _raw = token_client(personas["alpha"], scopes=("clusters:run",))
    response = client.post(reverse("api_cluster_run", args=[cluster.pk]), {}, format="json")
    assert response.status_code == 202, response.content
    run = ProbeRun.objects.get()
    assert response.json()["id"] == run.pk and run.status == "queued" and run.cluster == cluster
    again = client.post(reverse("api_cluster_run", args=[cluster.pk]), {}, format="json")
    assert again.json()["id"] == run.pk  # one active run per cluster


def test_controlled_failures_not_enabled_are_refused(personas, cluster) -> None:
    from poc.probes.models import (
        Cluster,
    )

    kube = services.cluster_save(
        project=personas["alpha"],
        data=services.ClusterData(
            name="k8s",
            kind="kubernetes",
            candidate=personas["volcano"],
            api_url="https://127.0.0.9:6443",
        ),
        secrets={"bearer_token": "t"},
        actor=None,
    )
    client, _token, _raw = token_client(personas["alpha"], scopes=("clusters:run",))
    response = client.post(
        reverse("api_cluster_run", args=[kube.pk]), {"controlled_failures": True}, format="json"
    )
    assert response.status_code == 400 and "not enabled" in response.json()["detail"]
    assert not ProbeRun.objects.filter(cluster=Cluster.objects.get(pk=kube.pk)).exists()
