"""Cluster settings are checked when they are saved, not only when a probe connects: a cloud
metadata name, an address the guard forbids (link-local, or outside PROBE_ALLOWED_NETWORKS)
and a kubeconfig that would run a plugin or read a local file are refused naming the field,
and nothing is saved. Host names are judged when a probe resolves them."""

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from poc.probes.models import Cluster
from poc.probes.services import clusters as services

pytestmark = pytest.mark.django_db

EXEC_KUBECONFIG = """
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {exec: {command: aws, args: [eks, get-token]}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def _save(suite: dict[str, Any], secrets: dict[str, str] | None = None, **data: Any) -> Any:
    return services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(name="c", candidate=suite["volcano"], **data),
        secrets=secrets or {},
        actor=None,
    )


@pytest.mark.parametrize(
    ("data", "secrets", "field", "says"),
    [
        ({"kind": "ssh", "hosts": "127.0.0.1\n10.0.0.7:2222", "ssh_user": "p"}, {}, "hosts",
         "10.0.0.7 is not in PROBE_ALLOWED_NETWORKS"),
        ({"kind": "ssh", "hosts": "metadata.google.internal", "ssh_user": "p"}, {}, "hosts",
         "cloud metadata service"),
        ({"kind": "kubernetes", "api_url": "https://[fe80::1]:6443"}, {"bearer_token": "t"},
         "api_url", "link-local"),
        ({"kind": "kubernetes"}, {"kubeconfig": EXEC_KUBECONFIG}, "kubeconfig",
         "users.exec runs local commands"),
        ({"kind": "slurm_rest", "api_url": "https://100.100.100.200:6820", "slurm_user": "s"},
         {"jwt": "x.y.z"}, "api_url", "metadata"),
    ],
)  # fmt: skip
def test_what_no_probe_may_reach_is_refused_when_saved(
    personas, data, secrets, field, says
) -> None:
    with pytest.raises(ValidationError) as refused:
        _save(personas, secrets, **data)
    assert says in str(refused.value.message_dict[field])
    assert not Cluster.objects.exists()


def test_names_and_listed_addresses_are_saved(personas, settings) -> None:
    settings.PROBE_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    ssh = _save(personas, kind="ssh", hosts="10.0.0.7\ngpu01.lab.example", ssh_user="p")
    assert ssh.hosts == "10.0.0.7\ngpu01.lab.example"
