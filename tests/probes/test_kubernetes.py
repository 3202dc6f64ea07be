"""The Kubernetes connector against a local fake API server loaded with real cluster objects.

The official client talks HTTP(S) to tests/fakes/k8s_api.py on 127.0.0.1; the API URL names a
host that does not resolve (kube.test), so every test also shows the client connected to the
address the caller's resolve() returned, not to a name it looked up itself.
"""

import base64
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from poc.probes.connectors import kubernetes as k
from poc.probes.connectors.kubernetes import ConnectorError, KubeTarget
from tests.fakes.k8s_api import (
    OPERAND_DAEMONSETS,
    FakeKubeApi,
    cluster_policy,
    dcgm_metrics,
    dcgm_service,
    fixture,
    gpu_quota,
    h100_node,
    operand_daemonsets,
    unschedulable_podgroup,
)

TOKEN = "eyJhbGciOiJSUzI1NiJ9.probe-token-9f8e7d"
HOST = "kube.test"
LABEL = "workbench.probe/run=123"
NS = "gpu-probe"


class Resolver:
    """The caller's network guard: records its calls and answers 127.0.0.1."""

    def __init__(self, refuse: bool = False) -> None:
        self.calls: list[tuple[str, int]] = []
        self.refuse = refuse

    def __call__(self, host: str, port: int) -> str:
        self.calls.append((host, port))
        if self.refuse:
            raise ConnectorError(f"{host} resolves to a private address: refused")
        return "127.0.0.1"


@pytest.fixture
def kube() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(token=TOKEN) as api:
        yield api


@pytest.fixture(autouse=True)
def _fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k.failure, "POLL_SECONDS", 0.01)


def target(api: FakeKubeApi, **values: Any) -> KubeTarget:
    values.setdefault("api_url", api.url(HOST))
    values.setdefault("token", TOKEN)
    values.setdefault("timeout", 5.0)
    return KubeTarget(**values)


def probe(api: FakeKubeApi, **values: Any) -> dict[str, Any]:
    return k.probe_kubernetes(target(api, **values), resolve=Resolver())


def product(result: dict[str, Any], key: str) -> dict[str, Any]:
    return next(p for p in result["products"] if p["key"] == key)


def gpu_node(result: dict[str, Any], host: str) -> dict[str, Any]:
    return next(n for n in result["gpu_nodes"] if n["host"] == host)


def node(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in result["nodes"] if n["name"] == name)


def kubeconfig(api: FakeKubeApi, cluster: dict[str, Any], user: dict[str, Any]) -> str:
    doc = yaml.safe_load(api.kubeconfig(HOST))
    doc["clusters"][0]["cluster"].update(cluster)
    doc["users"][0]["user"] = user
    return yaml.safe_dump(doc)


# --- connection -----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["kubeconfig", "url and token"])
def test_reads_through_the_checked_address(kube: FakeKubeApi, how: str) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    resolve = Resolver()
    if how == "kubeconfig":
        given = KubeTarget(kubeconfig=kube.kubeconfig(HOST), timeout=5.0)
    else:
        given = KubeTarget(api_url=kube.url(HOST), token=TOKEN, timeout=5.0)

    result = k.probe_kubernetes(given, resolve=resolve)

    assert resolve.calls == [(HOST, kube.port)]
    assert result["format"] == "workbench-k8s-facts/1"
    assert result["server_version"] == "v1.30.4"
    assert kube.requests and all(r["client"] == "127.0.0.1" for r in kube.requests)
    assert {r["headers"]["authorization"] for r in kube.requests} == {f"Bearer {TOKEN}"}
    assert {r["headers"]["host"] for r in kube.requests} == {f"{HOST}:{kube.port}"}
    assert [r["path"] for r in kube.requests[:3]] == ["/version", "/apis", "/api/v1/nodes"]
    assert result["could_not_check"] == []
    json.dumps(result)  # plain JSON, storable as it is
    assert any(r["name"] == "GET /api/v1/nodes" and r["status"] == 200 for r in result["raw"])


def test_an_environment_proxy_is_not_used(
    kube: FakeKubeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert probe(kube)["server_version"] == "v1.30.4"


def test_resolve_refusing_stops_before_any_request(kube: FakeKubeApi) -> None:
    resolve = Resolver(refuse=True)
    with pytest.raises(ConnectorError, match="private address: refused"):
        k.probe_kubernetes(target(kube), resolve=resolve)
    assert resolve.calls == [(HOST, kube.port)]
    assert kube.requests == []


def test_resolve_answering_a_name_is_refused(kube: FakeKubeApi) -> None:
    with pytest.raises(ConnectorError, match="not an IP address"):
        k.probe_kubernetes(target(kube), resolve=lambda host, port: "kube.test")
    assert kube.requests == []


def test_wrong_token_names_401_without_the_token(kube: FakeKubeApi) -> None:
    wrong = "wrong-token-0123456789"
    with pytest.raises(ConnectorError) as caught:
        probe(kube, token=wrong)
    message = str(caught.value)
    assert "401 Unauthorized" in message
    assert wrong not in message and TOKEN not in message


def test_a_server_echoing_the_token_does_not_leak_it(kube: FakeKubeApi) -> None:
    echo = {"kind": "Status", "code": 401, "message": f"token {TOKEN} is not valid"}
    kube.answer("/version", 401, json.dumps(echo), "application/json")
    with pytest.raises(ConnectorError) as caught:
        k.probe_kubernetes(target(kube), resolve=Resolver())
    assert "401" in str(caught.value)
    assert TOKEN not in str(caught.value)
    assert "[redacted]" in str(caught.value)


def test_html_instead_of_an_api_server_is_a_readable_error(kube: FakeKubeApi) -> None:
    kube.answer("/version", 200, "<html><body>Sign in to Corp SSO</body></html>", "text/html")
    with pytest.raises(ConnectorError) as caught:
        probe(kube)
    message = str(caught.value)
    assert "is not a Kubernetes API server" in message
    assert "not JSON (text/html)" in message and "Sign in to Corp SSO" in message
    assert "\n" not in message and "Traceback" not in message


def test_garbage_on_one_read_is_could_not_check(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    kube.add_fixture("schedulers/queue-default-get-oyaml.yaml")
    kube.answer("/apis/scheduling.volcano.sh/v1beta1/queues", 200, "\x00\x01garbage{", "text/plain")
    result = probe(kube)
    (entry,) = [c for c in result["could_not_check"] if c["what"] == "Volcano queues"]
    assert "not JSON (text/plain)" in entry["reason"]
    assert product(result, "volcano")["present"] is None
    assert len(result["gpu_nodes"]) == 1  # the rest was still read


def test_a_redirect_is_not_followed(kube: FakeKubeApi) -> None:
    kube.answer("/apis", 302, "", "text/html", headers={"Location": "http://169.254.169.254/"})
    result = probe(kube)
    (entry,) = [c for c in result["could_not_check"] if "GET /apis" in c["what"]]
    assert "302 redirect to 'http://169.254.169.254/' (not followed)" in entry["reason"]
    assert all(p["present"] is None for p in result["products"])  # unknown, never absent


def test_unreachable_server_is_a_connector_error() -> None:
    with FakeKubeApi() as api:
        url = api.url(HOST)
    with pytest.raises(ConnectorError, match=f"no answer from {HOST}"):
        k.probe_kubernetes(KubeTarget(api_url=url, timeout=2.0), resolve=Resolver())


@pytest.mark.parametrize(
    ("user", "cluster", "message"),
    [
        (
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "aws"}},
            {},
            "kubeconfig users.exec runs local commands: refused",
        ),
        ({"auth-provider": {"name": "gcp"}}, {}, "auth-provider runs a login plugin: refused"),
        ({"tokenFile": "/var/run/secrets/token"}, {}, "tokenFile names a local file: refused"),
        ({"client-certificate": "/home/u/.kube/c.crt"}, {}, "client-certificate names a local"),
        ({"client-key": "/home/u/.kube/c.key"}, {}, "client-key names a local file"),
        ({"token": TOKEN}, {"certificate-authority": "/etc/ca.crt"}, "certificate-authority"),
        ({"token": TOKEN}, {"proxy-url": "http://proxy:3128"}, "proxy-url is not supported"),
    ],
)
def test_kubeconfig_features_that_reach_outside_are_refused(
    kube: FakeKubeApi, user: dict[str, Any], cluster: dict[str, Any], message: str
) -> None:
    resolve = Resolver()
    given = KubeTarget(kubeconfig=kubeconfig(kube, cluster, user))
    with pytest.raises(ConnectorError, match=message):
        k.probe_kubernetes(given, resolve=resolve)
    assert resolve.calls == [] and kube.requests == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clusters: [", "not valid YAML"),
        ("- a list", "not a YAML mapping"),
        ("apiVersion: v1\nkind: Config\n", "no contexts"),
    ],
)
def test_broken_kubeconfig_is_a_readable_error(text: str, message: str) -> None:
    with pytest.raises(ConnectorError, match=message):
        k.probe_kubernetes(KubeTarget(kubeconfig=text), resolve=Resolver())


def test_kubeconfig_takes_the_current_context(kube: FakeKubeApi) -> None:
    doc = yaml.safe_load(kube.kubeconfig(HOST))
    doc["clusters"].append({"name": "other", "cluster": {"server": "https://10.9.9.9:6443"}})
    doc["contexts"].insert(0, {"name": "other", "context": {"cluster": "other", "user": "probe"}})
    resolve = Resolver()
    k.probe_kubernetes(KubeTarget(kubeconfig=yaml.safe_dump(doc)), resolve=resolve)
    assert resolve.calls == [(HOST, kube.port)]


# --- TLS --------------------------------------------------------------------------------------


@pytest.fixture
def tls_kube() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(token=TOKEN, tls_names=[HOST]) as api:
        yield api


def test_tls_is_verified_against_the_name_not_the_address(tls_kube: FakeKubeApi) -> None:
    result = probe(tls_kube, ca_pem=tls_kube.ca_pem)
    assert result["server_version"] == "v1.30.4" and result["tls"] is True
    assert tls_kube.sni and set(tls_kube.sni) == {HOST}
    assert tls_kube.requests[0]["client"] == "127.0.0.1"


def test_tls_with_another_ca_is_refused(tls_kube: FakeKubeApi) -> None:
    with FakeKubeApi(tls_names=["elsewhere.test"]) as other:
        other_ca = other.ca_pem
    with pytest.raises(ConnectorError, match="TLS") as caught:
        probe(tls_kube, ca_pem=other_ca)
    assert "\n" not in str(caught.value)
    assert tls_kube.requests == []


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_tls_skip_verify_when_asked(tls_kube: FakeKubeApi) -> None:
    result = probe(tls_kube, insecure_skip_tls_verify=True)
    assert result["server_version"] == "v1.30.4"


def test_kubeconfig_client_certificate_is_used_and_its_files_removed(
    tls_kube: FakeKubeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    real_mkdtemp = k.api.tempfile.mkdtemp

    def mkdtemp(**kwargs: Any) -> str:
        made.append(real_mkdtemp(**kwargs))
        return made[-1]

    monkeypatch.setattr(k.api.tempfile, "mkdtemp", mkdtemp)
    tls_kube.token = None  # the certificate is the credential
    text = kubeconfig(
        tls_kube,
        {},
        {
            "client-certificate-data": base64.b64encode(tls_kube.client_cert_pem.encode()).decode(),
            "client-key-data": base64.b64encode(tls_kube.client_key_pem.encode()).decode(),
        },
    )
    result = k.probe_kubernetes(KubeTarget(kubeconfig=text), resolve=Resolver())
    assert result["server_version"] == "v1.30.4"
    assert tls_kube.requests and all(r["client_cert"] for r in tls_kube.requests)
    assert len(made) == 1 and not os.path.exists(made[0])


# --- nodes ------------------------------------------------------------------------------------


def test_t4_node_two_gpus(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    result = probe(kube)
    facts = node(result, "qa-mig-worker-gpu-1")
    assert facts["ready"] is True and facts["gpu_node"] is True
    assert facts["gpu"] == {"capacity": 2, "allocatable": 2}
    assert facts["gfd"]["driver_version"] == "525.60.13"  # older cuda.driver.* labels
    assert facts["gfd"]["cuda_version"] == "12.0"
    assert facts["gfd"]["mig_capable"] is False and facts["gfd"]["mig_strategy"] == "mixed"
    doc = gpu_node(result, "qa-mig-worker-gpu-1")
    assert doc["sources"] == ["kubernetes: GET /api/v1/nodes"]
    assert doc["driver_version"] == "525.60.13" and doc["warnings"] == []
    assert [g["index"] for g in doc["gpus"]] == [0, 1]
    for gpu in doc["gpus"]:
        assert gpu["name"] == "Tesla-T4"
        assert gpu["memory_total_mib"] == 15360
        assert gpu["compute_capability"] == "7.5"
        # What the API cannot know stays unknown, never 0.
        assert gpu["uuid"] is None and gpu["pci_bus_id"] is None
        assert gpu["temperature_c"] is None and gpu["memory_used_mib"] is None
        assert gpu["mig_mode_current"] is None and gpu["ecc_volatile_uncorrected"] is None


def test_a100_mig_mixed_counts_the_physical_gpu(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-a100-mig-mixed-7g40gb.yaml")
    result = probe(kube)
    facts = node(result, "qa-mig-worker-gpu-a100")
    assert facts["gpu"] == {"capacity": 0, "allocatable": 0}  # "0" is 0, not unknown
    assert facts["mig"]["nvidia.com/mig-7g.40gb"] == {"capacity": 1, "allocatable": 1}
    assert facts["mig"]["nvidia.com/mig-1g.5gb"] == {"capacity": 0, "allocatable": 0}
    assert facts["gfd"]["mig_config_state"] == "success"
    doc = gpu_node(result, "qa-mig-worker-gpu-a100")
    (gpu,) = doc["gpus"]
    assert gpu["name"] == "NVIDIA-A100-SXM4-40GB" and gpu["memory_total_mib"] == 40960
    assert gpu["compute_capability"] == "8.0" and gpu["mig_mode_current"] is True
    assert [(m["profile"], m["memory_total_mib"]) for m in gpu["mig_devices"]] == [
        ("7g.40gb", 40192)
    ]
    assert doc["driver_version"] == "520.56.06"


@pytest.mark.parametrize("drop", ["cuda.driver.", "cuda.driver-version."])
def test_h100_labels_old_or_new_driver_names(kube: FakeKubeApi, drop: str) -> None:
    h100 = h100_node()
    labels = h100["metadata"]["labels"]
    h100["metadata"]["labels"] = {
        key: value for key, value in labels.items() if not key.startswith("nvidia.com/" + drop)
    }
    kube.add(h100)
    result = probe(kube)
    gfd = node(result, "h100-node-1")["gfd"]
    assert gfd["driver_version"] == "550.54.15"
    assert gfd["mig_strategy"] == "single" and gfd["mig_config"] == "all-disabled"
    assert gfd["mig_capable"] is True and gfd["family"] == "hopper"
    (gpu,) = gpu_node(result, "h100-node-1")["gpus"]
    assert gpu["name"] == "NVIDIA-H100-80GB-HBM3"
    assert gpu["memory_total_mib"] == 81559 and gpu["compute_capability"] == "9.0"
    assert gpu_node(result, "h100-node-1")["cuda_version"] == "12.4"


def test_node_variants_time_slicing_single_mig_and_cpu_only(kube: FakeKubeApi) -> None:
    (t4,) = fixture("node-2x-tesla-t4.yaml")
    shared = json.loads(json.dumps(t4))
    shared["metadata"]["name"] = "t4-shared"
    shared["metadata"]["labels"]["nvidia.com/gpu.replicas"] = "4"
    for section in ("capacity", "allocatable"):
        shared["status"][section]["nvidia.com/gpu"] = "8"
    single = h100_node("h100-mig-single")
    single["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    single["metadata"]["labels"]["nvidia.com/gpu.count"] = "7"
    single["status"]["capacity"]["nvidia.com/gpu"] = "7"
    renamed = json.loads(json.dumps(shared))  # time-slicing with renameByDefault
    renamed["metadata"]["name"] = "t4-renamed"
    renamed["metadata"]["labels"]["nvidia.com/gpu.product"] = "Tesla-T4-SHARED"
    for section in ("capacity", "allocatable"):
        renamed["status"][section]["nvidia.com/gpu.shared"] = renamed["status"][section].pop(
            "nvidia.com/gpu"
        )
    cpu = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1"}, "status": {}}
    kube.add(shared, renamed, single, cpu)
    result = probe(kube)
    assert len(gpu_node(result, "t4-shared")["gpus"]) == 2  # physical, from gpu.count
    assert "time-slicing" in gpu_node(result, "t4-shared")["warnings"][0]
    assert node(result, "t4-renamed")["gpu_shared"] == {"capacity": 8, "allocatable": 8}
    assert [g["name"] for g in gpu_node(result, "t4-renamed")["gpus"]] == ["Tesla-T4"] * 2
    assert gpu_node(result, "h100-mig-single")["gpus"] == []
    assert "MIG single strategy" in gpu_node(result, "h100-mig-single")["warnings"][0]
    assert node(result, "cpu-1")["gpu_node"] is False and node(result, "cpu-1")["gpu"] is None
    assert {n["host"] for n in result["gpu_nodes"]} == {
        "t4-shared",
        "t4-renamed",
        "h100-mig-single",
    }


def test_nodes_are_read_page_by_page(kube: FakeKubeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k.api, "PAGE_LIMIT", 1)
    kube.add_fixture("node-2x-tesla-t4.yaml")
    kube.add_fixture("node-a100-mig-mixed-7g40gb.yaml")
    result = probe(kube)
    assert [n["name"] for n in result["nodes"]] == ["qa-mig-worker-gpu-1", "qa-mig-worker-gpu-a100"]
    pages = [r for r in kube.requests if r["path"] == "/api/v1/nodes"]
    assert [r["query"].get("continue") for r in pages] == [None, "1"]
    assert [r["name"] for r in result["raw"] if "nodes" in r["name"]] == [
        "GET /api/v1/nodes",
        "GET /api/v1/nodes (page 2)",
    ]


def test_raw_evidence_is_cut_with_a_note(
    kube: FakeKubeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(k.api, "RAW_TEXT_LIMIT", 100)
    kube.add_fixture("node-2x-tesla-t4.yaml")
    result = probe(kube)
    entry = next(r for r in result["raw"] if r["name"] == "GET /api/v1/nodes")
    assert len(entry["text"]) == 100 and entry["note"].startswith("cut at 100 of ")
    assert len(result["gpu_nodes"]) == 1  # parsed from the whole answer


def test_forbidden_nodes_are_could_not_check(kube: FakeKubeApi) -> None:
    kube.forbid("/api/v1/nodes")
    result = probe(kube)
    (entry,) = [c for c in result["could_not_check"] if c["what"].startswith("nodes")]
    assert entry["reason"].startswith("403 Forbidden: nodes is forbidden: User ")
    assert result["nodes"] == [] and result["gpu_nodes"] == []


# --- products ---------------------------------------------------------------------------------


def test_gpu_operator_ready(kube: FakeKubeApi) -> None:
    kube.add(cluster_policy("ready"), *operand_daemonsets())
    result = probe(kube)
    entry = product(result, "kubernetes-gpu-operator")
    assert entry["present"] is True and entry["state"] == "ready"
    assert entry["name"] == "NVIDIA GPU Operator"
    assert "ready 7/7" in entry["detail"]
    operator = result["gpu_operator"]
    assert operator["namespace"] == "gpu-operator" and operator["operands_not_ready"] == []
    assert {d["operand"] for d in operator["operands"]} == set(OPERAND_DAEMONSETS)
    assert [p["name"] for p in operator["cluster_policies"]] == ["cluster-policy"]


def test_gpu_operator_not_ready_names_the_operand(kube: FakeKubeApi) -> None:
    kube.add(cluster_policy("notReady"), *operand_daemonsets(("nvidia-device-plugin-daemonset",)))
    result = probe(kube)
    entry = product(result, "kubernetes-gpu-operator")
    assert entry["present"] is True and entry["state"] == "notReady"
    assert "not ready: nvidia-device-plugin-daemonset" in entry["detail"]
    assert result["gpu_operator"]["operands_not_ready"] == ["nvidia-device-plugin-daemonset"]
    (condition,) = result["gpu_operator"]["cluster_policies"][0]["conditions"]
    assert "state-device-plugin" in condition["message"]


def test_gpu_operator_daemonsets_found_outside_the_default_namespace(kube: FakeKubeApi) -> None:
    policy = cluster_policy("ready")
    del policy["status"]["namespace"]
    kube.add(policy, *operand_daemonsets(namespace="nvidia-gpu-operator"))
    result = probe(kube)
    assert {d["namespace"] for d in result["gpu_operator"]["operands"]} == {"nvidia-gpu-operator"}


def test_forbidden_group_is_could_not_check_not_absent(kube: FakeKubeApi) -> None:
    kube.add(cluster_policy("ready"))
    kube.forbid("/apis/nvidia.com/v1/clusterpolicies")
    result = probe(kube)
    entry = product(result, "kubernetes-gpu-operator")
    assert entry["present"] is None and entry["state"] == "could not check"
    assert result["gpu_operator"]["present"] is None
    (problem,) = [c for c in result["could_not_check"] if "ClusterPolicy" in c["what"]]
    assert problem["reason"].startswith(
        '403 Forbidden: clusterpolicies.nvidia.com is forbidden: User "system:serviceaccount'
    )


def test_missing_group_and_missing_resource_are_not_installed(kube: FakeKubeApi) -> None:
    kube.add_fixture("schedulers/queue-default-get-oyaml.yaml")
    kube.hide_group("scheduling.volcano.sh")
    kube.serve_group("nvidia.com", ["v1"])  # listed, but /clusterpolicies answers 404
    result = probe(kube)
    volcano = product(result, "volcano")
    assert volcano["present"] is False and volcano["state"] == "not installed"
    assert "scheduling.volcano.sh is not served" in volcano["detail"]
    operator = product(result, "kubernetes-gpu-operator")
    assert operator["present"] is False and "clusterpolicies.nvidia.com" in operator["detail"]
    assert not any(r["path"].startswith("/apis/scheduling.volcano.sh") for r in kube.requests)
    assert result["could_not_check"] == []


def test_volcano_queue_and_unschedulable_podgroup(kube: FakeKubeApi) -> None:
    kube.add_fixture("schedulers/queue-default-get-oyaml.yaml")
    kube.add(unschedulable_podgroup())
    result = probe(kube)
    assert product(result, "volcano")["present"] is True
    (queue,) = result["volcano"]["queues"]
    assert queue["name"] == "default" and queue["weight"] == 1
    assert queue["reclaimable"] is True and queue["state"] == "Open"
    (group,) = result["volcano"]["podgroups"]
    assert group["phase"] == "Inqueue"
    assert group["unschedulable"]["reason"] == "NotEnoughResources"
    assert "1 unschedulable" in product(result, "volcano")["detail"]


def test_kai_queues(kube: FakeKubeApi) -> None:
    kube.add_fixture("schedulers/kai-limited-queue-gpu-quota1-limit1.yaml")
    result = probe(kube)
    entry = product(result, "kai")
    assert entry["present"] is True and "GPU limit on test" in entry["detail"]
    queues = {q["name"]: q for q in result["kai"]["queues"]}
    assert queues["test"]["parent"] == "default"
    assert queues["test"]["gpu"] == {"quota": 1, "limit": 1, "over_quota_weight": 1}
    assert queues["default"]["gpu"]["quota"] == -1
    assert result["kai"]["version"] == "v2"
    assert product(result, "runai")["present"] is False


def test_runai_departments_found_at_a_version_other_than_the_preferred(kube: FakeKubeApi) -> None:
    kube.add_fixture("schedulers/kai-limited-queue-gpu-quota1-limit1.yaml")
    kube.add(
        {
            "apiVersion": "scheduling.run.ai/v1",
            "kind": "Department",
            "metadata": {"name": "research"},
            "spec": {"deservedGpus": 4},
        },
        {
            "apiVersion": "run.ai/v2",
            "kind": "Project",
            "metadata": {"name": "vision"},
            "spec": {"department": "research", "deservedGpus": 2},
        },
    )
    result = probe(kube)
    assert product(result, "runai")["present"] is True
    assert result["runai"]["departments"][0]["gpu"] == {"deservedGpus": 4}
    assert result["runai"]["projects"][0]["parent"] == "research"
    tried = [r["path"] for r in kube.requests if r["path"].endswith("/departments")]
    assert tried == [
        "/apis/scheduling.run.ai/v2/departments",
        "/apis/scheduling.run.ai/v1/departments",
    ]


def test_partial_datasciencecluster(kube: FakeKubeApi) -> None:
    kube.add_fixture("schedulers/dsc-v1-status-no-managed-components-PARTIAL.yaml")
    result = probe(kube)
    entry = product(result, "openshift-ai")
    assert entry["present"] is True and entry["state"] == "Ready"
    assert "managed components: none" in entry["detail"]
    (cluster,) = result["openshift_ai"]["clusters"]
    assert cluster["name"] == "default-dsc" and cluster["phase_reported"] is False
    assert cluster["components"]["kserve"] == "Removed" and len(cluster["components"]) == 13
    assert [c["type"] for c in cluster["conditions"]] == ["Ready", "ProvisioningSucceeded", None]
    assert cluster["conditions"][2]["reason"] == "NoManagedComponents"


def test_slinky_group_is_recognised(kube: FakeKubeApi) -> None:
    kube.serve_group("slinky.slurm.net", ["v1alpha1"])
    assert product(probe(kube), "slurm")["present"] is True


def test_gpu_resource_quotas(kube: FakeKubeApi) -> None:
    kube.add(gpu_quota("team-a", 4, 1))
    kube.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "cpu-only", "namespace": "team-b"},
            "spec": {"hard": {"requests.cpu": "8"}},
        }
    )
    result = probe(kube)
    assert result["quotas"] == [
        {
            "namespace": "team-a",
            "name": "gpu-quota",
            "hard": {"requests.nvidia.com/gpu": 4},
            "used": {"requests.nvidia.com/gpu": 1},
            "applies_to_probe_pod": True,
        }
    ]


# --- DCGM -------------------------------------------------------------------------------------


def test_dcgm_metrics_through_the_service_proxy(kube: FakeKubeApi) -> None:
    kube.add(cluster_policy(), dcgm_service())
    kube.proxy("gpu-operator", "nvidia-dcgm-exporter:gpu-metrics", dcgm_metrics())
    kube.add_fixture("node-2x-tesla-t4.yaml")
    result = probe(kube)
    dcgm = result["dcgm"]
    assert dcgm["present"] is True and dcgm["skipped_lines"] == 0
    assert dcgm["service"] == "gpu-operator/nvidia-dcgm-exporter:gpu-metrics"
    assert any(
        r["path"] == "/api/v1/namespaces/gpu-operator/services/"
        "nvidia-dcgm-exporter:gpu-metrics/proxy/metrics"
        for r in kube.requests
    )
    gpus = {g["gpu"]: g for g in dcgm["gpus"]}
    assert set(gpus) == {0, 1}
    assert gpus[0]["uuid"] == "GPU-7a2e92f2-be71-d37e-a744-541600ffc722"
    assert gpus[0]["model"] == "Tesla T4" and gpus[0]["driver_version"] == "525.60.13"
    assert gpus[0]["metrics"]["DCGM_FI_DEV_GPU_TEMP"] == 55
    assert gpus[1]["metrics"]["DCGM_FI_DEV_GPU_TEMP"] == 52
    assert gpus[0]["metrics"]["DCGM_FI_DEV_POWER_USAGE"] == pytest.approx(28.722)
    for name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"):
        assert name in gpus[0]["metrics"]
    assert gpus[0]["metrics"]["DCGM_FI_DEV_XID_ERRORS"] == 0
    # The exporter's Hostname is its pod's name here, not a node's: nothing is attributed.
    assert all(g["temperature_c"] is None for g in gpu_node(result, "qa-mig-worker-gpu-1")["gpus"])


def test_dcgm_readings_join_the_node_named_by_hostname(kube: FakeKubeApi) -> None:
    text = dcgm_metrics().replace("nvidia-dcgm-exporter-s228n", "qa-mig-worker-gpu-1")
    xid = 'DCGM_FI_DEV_XID_ERRORS{gpu="1"'  # GPU 1 last saw Xid 79
    lines = [
        line.rsplit(" ", 1)[0] + " 79" if line.startswith(xid) else line
        for line in text.splitlines()
    ]
    kube.add(cluster_policy(), dcgm_service())
    kube.proxy("gpu-operator", "nvidia-dcgm-exporter:gpu-metrics", "\n".join(lines))
    kube.add_fixture("node-2x-tesla-t4.yaml")
    doc = gpu_node(probe(kube), "qa-mig-worker-gpu-1")
    assert [g["temperature_c"] for g in doc["gpus"]] == [55.0, 52.0]
    assert doc["gpus"][1]["uuid"] == "GPU-5f587dd4-6505-0873-c6db-8324dbfe5ba9"
    assert [(x["code"], x["gpu_index"]) for x in doc["xid_events"]] == [(79, 1)]
    assert "kubernetes: dcgm-exporter metrics (service proxy)" in doc["sources"]


def test_dcgm_proxy_failure_is_could_not_check(kube: FakeKubeApi) -> None:
    kube.add(cluster_policy(), dcgm_service())  # no endpoint behind the service: 503
    result = probe(kube)
    (entry,) = [c for c in result["could_not_check"] if "DCGM" in c["what"]]
    assert entry["reason"].startswith("503 Service Unavailable: no endpoints available")


def test_prometheus_parser_is_tolerant() -> None:
    samples, skipped = k.parse_prometheus(
        '# HELP x\nup 1\nm{a="x\\"y",b="2"} 3.5 1700000000\nbroken line here\nn{a="1"} NaN\n'
    )
    assert samples[0] == ("up", {}, 1.0)
    assert samples[1] == ("m", {"a": 'x"y', "b": "2"}, 3.5)
    assert samples[2][0] == "n" and samples[2][2] != samples[2][2]  # NaN
    assert skipped == 1


# --- controlled failure -----------------------------------------------------------------------


def labelled(api: FakeKubeApi) -> list[str]:
    key, value = LABEL.split("=")
    found = api.objects("pods") + api.objects("jobs", "batch")
    return [
        o["metadata"]["name"] for o in found if o["metadata"].get("labels", {}).get(key) == value
    ]


def run_over_quota(api: FakeKubeApi, **values: Any) -> dict[str, Any]:
    values.setdefault("timeout", 5.0)
    return k.over_quota(target(api), resolve=Resolver(), namespace=NS, label=LABEL, **values)


def test_over_quota_both_scenarios_clean(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    kube.add(gpu_quota(NS, 8))
    result = run_over_quota(kube)

    assert result["gpus"] == 3  # the largest allocatable count (2) plus one
    nodes, quota = result["scenarios"]
    assert nodes["name"] == "more_gpus_than_any_node"
    assert nodes["state"] == "pending" and nodes["clean"] is True
    assert "1 Insufficient nvidia.com/gpu" in nodes["reason"]
    assert quota["name"] == "over_resource_quota"
    assert quota["state"] == "refused" and quota["clean"] is True
    assert "exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=9" in quota["reason"]
    # Everything created was deleted, and the Job's deletion takes its pods with it.
    assert labelled(kube) == []
    assert sorted(nodes["created"]) == sorted(nodes["deleted"]) and len(nodes["created"]) == 2
    job_delete = next(r for r in kube.received("DELETE") if "/jobs/" in r["path"])
    assert job_delete["body"]["propagationPolicy"] == "Background"
    # What was POSTed is exactly what planned_objects shows beforehand.
    posted = [r["body"] for r in kube.received("POST")]
    assert posted == k.planned_objects(NS, LABEL, 3, 9)
    assert all(b["metadata"]["labels"] == {"workbench.probe/run": "123"} for b in posted)
    assert posted[0]["spec"]["template"]["metadata"]["labels"] == {"workbench.probe/run": "123"}
    json.dumps(result)


def test_over_quota_cleans_up_when_the_timeout_hits(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    kube.scheduler = False  # the pod stays Pending and no event ever comes
    result = run_over_quota(kube, timeout=0.3)
    (scenario,) = result["scenarios"]
    assert scenario["state"] == "timeout" and scenario["clean"] is False
    assert "no FailedScheduling event within 0.3 s" in scenario["reason"]
    assert scenario["seconds"] >= 0.3
    assert labelled(kube) == []
    assert {d.split("/")[0] for d in scenario["deleted"]} == {"job", "pod"}
    assert "no ResourceQuota on requests.nvidia.com/gpu" in result["notes"][0]


def test_over_quota_cleans_up_after_an_unexpected_error(
    kube: FakeKubeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("bug while watching")

    monkeypatch.setattr(k.failure, "_watch_job", broken)
    with pytest.raises(RuntimeError):
        run_over_quota(kube)
    assert labelled(kube) == []
    assert any("/jobs/" in r["path"] for r in kube.received("DELETE"))


def test_over_quota_reports_a_pod_that_was_scheduled(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    (scenario,) = run_over_quota(kube, gpus=1)["scenarios"]
    assert scenario["state"] == "scheduled" and scenario["clean"] is False
    assert "was scheduled on qa-mig-worker-gpu-1" in scenario["reason"]
    assert labelled(kube) == []


def test_over_quota_job_refused_by_the_quota_is_not_clean(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    kube.add(gpu_quota(NS, 1))
    nodes, quota = run_over_quota(kube)["scenarios"]
    assert nodes["state"] == "refused" and nodes["clean"] is False
    assert "the Job could not create its pod: Error creating: pods" in nodes["reason"]
    assert quota["state"] == "refused" and quota["clean"] is True
    assert labelled(kube) == []


def test_over_quota_forbidden_job_creation(kube: FakeKubeApi) -> None:
    kube.add_fixture("node-2x-tesla-t4.yaml")
    kube.forbid(f"/apis/batch/v1/namespaces/{NS}/jobs", method="POST")
    (scenario,) = run_over_quota(kube)["scenarios"]
    assert scenario["state"] == "error" and scenario["clean"] is False
    assert scenario["reason"].startswith("could not create the Job: 403 Forbidden: jobs.batch")
    assert scenario["created"] == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: k.planned_objects(NS, "no equals sign", 3), "not a Kubernetes label"),
        (lambda: k.planned_objects(NS, "a/b/c=1", 3), "not a Kubernetes label"),
        (lambda: k.planned_objects("Bad_NS", LABEL, 3), "not a namespace name"),
        (lambda: k.planned_objects(NS, LABEL, 0), "at least 1"),
    ],
)
def test_planned_objects_checks_its_input(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(ConnectorError, match=message):
        call()


def test_planned_objects_shape() -> None:
    job, pod = k.planned_objects(NS, LABEL, 5, 2)
    assert (job["kind"], job["apiVersion"], pod["kind"]) == ("Job", "batch/v1", "Pod")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "5"
    assert pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert job["spec"]["backoffLimit"] == 0 and job["metadata"]["namespace"] == NS
    assert k.planned_objects(NS, LABEL, 5) == [job]


def test_sweep_deletes_only_what_carries_the_label(kube: FakeKubeApi) -> None:
    labels = {"workbench.probe/run": "123"}
    kube.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "old-job", "namespace": NS, "labels": labels},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "old-pod", "namespace": NS, "labels": labels},
        },
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "theirs", "namespace": NS}},
    )
    deleted = k.sweep(target(kube), resolve=Resolver(), namespace=NS, label_selector=LABEL)
    assert deleted == [f"job/{NS}/old-job", f"pod/{NS}/old-pod"]
    assert [p["metadata"]["name"] for p in kube.objects("pods")] == ["theirs"]


@pytest.mark.parametrize("selector", ["", "workbench.probe/run!=1", "app"])
def test_sweep_refuses_broad_selectors(kube: FakeKubeApi, selector: str) -> None:
    with pytest.raises(ConnectorError, match="label"):
        k.sweep(target(kube), resolve=Resolver(), namespace=NS, label_selector=selector)
    assert kube.requests == []


# --- the RBAC documented for users covers exactly what the probe does ---------------------------

RBAC_DOC = os.path.join(os.path.dirname(__file__), "../../docs/kubernetes-clusterrole.yaml")


def rbac_rules(kind: str) -> list[dict[str, Any]]:
    with open(RBAC_DOC) as handle:
        docs = [d for d in yaml.safe_load_all(handle) if d]
    (role,) = [d for d in docs if d["kind"] == kind]
    return role["rules"]


def allowed(rules: list[dict[str, Any]], method: str, path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return any(
            path in r.get("nonResourceURLs", [])
            or any(
                u.endswith("*") and path.startswith(u[:-1]) for u in r.get("nonResourceURLs", [])
            )
            for r in rules
            if method == "GET"
        )
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    resource, name = rest[0], rest[1] if len(rest) > 1 else None
    if len(rest) > 2:
        resource += "/" + rest[2]  # a subresource: services/proxy
    verb = {"POST": "create", "DELETE": "delete"}.get(method, "get" if name else "list")
    return any(
        group in r.get("apiGroups", [])
        and resource in r.get("resources", [])
        and verb in r["verbs"]
        and (not r.get("resourceNames") or name in r["resourceNames"])
        for r in rules
    )


def load_everything(api: FakeKubeApi) -> None:
    api.add_fixture("node-2x-tesla-t4.yaml")
    api.add_fixture("schedulers/queue-default-get-oyaml.yaml")
    api.add_fixture("schedulers/kai-limited-queue-gpu-quota1-limit1.yaml")
    api.add_fixture("schedulers/dsc-v1-status-no-managed-components-PARTIAL.yaml")
    api.add(cluster_policy(), *operand_daemonsets(), dcgm_service(), unschedulable_podgroup())
    api.add(gpu_quota(NS, 8))
    api.serve("scheduling.run.ai", "v1", "departments")
    api.serve("run.ai", "v2", "projects")
    api.proxy("gpu-operator", "nvidia-dcgm-exporter:gpu-metrics", dcgm_metrics())


def test_the_documented_clusterrole_allows_every_read(kube: FakeKubeApi) -> None:
    load_everything(kube)
    result = probe(kube)
    assert result["could_not_check"] == []
    rules = rbac_rules("ClusterRole")
    refused = [
        (r["method"], r["path"])
        for r in kube.requests
        if not allowed(rules, r["method"], r["path"])
    ]
    assert refused == []
    assert all(r["method"] == "GET" for r in kube.requests)  # the probe only reads
    assert allowed(rules, "GET", "/apis/scheduling.incubator.k8s.io/v1alpha1/podgroups")
    assert not allowed(rules, "GET", "/api/v1/namespaces/x/secrets")
    assert not allowed(rules, "GET", "/api/v1/namespaces/x/services/other:80/proxy/metrics")


def test_the_documented_role_allows_the_controlled_failure(kube: FakeKubeApi) -> None:
    load_everything(kube)
    run_over_quota(kube)
    rules = rbac_rules("ClusterRole") + rbac_rules("Role")
    refused = [
        (r["method"], r["path"])
        for r in kube.requests
        if not allowed(rules, r["method"], r["path"])
    ]
    assert refused == []
    assert not allowed(rbac_rules("ClusterRole"), "POST", f"/apis/batch/v1/namespaces/{NS}/jobs")


# --- shapes met on real clusters beyond the shared fixtures ------------------------------------


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("2", 2),
        ("2k", 2000),  # an API server returns 2000 in canonical form as "2k"
        ("1Ki", 1024),
        ("3Mi", 3 * 2**20),
        ("1000m", 1),
        ("500m", None),  # half a GPU is not a whole number
        ("1e3", 1000),
        ("-1", -1),
        ("abc", None),
        ("", None),
        ("2kk", None),
    ],
)
def test_quantities_in_canonical_form(text: str, number: int | None) -> None:
    assert k.values.as_int(text) == number


def test_a_kai_queue_limited_to_no_gpu_is_limited(kube: FakeKubeApi) -> None:
    """KAI reads a limit of -1 as none and 0 as no GPU at all."""
    kube.add_fixture("schedulers/kai-limited-queue-gpu-quota1-limit1.yaml")
    kube.add(
        {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": "no-gpu"},
            "spec": {
                "parentQueue": "default",
                "resources": {
                    "gpu": {"quota": 0, "limit": 0, "overQuotaWeight": 1},
                    "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                    "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                },
            },
        }
    )
    detail = product(probe(kube), "kai")["detail"]
    assert "GPU limit on" in detail and "no-gpu" in detail and "default" not in detail


def test_datasciencecluster_v3_nested_component_states(kube: FakeKubeApi) -> None:
    """v3 nests parts of a component ("dashboard" > "standard"), as the operator's v3 sample."""
    kube.add(
        {
            "apiVersion": "datasciencecluster.opendatahub.io/v3",
            "kind": "DataScienceCluster",
            "metadata": {"name": "default-dsc"},
            "spec": {
                "components": {
                    "dashboard": {
                        "standard": {"managementState": "Managed"},
                        "maasPortal": {"managementState": "Removed"},
                    },
                    "kserve": {"managementState": "Managed", "nim": {"managementState": "Removed"}},
                    "data": {"featureStore": {"managementState": "Managed"}},
                    "kueue": {"managementState": "Removed"},
                }
            },
        }
    )
    result = probe(kube)
    (cluster,) = result["openshift_ai"]["clusters"]
    assert cluster["components"] == {
        "dashboard/standard": "Managed",
        "dashboard/maasPortal": "Removed",
        "kserve": "Managed",
        "kserve/nim": "Removed",
        "data/featureStore": "Managed",
        "kueue": "Removed",
    }
    detail = product(result, "openshift-ai")["detail"]
    assert "dashboard/standard" in detail and "data/featureStore" in detail


def _partly_split_node(count_label: str | None) -> dict[str, Any]:
    """Eight GPUs, one split into MIG devices under the mixed strategy: nvidia.com/gpu counts the
    seven whole ones (built from the device plugin's documented resource names)."""
    node = h100_node("h20-node")
    labels = node["metadata"]["labels"]
    labels["nvidia.com/mig.strategy"] = "mixed"
    labels.pop("nvidia.com/gpu.count", None)
    if count_label is not None:
        labels["nvidia.com/gpu.count"] = count_label
    for part in ("capacity", "allocatable"):
        node["status"][part].update(
            {"nvidia.com/gpu": "7", "nvidia.com/mig-1g.12gb": "2", "nvidia.com/mig-3g.48gb": "1"}
        )
    return node


def test_a_partly_split_node_says_its_mig_gpus_are_not_told_apart(kube: FakeKubeApi) -> None:
    kube.add(_partly_split_node("8"))
    doc = gpu_node(probe(kube), "h20-node")
    assert len(doc["gpus"]) == 8
    assert any("1 of 8 GPUs are in MIG mode (3 MIG devices" in w for w in doc["warnings"])


def test_a_partly_split_node_without_a_count_says_what_it_leaves_out(kube: FakeKubeApi) -> None:
    kube.add(_partly_split_node(None))
    doc = gpu_node(probe(kube), "h20-node")
    assert len(doc["gpus"]) == 7
    assert any("3 MIG devices" in w and "not counted" in w for w in doc["warnings"])


def test_dcgm_gives_the_driver_version_a_node_has_no_label_for(kube: FakeKubeApi) -> None:
    node = fixture("node-2x-tesla-t4.yaml")[0]
    labels = node["metadata"]["labels"]
    for key in [name for name in labels if "cuda.driver" in name]:
        del labels[key]
    kube.add(node, cluster_policy(), dcgm_service())
    text = dcgm_metrics().replace("nvidia-dcgm-exporter-s228n", "qa-mig-worker-gpu-1")
    kube.proxy("gpu-operator", "nvidia-dcgm-exporter:gpu-metrics", text)
    assert gpu_node(probe(kube), "qa-mig-worker-gpu-1")["driver_version"] == "525.60.13"


def test_more_operands_count_and_a_legacy_operator_namespace_is_found(kube: FakeKubeApi) -> None:
    """Operator v1.x names no namespace and runs its operands in gpu-operator-resources; newer
    releases add the MPS control daemon, whose readiness counts too."""
    policy = cluster_policy()
    del policy["status"]["namespace"]
    mps = operand_daemonsets(namespace="gpu-operator-resources")[0]
    mps = {
        **mps,
        "metadata": {**mps["metadata"], "name": "nvidia-device-plugin-mps-control-daemon"},
    }
    mps["status"] = {**mps["status"], "numberReady": 0}
    kube.add(policy, *operand_daemonsets(namespace="gpu-operator-resources"), mps)
    operator = probe(kube)["gpu_operator"]
    assert operator["namespace"] == "gpu-operator-resources"
    assert operator["operands_not_ready"] == ["nvidia-device-plugin-mps-control-daemon"]


def test_a_quota_in_the_old_spelling_is_kept(kube: FakeKubeApi) -> None:
    kube.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpu", "namespace": "team-a"},
            "spec": {"hard": {"requests.alpha.kubernetes.io/nvidia-gpu": "4"}},
            "status": {"used": {"requests.alpha.kubernetes.io/nvidia-gpu": "1"}},
        }
    )
    (quota,) = probe(kube)["quotas"]
    assert quota["hard"] == {"requests.alpha.kubernetes.io/nvidia-gpu": 4}
    assert quota["used"] == {"requests.alpha.kubernetes.io/nvidia-gpu": 1}


def test_volcano_before_1_0_is_read_from_the_incubator_group(kube: FakeKubeApi) -> None:
    """Volcano 0.x served its PodGroups under scheduling.incubator.k8s.io/v1alpha1."""
    old = unschedulable_podgroup()
    old["apiVersion"] = "scheduling.incubator.k8s.io/v1alpha1"
    kube.add(old)
    result = probe(kube)
    entry = product(result, "volcano")
    assert entry["present"] is True, entry
    assert [pg["name"] for pg in result["volcano"]["podgroups"]] == ["test"]
    assert "1 unschedulable" in entry["detail"]
