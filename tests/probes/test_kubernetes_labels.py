"""The Kubernetes connector on managed clusters without NVIDIA's GPU feature discovery (the GPU
model from the cloud provider's node labels, GKE's MIG partitions and time-sharing), and the
controlled failure under the KAI scheduler, whose refusal event has another reason.

The nodes start from the recorded two-T4 node (shared/fixtures/k8s/node-2x-tesla-t4.yaml, a GKE
machine) with feature discovery's labels taken off and the provider's put on, as such a node
carries them; the KAI refusal replays the event line of
shared/fixtures/k8s/schedulers/kai-pod-unschedulable-event.txt."""

from collections.abc import Iterator
from typing import Any

import pytest

from poc.probes.connectors import kubernetes as k
from poc.probes.connectors.kubernetes import KubeTarget
from tests.fakes.k8s_api import FIXTURES, FakeKubeApi, fixture

TOKEN = "eyJhbGciOiJSUzI1NiJ9.probe-token-labels"
HOST = "kube.test"
LABEL = "workbench.probe/run=456"
NS = "gpu-probe"
GKE = "cloud.google.com/gke-accelerator"


def resolve(host: str, port: int) -> str:
    return "127.0.0.1"


@pytest.fixture
def kube() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(token=TOKEN) as api:
        yield api


@pytest.fixture(autouse=True)
def _fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k.failure, "POLL_SECONDS", 0.01)


def target(api: FakeKubeApi) -> KubeTarget:
    return KubeTarget(api_url=api.url(HOST), token=TOKEN, timeout=5.0)


def t4_node(name: str, *, gfd: bool = False, gpus: int = 2, **labels: str) -> dict[str, Any]:
    """The recorded T4 node, renamed; without feature discovery's labels unless `gfd`."""
    (node,) = fixture("node-2x-tesla-t4.yaml")
    node["metadata"]["name"] = name
    if not gfd:
        node["metadata"]["labels"] = {
            key: value
            for key, value in node["metadata"]["labels"].items()
            if not key.startswith("nvidia.com/")
        }
    node["metadata"]["labels"].update(labels)
    for section in ("capacity", "allocatable"):
        node["status"][section]["nvidia.com/gpu"] = str(gpus)
    return node


def probe(api: FakeKubeApi, *nodes: dict[str, Any]) -> dict[str, Any]:
    api.add(*nodes)
    return k.probe_kubernetes(target(api), resolve=resolve)


def facts_of(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in result["nodes"] if n["name"] == name)


def document_of(result: dict[str, Any], host: str) -> dict[str, Any]:
    return next(n for n in result["gpu_nodes"] if n["host"] == host)


# --- the GPU model from the cloud provider's labels -------------------------------------------


def test_a_gke_node_without_feature_discovery_takes_the_gke_accelerator_as_model(
    kube: FakeKubeApi,
) -> None:
    result = probe(kube, t4_node("gke-t4", **{GKE: "nvidia-tesla-t4"}))

    facts = facts_of(result, "gke-t4")
    assert facts["gfd"]["product"] is None
    assert facts["model"] == "nvidia-tesla-t4" and facts["model_label"] == GKE
    assert facts["cloud_labels"] == {GKE: "nvidia-tesla-t4"}
    doc = document_of(result, "gke-t4")
    assert [gpu["name"] for gpu in doc["gpus"]] == ["nvidia-tesla-t4"] * 2
    assert doc["warnings"] == []


def test_feature_discovery_wins_over_the_gke_label(kube: FakeKubeApi) -> None:
    result = probe(kube, t4_node("gfd-t4", gfd=True, **{GKE: "nvidia-tesla-t4"}))

    facts = facts_of(result, "gfd-t4")
    assert facts["model"] == "Tesla-T4" and facts["model_label"] == "nvidia.com/gpu.product"
    assert [gpu["name"] for gpu in document_of(result, "gfd-t4")["gpus"]] == ["Tesla-T4"] * 2


@pytest.mark.parametrize(
    "label", ["eks.amazonaws.com/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-name"]
)
def test_eks_auto_mode_and_karpenter_gpu_names_are_models(kube: FakeKubeApi, label: str) -> None:
    result = probe(kube, t4_node("eks-t4", **{label: "t4"}))

    assert facts_of(result, "eks-t4")["model_label"] == label
    assert [gpu["name"] for gpu in document_of(result, "eks-t4")["gpus"]] == ["t4"] * 2


def test_labels_that_name_no_model_are_not_taken_for_one(kube: FakeKubeApi) -> None:
    """AKS labels every GPU node "nvidia"; EKS node groups' accelerator label is set by hand."""
    node = t4_node(
        "aks-t4",
        **{"kubernetes.azure.com/accelerator": "nvidia", "k8s.amazonaws.com/accelerator": "true"},
    )
    result = probe(kube, node)

    facts = facts_of(result, "aks-t4")
    assert facts["model"] is None and facts["model_label"] is None
    assert facts["cloud_labels"] == {}
    assert [gpu["name"] for gpu in document_of(result, "aks-t4")["gpus"]] == [None, None]


# --- GKE's own MIG partitions and time-sharing ------------------------------------------------


def test_gke_mig_partitions_are_not_counted_as_gpus(kube: FakeKubeApi) -> None:
    node = t4_node(
        "gke-a100-mig",
        gpus=7,
        **{GKE: "nvidia-tesla-a100", "cloud.google.com/gke-gpu-partition-size": "1g.5gb"},
    )
    result = probe(kube, node)

    doc = document_of(result, "gke-a100-mig")
    assert doc["gpus"] == []
    (warning,) = doc["warnings"]
    assert "GKE MIG partitions" in warning and "7 × 1g.5gb" in warning
    assert "physical GPUs is not reported" in warning
    assert facts_of(result, "gke-a100-mig")["model"] == "nvidia-tesla-a100"


def test_gke_time_sharing_counts_each_gpu_once(kube: FakeKubeApi) -> None:
    node = t4_node(
        "gke-t4-shared",
        gpus=6,
        **{
            GKE: "nvidia-tesla-t4",
            "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
            "cloud.google.com/gke-max-shared-clients-per-gpu": "3",
        },
    )
    doc = document_of(probe(kube, node), "gke-t4-shared")

    assert [gpu["name"] for gpu in doc["gpus"]] == ["nvidia-tesla-t4"] * 2
    assert doc["warnings"] == ["time-slicing: each GPU is advertised 3 times"]


# --- the KAI scheduler's refusal --------------------------------------------------------------

# "Warning  Unschedulable  kai-scheduler  <message>" as `kubectl describe pod` printed it.
_KAI_EVENT = (FIXTURES / "schedulers" / "kai-pod-unschedulable-event.txt").read_text().split()
KAI_MESSAGE = " ".join(_KAI_EVENT[3:])


class KaiScheduledApi(FakeKubeApi):
    """The fake API server with the KAI scheduler in place of kube-scheduler: a pod it cannot
    place gets a Warning event of reason Unschedulable from kai-scheduler, and (as with a
    PodGroup that does not ask for its pods to be marked) no PodScheduled condition."""

    def _admit_pod(self, pod: dict[str, Any]) -> None:
        self.serve("", "v1", "pods")
        pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
        self.store[("", "v1", "pods")].append(pod)
        self._event(pod, "Warning", "Unschedulable", KAI_MESSAGE, "kai-scheduler")


def test_a_pod_refused_by_the_kai_scheduler_is_a_clean_pending_refusal() -> None:
    assert _KAI_EVENT[:3] == ["Warning", "Unschedulable", "kai-scheduler"]
    assert KAI_MESSAGE.startswith("No nodes with enough resources were found")
    with KaiScheduledApi(token=TOKEN) as api:
        (node,) = fixture("node-2x-tesla-t4.yaml")
        api.add(node)
        result = k.over_quota(target(api), resolve=resolve, namespace=NS, label=LABEL, timeout=5)

    (scenario,) = result["scenarios"]
    assert scenario["name"] == "more_gpus_than_any_node"
    assert scenario["state"] == "pending" and scenario["clean"] is True
    assert scenario["reason"] == KAI_MESSAGE
    assert {d.split("/")[0] for d in scenario["deleted"]} == {"job", "pod"}
