"""MIG devices on Kubernetes nodes counted from allocatable and GPU feature discovery's labels,
with a warning where the node's capacity, allocatable and labels disagree.

Every node starts from a recorded one: the A100 in MIG mixed strategy
(shared/fixtures/k8s/node-a100-mig-mixed-7g40gb.yaml, one 7g.40gb device) or the H100 labels
of schedulers/node-labels-h100-mig-single-all-disabled.json (tests/fakes/k8s_api.h100_node),
then changed the way a MIG reconfiguration leaves it: kubelet keeps a profile the device plugin
stopped advertising in status.capacity with allocatable 0 until the plugin restarts, feature
discovery relabels from the GPUs themselves, mig-manager sets nvidia.com/mig.config.state."""

from collections.abc import Iterator
from typing import Any

import pytest

from poc.probes.connectors import kubernetes as k
from poc.probes.connectors.kubernetes import KubeTarget
from tests.fakes.k8s_api import FakeKubeApi, fixture, h100_node

TOKEN = "eyJhbGciOiJSUzI1NiJ9.probe-token-mig"
HOST = "kube.test"
A100 = "qa-mig-worker-gpu-a100"
MIG = "nvidia.com/mig-"


def resolve(host: str, port: int) -> str:
    return "127.0.0.1"


@pytest.fixture
def kube() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(token=TOKEN) as api:
        yield api


def probe(api: FakeKubeApi, *nodes: dict[str, Any]) -> dict[str, Any]:
    api.add(*nodes)
    target = KubeTarget(api_url=api.url(HOST), token=TOKEN, timeout=5.0)
    return k.probe_kubernetes(target, resolve=resolve)


def facts_of(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in result["nodes"] if n["name"] == name)


def document_of(result: dict[str, Any], host: str) -> dict[str, Any]:
    return next(n for n in result["gpu_nodes"] if n["host"] == host)


def a100() -> dict[str, Any]:
    (node,) = fixture("node-a100-mig-mixed-7g40gb.yaml")
    return node


def rebalanced_a100() -> dict[str, Any]:
    """The recorded A100 after mig-manager applied all-balanced (2 × 1g.5gb, 1 × 2g.10gb,
    1 × 3g.20gb on an A100-40GB): feature discovery labels the four new devices and drops the
    7g.40gb labels, the device plugin advertises the new profiles, and status.capacity still
    holds the 7g.40gb device (allocatable 0) because the plugin has not restarted."""
    node = a100()
    labels = node["metadata"]["labels"]
    for key in [key for key in labels if key.startswith(MIG + "7g.40gb.")]:
        del labels[key]
    labels.update(
        {
            "nvidia.com/mig.config": "all-balanced",
            MIG + "1g.5gb.count": "2",
            MIG + "2g.10gb.count": "1",
            MIG + "3g.20gb.count": "1",
        }
    )
    status = node["status"]
    new = {MIG + "1g.5gb": "2", MIG + "2g.10gb": "1", MIG + "3g.20gb": "1"}
    status["capacity"].update(new)  # 7g.40gb: "1" stays, stale
    status["allocatable"].update(new | {MIG + "7g.40gb": "0"})
    return node


def test_a_stale_capacity_profile_is_not_counted_and_is_named(kube: FakeKubeApi) -> None:
    result = probe(kube, rebalanced_a100())

    doc = document_of(result, A100)
    (gpu,) = doc["gpus"]
    assert gpu["mig_mode_current"] is True
    assert sorted(m["profile"] for m in gpu["mig_devices"]) == [
        "1g.5gb",
        "1g.5gb",
        "2g.10gb",
        "3g.20gb",
    ]
    (warning,) = doc["warnings"]
    assert warning.startswith("MIG profile 7g.40gb: capacity 1, allocatable 0, ")
    assert "label nvidia.com/mig-7g.40gb.count —" in warning
    assert "counted 0" in warning and "capacity is stale" in warning
    profiles = facts_of(result, A100)["mig_profiles"]
    assert profiles["7g.40gb"] == {
        "capacity": 1,
        "allocatable": 0,
        "label": None,
        "memory_mib": None,
        "count": 0,
    }
    assert {p: e["count"] for p, e in profiles.items()} == {
        "1g.5gb": 2,
        "2g.10gb": 1,
        "3g.20gb": 1,
        "7g.40gb": 0,
    }


def test_a_profile_the_labels_and_allocatable_disagree_on_names_the_three_numbers(
    kube: FakeKubeApi,
) -> None:
    """The device plugin withholds one 1g.5gb device it finds unhealthy: the label counts it."""
    node = rebalanced_a100()
    node["status"]["allocatable"][MIG + "1g.5gb"] = "1"
    doc = document_of(probe(kube, node), A100)

    assert len(doc["gpus"][0]["mig_devices"]) == 4
    assert (
        "MIG profile 1g.5gb: capacity 2, allocatable 1 and label nvidia.com/mig-1g.5gb.count 2 "
        "disagree; counted 2"
    ) in doc["warnings"]


@pytest.mark.parametrize("gpu_resource", [True, False])
def test_a_node_with_only_the_mig_labels_is_read_from_them(
    kube: FakeKubeApi, gpu_resource: bool
) -> None:
    """Mixed strategy, feature discovery has labelled the node, the device plugin has not
    advertised any nvidia.com/mig-* resource yet (nor, before it registers, nvidia.com/gpu)."""
    node = a100()
    for section in ("capacity", "allocatable"):
        part = node["status"][section]
        gone = [r for r in part if r.startswith(MIG) or r == "nvidia.com/gpu" and not gpu_resource]
        for resource in gone:
            del part[resource]
    result = probe(kube, node)

    facts = facts_of(result, A100)
    assert facts["gpu_node"] is True and facts["mig"] == {}
    assert facts["mig_profiles"]["7g.40gb"]["count"] == 1
    doc = document_of(result, A100)
    (gpu,) = doc["gpus"]
    assert gpu["mig_mode_current"] is True
    assert [(m["profile"], m["memory_total_mib"]) for m in gpu["mig_devices"]] == [
        ("7g.40gb", 40192)
    ]
    (warning,) = doc["warnings"]
    assert warning.startswith("MIG profile 7g.40gb: capacity —, allocatable —, ")
    assert "label nvidia.com/mig-7g.40gb.count 1" in warning
    assert "does not advertise these devices yet" in warning


def test_an_unfinished_reconfiguration_is_said(kube: FakeKubeApi) -> None:
    node = a100()
    node["metadata"]["labels"]["nvidia.com/mig.config"] = "all-1g.5gb"
    node["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending"
    doc = document_of(probe(kube, node), A100)

    assert len(doc["gpus"][0]["mig_devices"]) == 1
    assert doc["warnings"] == [
        "MIG reconfiguration not finished (nvidia.com/mig.config=all-1g.5gb, "
        "nvidia.com/mig.config.state=pending): the MIG devices counted may change"
    ]


def test_a_configuration_that_names_another_layout_is_said(kube: FakeKubeApi) -> None:
    node = a100()
    node["metadata"]["labels"]["nvidia.com/mig.config"] = "all-1g.5gb"
    doc = document_of(probe(kube, node), A100)

    assert doc["warnings"] == [
        "nvidia.com/mig.config=all-1g.5gb does not match the MIG devices counted (1 × 7g.40gb)"
    ]


def test_mig_taken_off_with_stale_capacity_keeps_the_whole_gpu(kube: FakeKubeApi) -> None:
    """The recorded H100 (single strategy, mig.config all-disabled) after its seven 1g.10gb
    devices were removed: nvidia.com/gpu is back, capacity keeps the old MIG resource."""
    node = h100_node("h100-back-to-whole")
    node["status"]["capacity"][MIG + "1g.10gb"] = "7"
    node["status"]["allocatable"][MIG + "1g.10gb"] = "0"
    result = probe(kube, node)

    doc = document_of(result, "h100-back-to-whole")
    (gpu,) = doc["gpus"]
    assert gpu["name"] == "NVIDIA-H100-80GB-HBM3" and gpu["mig_devices"] == []
    (warning,) = doc["warnings"]
    assert warning.startswith("MIG profile 1g.10gb: capacity 7, allocatable 0, ")
    assert "capacity is stale" in warning


def test_the_recorded_nodes_read_as_before(kube: FakeKubeApi) -> None:
    (t4,) = fixture("node-2x-tesla-t4.yaml")
    result = probe(kube, a100(), t4, h100_node())

    doc = document_of(result, A100)
    assert doc["warnings"] == []
    assert [m["profile"] for m in doc["gpus"][0]["mig_devices"]] == ["7g.40gb"]
    assert {p: e["count"] for p, e in facts_of(result, A100)["mig_profiles"].items()} == {
        "1g.5gb": 0,
        "2g.10gb": 0,
        "3g.20gb": 0,
        "7g.40gb": 1,
    }
    for host in ("qa-mig-worker-gpu-1", "h100-node-1"):
        assert document_of(result, host)["warnings"] == []
        assert facts_of(result, host)["mig_profiles"] == {}


def test_a_compute_instance_resource_keeps_its_gpu_instance_profile(kube: FakeKubeApi) -> None:
    """The device plugin names a compute instance smaller than its GPU instance by both
    (nvidia.com/mig-1c.3g.20gb): the device is of GPU instance profile 3g.20gb, with its own
    compute profile kept, and the profile check counts it at both levels."""
    from poc.probes.rules.checks import run_check

    node = a100()
    labels = node["metadata"]["labels"]
    for key in [key for key in labels if key.startswith(MIG + "7g.40gb.")]:
        del labels[key]
    labels.update({"nvidia.com/mig.config": "custom", MIG + "1c.3g.20gb.count": "2"})
    status = node["status"]
    for field in ("capacity", "allocatable"):
        status[field].pop(MIG + "7g.40gb", None)
        status[field][MIG + "1c.3g.20gb"] = "2"
    document = document_of(probe(kube, node), A100)
    (gpu,) = document["gpus"]
    assert [(d["profile"], d.get("compute_profile")) for d in gpu["mig_devices"]] == [
        ("3g.20gb", "1c.3g.20gb"),
        ("3g.20gb", "1c.3g.20gb"),
    ]

    def status_of(profile: str, count: int) -> str:
        wanted = {"profile": profile, "count": count}
        return run_check("mig_profile_count_at_least", wanted, [document])["status"]

    assert status_of("1c.3g.20gb", 2) == "passed"
    assert status_of("3g.20gb", 1) == "passed"
    assert status_of("3g.20gb", 2) == "unable"  # one GPU instance, or two: not said
