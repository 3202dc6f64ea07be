""" "Test connection" for API clusters asks the API with the stored credentials (nothing is
created): Kubernetes through the fake API server replaying recorded objects, slurmrestd for
real (tests/slurm_rig)."""

from collections.abc import Iterator
from typing import Any

import pytest

from poc.probes.services import clusters as services
from tests.fakes.k8s_api import FakeKubeApi
from tests.fakes.web_page import html_page_server
from tests.slurm_rig import SlurmRig, missing_binaries, slurm_rig

pytestmark = pytest.mark.django_db
TOKEN = "probe-token-check-5e"


@pytest.fixture
def kube_api() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(token=TOKEN) as api:
        api.add_fixture("node-2x-tesla-t4.yaml")
        yield api


def _kube_cluster(suite: dict[str, Any], api_url: str, **secrets: str) -> Any:
    return services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(
            name="k8s", kind="kubernetes", candidate=suite["volcano"], api_url=api_url
        ),
        secrets=secrets or {"bearer_token": TOKEN},
        actor=None,
    )


def test_kubernetes_that_answers_and_lets_the_token_read_nodes(gpu_suite, kube_api) -> None:
    cluster = _kube_cluster(gpu_suite, kube_api.url("127.0.0.1"))
    (check,) = services.cluster_test_connection(cluster=cluster, actor=None)
    assert check.state == "pinned", check.message
    assert check.address == "127.0.0.1"
    assert "Kubernetes v1." in check.message and "may read nodes" in check.message
    # It asked, with the token, and created nothing.
    asked = [r["path"] for r in kube_api.received("GET")]
    assert "/version" in asked and "/api/v1/nodes" in asked
    assert not kube_api.received("POST")


def test_kubernetes_refusing_the_token_is_named_without_the_token(gpu_suite, kube_api) -> None:
    cluster = _kube_cluster(gpu_suite, kube_api.url("127.0.0.1"), bearer_token="wrong-token-1")
    (check,) = services.cluster_test_connection(cluster=cluster, actor=None)
    assert check.state == "refused"
    assert "401" in check.message and "wrong-token-1" not in check.message


def test_kubernetes_without_the_read_role_says_what_to_apply(gpu_suite, kube_api) -> None:
    kube_api.forbid("/api/v1/nodes")
    cluster = _kube_cluster(gpu_suite, kube_api.url("127.0.0.1"))
    (check,) = services.cluster_test_connection(cluster=cluster, actor=None)
    assert check.state == "refused"
    assert "may not read nodes" in check.message and "ClusterRole" in check.message
    assert "403" in check.message or "forbidden" in check.message


def test_a_kubeconfig_cluster_is_checked_at_the_kubeconfig_server(gpu_suite, kube_api) -> None:
    cluster = _kube_cluster(gpu_suite, "", kubeconfig=kube_api.kubeconfig("127.0.0.1", token=TOKEN))
    (check,) = services.cluster_test_connection(cluster=cluster, actor=None)
    assert check.state == "pinned", check.message
    assert str(kube_api.port) in check.node


def test_nothing_listens_is_unreachable(gpu_suite) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cluster = _kube_cluster(gpu_suite, f"http://127.0.0.1:{port}")
    (check,) = services.cluster_test_connection(cluster=cluster, actor=None)
    assert check.state == "unreachable" and TOKEN not in check.message


def test_a_metadata_address_is_refused_without_asking(gpu_suite) -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="never probed"):
        _kube_cluster(gpu_suite, "http://169.254.169.254:80")  # refused when saved
    cluster = _kube_cluster(gpu_suite, "https://127.0.0.1:6443")
    cluster.__class__.objects.filter(pk=cluster.pk).update(api_url="http://169.254.169.254:80")
    cluster = cluster.__class__.objects.get(pk=cluster.pk)  # a row that names it all the same
    (check,) = services.cluster_test_connection(cluster=cluster, actor=None)
    assert check.state == "refused" and "never probed" in check.message
    assert check.address == ""


def test_a_web_page_is_not_a_kubernetes_api(gpu_suite) -> None:
    with html_page_server(b"<html>welcome</html>") as url:
        cluster = _kube_cluster(gpu_suite, url)
        (check,) = services.cluster_test_connection(cluster=cluster, actor=None)
    assert check.state == "unreachable"
    assert "not a Kubernetes API server" in check.message


@pytest.fixture(scope="module")
def rig() -> Iterator[SlurmRig]:
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)})")
    with slurm_rig() as running:
        yield running


def _slurm_cluster(suite: dict[str, Any], rig: SlurmRig, jwt: str) -> Any:
    return services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(
            name="slurm",
            kind="slurm_rest",
            candidate=suite["volcano"],
            api_url=rig.rest_url,
            slurm_user=rig.job_user,
        ),
        secrets={"jwt": jwt},
        actor=None,
    )


def test_slurmrestd_accepting_the_token_names_its_api_version(gpu_suite, rig) -> None:
    (check,) = services.cluster_test_connection(
        cluster=_slurm_cluster(gpu_suite, rig, rig.token()), actor=None
    )
    assert check.state == "pinned", check.message
    assert "accepts the user and token" in check.message and "v0.0." in check.message


def test_slurmrestd_refusing_a_forged_token_says_so(gpu_suite, rig) -> None:
    forged = "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJ4In0.forged-signature"
    (check,) = services.cluster_test_connection(
        cluster=_slurm_cluster(gpu_suite, rig, forged), actor=None
    )
    assert check.state == "refused", check.message
    assert "refuses" in check.message and forged not in check.message


def test_a_slurm_token_over_plain_http_is_refused_where_not_allowed(gpu_suite, settings) -> None:
    """In production a slurmrestd at http:// would get its JWT in clear text: refused when the
    cluster is saved and before anything is sent, unless SLURM_TOKEN_OVER_HTTP says so."""
    from django.core.exceptions import ValidationError

    def save(url: str, name: str) -> Any:
        return services.cluster_save(
            project=gpu_suite["alpha"],
            data=services.ClusterData(
                name=name,
                kind="slurm_rest",
                candidate=gpu_suite["volcano"],
                api_url=url,
                slurm_user="probe",
            ),
            secrets={"jwt": "eyJhbGciOiJIUzI1NiJ9.e30.sig"},
            actor=None,
        )

    settings.SLURM_TOKEN_OVER_HTTP = True
    allowed = save("http://127.0.0.1:9", "allowed")
    settings.SLURM_TOKEN_OVER_HTTP = False
    with pytest.raises(ValidationError) as refused:
        save("http://slurm.lab:6820", "plain")
    assert "SLURM_TOKEN_OVER_HTTP" in str(refused.value.message_dict["api_url"])
    assert save("https://slurm.lab:6820", "tls").api_url.startswith("https://")
    # Saved while it was allowed, then forbidden: the check sends nothing and says why.
    (check,) = services.cluster_test_connection(cluster=allowed, actor=None)
    assert check.state == "refused" and "clear text" in check.message


def test_the_page_shows_an_endpoint_test_with_a_hint_in_the_readers_language(
    gpu_suite, kube_api, login
) -> None:
    """The connection test of a Kubernetes (or slurmrestd) cluster appears on its page, not
    only an SSH cluster's; a failure says what to do, in the reader's language, above the
    connector's own words."""
    import socket

    cluster = _kube_cluster(gpu_suite, kube_api.url("127.0.0.1"))
    client = login(gpu_suite["bob"])
    url = f"/projects/alpha/clusters/{cluster.pk}/test/"
    page = client.post(url).content.decode()
    assert "Connection test" in page and "Works:" in page and "may read nodes" in page
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cluster.__class__.objects.filter(pk=cluster.pk).update(api_url=f"http://127.0.0.1:{port}")
    page = client.post(url, headers={"accept-language": "zh-hans"}).content.decode()
    assert "连接测试" in page and "该地址和端口没有任何服务应答" in page
    from django.utils import translation

    with translation.override("en"):
        assert services.failure_hint("HTTP 401 from the API server").startswith("The server")
        assert "SLURM_TOKEN_OVER_HTTP" in services.failure_hint("… in clear text: use https://")
