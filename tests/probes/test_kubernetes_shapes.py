"""The Kubernetes connector on object shapes real clusters write beyond the shared fixtures.

Each object is written by hand in the documented format; the comment above it names the
release, document or report whose shape it reproduces. The fake API server and the helpers
are those of test_kubernetes.py."""

from collections.abc import Iterator
from typing import Any

import pytest

from poc.probes.connectors import kubernetes as k
from tests.fakes.k8s_api import (
    FakeKubeApi,
    cluster_policy,
    dcgm_metrics,
    dcgm_service,
    fixture,
    gpu_quota,
    gpu_request,
    operand_daemonsets,
    unschedulable_podgroup,
)
from tests.probes.test_kubernetes import (
    LABEL,
    NS,
    TOKEN,
    Resolver,
    allowed,
    gpu_node,
    probe,
    product,
    rbac_rules,
    target,
)
from tests.probes.test_kubernetes_labels import t4_node


@pytest.fixture
def kube() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(token=TOKEN) as api:
        yield api


@pytest.fixture(autouse=True)
def _fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k.failure, "POLL_SECONDS", 0.01)


def _daemonset(name: str, desired: int, ready: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "gpu-operator"},
        "status": {
            "currentNumberScheduled": desired,
            "desiredNumberScheduled": desired,
            "numberMisscheduled": 0,
            "numberReady": ready,
        },
    }


# --- NVIDIA GPU Operator ----------------------------------------------------------------------


def test_operands_selected_for_no_node_are_idle_not_failing(kube: FakeKubeApi) -> None:
    """`kubectl get ds -n gpu-operator` on a cluster without MIG-capable GPUs and with drivers
    pre-installed (GPU Operator v23-v24 issue reports): nvidia-mig-manager and
    nvidia-driver-daemonset show DESIRED 0 CURRENT 0 READY 0, because the operator labels no
    node nvidia.com/gpu.deploy.mig-manager=true / deploy.driver=true."""
    operands = [
        d
        for d in operand_daemonsets()
        if d["metadata"]["name"] not in ("nvidia-mig-manager", "nvidia-driver-daemonset")
    ]
    kube.add(
        cluster_policy("ready"),
        *operands,
        _daemonset("nvidia-mig-manager", 0, 0),
        _daemonset("nvidia-driver-daemonset", 0, 0),
    )
    result = probe(kube)
    operator = result["gpu_operator"]
    assert operator["operands_not_ready"] == []
    assert sorted(operator["operands_idle"]) == ["nvidia-driver-daemonset", "nvidia-mig-manager"]
    detail = product(result, "kubernetes-gpu-operator")["detail"]
    assert "ready 5/5" in detail and "not ready" not in detail
    assert "on no node: " in detail and "nvidia-mig-manager" in detail


def test_driver_daemonsets_of_nvidiadriver_resources_are_operands(kube: FakeKubeApi) -> None:
    """With spec.driver.useNvidiaDriverCRD the operator runs one driver DaemonSet per OS,
    named nvidia-gpu-driver-<os>-<hash> (GPU Operator docs, "NVIDIA GPU Driver Custom
    Resource Definition"); OpenShift clusters also run nvidia-node-status-exporter."""
    operands = [
        d for d in operand_daemonsets() if d["metadata"]["name"] != "nvidia-driver-daemonset"
    ]
    kube.add(
        cluster_policy("ready"),
        *operands,
        _daemonset("nvidia-gpu-driver-ubuntu22.04-8896c4bf7", 2, 1),
        _daemonset("nvidia-gpu-driver-ubuntu20.04-788484b9bb", 1, 1),
        _daemonset("nvidia-node-status-exporter", 3, 3),
    )
    operator = probe(kube)["gpu_operator"]
    by_name = {d["name"]: d["operand"] for d in operator["operands"]}
    assert by_name["nvidia-gpu-driver-ubuntu20.04-788484b9bb"] == "nvidia-gpu-driver"
    assert by_name["nvidia-node-status-exporter"] == "nvidia-node-status-exporter"
    assert operator["operands_not_ready"] == ["nvidia-gpu-driver-ubuntu22.04-8896c4bf7"]


# --- Volcano ----------------------------------------------------------------------------------


def test_a_placed_podgroup_keeping_an_old_unschedulable_condition_is_not_stuck(
    kube: FakeKubeApi,
) -> None:
    """Volcano writes an Unschedulable condition on a PodGroup's first cycles and keeps it once
    the group runs, adding a Scheduled one (volcano-sh/volcano issues 153 and 3749; reason
    "tasks in gang are ready to be scheduled")."""
    running = unschedulable_podgroup()
    running["metadata"]["name"] = "trained"
    running["status"] = {
        "phase": "Running",
        "running": 1,
        "conditions": [
            {
                "lastTransitionTime": "2024-09-26T08:00:01Z",
                "message": "1/0 tasks in gang unschedulable: pod group is not ready, "
                "1 minAvailable",
                "reason": "NotEnoughResources",
                "status": "True",
                "transitionID": "0c5c6b8e-6a49-4d0e-9d55-1f0f2b1c7a11",
                "type": "Unschedulable",
            },
            {
                "lastTransitionTime": "2024-09-26T08:00:02Z",
                "reason": "tasks in gang are ready to be scheduled",
                "status": "True",
                "transitionID": "6f3d2a10-57b1-4c35-8f7e-3c9d0b2f4e22",
                "type": "Scheduled",
            },
        ],
    }
    # Inqueue again after an earlier success, then refused: the newer condition counts.
    requeued = unschedulable_podgroup()
    requeued["metadata"]["name"] = "requeued"
    requeued["status"]["conditions"].insert(
        0,
        {
            "lastTransitionTime": "2020-10-15T08:00:00Z",
            "reason": "tasks in gang are ready to be scheduled",
            "status": "True",
            "type": "Scheduled",
        },
    )
    kube.add_fixture("schedulers/queue-default-get-oyaml.yaml")
    kube.add(running, unschedulable_podgroup(), requeued)
    result = probe(kube)
    stuck = {pg["name"]: pg["unschedulable"] for pg in result["volcano"]["podgroups"]}
    assert stuck["trained"] is None
    assert stuck["test"]["reason"] == "NotEnoughResources"
    assert stuck["requeued"]["reason"] == "NotEnoughResources"
    assert "2 unschedulable" in product(result, "volcano")["detail"]


def test_hierarchical_queues_name_their_parent(kube: FakeKubeApi) -> None:
    """Volcano 1.4-1.10 declared the hierarchy in annotations ("volcano.sh/hierarchy":
    "root/eng/prod", "volcano.sh/hierarchy-weights": "1/2/8", as the hierarchical queue
    design document shows); 1.11+ has spec.parent."""
    kube.add(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {
                "name": "prod",
                "annotations": {
                    "volcano.sh/hierarchy": "root/eng/prod",
                    "volcano.sh/hierarchy-weights": "1/2/8",
                },
            },
            "spec": {"weight": 1, "reclaimable": True},
            "status": {"state": "Open"},
        },
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "eng-backend"},
            "spec": {"weight": 7, "parent": "engineering"},
            "status": {"state": "Open"},
        },
    )
    queues = {q["name"]: q for q in probe(kube)["volcano"]["queues"]}
    assert queues["prod"]["parent"] == "eng"
    assert queues["prod"]["hierarchy"] == "root/eng/prod"
    assert queues["eng-backend"]["parent"] == "engineering"


# --- nodes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["mps", "MPS"])
def test_gke_mps_counts_each_gpu_once(kube: FakeKubeApi, strategy: str) -> None:
    """GKE's NVIDIA MPS node pools (gpu-sharing-strategy=mps, max-shared-clients-per-gpu=4)
    advertise each GPU once per client, each pod asking nvidia.com/gpu: 1 (GKE docs, "Share
    GPUs with multiple workloads using NVIDIA MPS"); node auto-provisioning labels "MPS"."""
    node = t4_node("gke-t4-mps", gpus=8)
    node["metadata"]["labels"].update(
        {
            "cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
            "cloud.google.com/gke-gpu-sharing-strategy": strategy,
            "cloud.google.com/gke-max-shared-clients-per-gpu": "4",
        }
    )
    kube.add(node)
    doc = gpu_node(probe(kube), "gke-t4-mps")
    assert [gpu["name"] for gpu in doc["gpus"]] == ["nvidia-tesla-t4"] * 2
    assert doc["warnings"] == ["MPS: each GPU is advertised 4 times"]


def test_karpenter_gpu_count_and_memory_labels_fill_in_without_feature_discovery(
    kube: FakeKubeApi,
) -> None:
    """Karpenter's well-known labels on an AWS g6 node (one L4): instance-gpu-name "l4",
    instance-gpu-count "1", instance-gpu-memory "22888" (MiB of one GPU, Karpenter docs);
    the second node's device plugin time-slices its GPU four ways, with no GFD to say so."""
    karpenter = {
        "karpenter.k8s.aws/instance-gpu-name": "l4",
        "karpenter.k8s.aws/instance-gpu-count": "1",
        "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia",
        "karpenter.k8s.aws/instance-gpu-memory": "22888",
    }
    plain, sliced = t4_node("g6-plain", gpus=1), t4_node("g6-sliced", gpus=4)
    for node in (plain, sliced):
        node["metadata"]["labels"].update(karpenter)
    kube.add(plain, sliced)
    result = probe(kube)
    (gpu,) = gpu_node(result, "g6-plain")["gpus"]
    assert gpu["name"] == "l4" and gpu["memory_total_mib"] == 22888
    assert gpu_node(result, "g6-plain")["warnings"] == []
    doc = gpu_node(result, "g6-sliced")
    assert [g["memory_total_mib"] for g in doc["gpus"]] == [22888]
    (warning,) = doc["warnings"]
    assert "advertises 4 nvidia.com/gpu" in warning
    assert "karpenter.k8s.aws/instance-gpu-count label says 1" in warning


def test_gpus_the_device_plugin_withholds_are_named(kube: FakeKubeApi) -> None:
    """The device plugin's capacity counts every GPU, allocatable only the healthy ones
    (NVIDIA/k8s-device-plugin issue 58: capacity nvidia.com/gpu "16", allocatable "0")."""
    (node,) = fixture("node-2x-tesla-t4.yaml")
    node["status"]["allocatable"]["nvidia.com/gpu"] = "1"
    kube.add(node)
    doc = gpu_node(probe(kube), "qa-mig-worker-gpu-1")
    assert len(doc["gpus"]) == 2
    (warning,) = doc["warnings"]
    assert warning.startswith("1 of 2 nvidia.com/gpu are not allocatable")


# --- DCGM exporter ----------------------------------------------------------------------------


def _with_value(text: str, metric: str, gpu: str, value: str) -> str:
    start = f'{metric}{{gpu="{gpu}"'
    return "\n".join(
        line.rsplit(" ", 1)[0] + " " + value if line.startswith(start) else line
        for line in text.splitlines()
    )


def test_dcgm_fields_without_a_value_are_not_readings(kube: FakeKubeApi) -> None:
    """Exporters before NVIDIA/gpu-monitoring-tools PR 92 (2020) printed DCGM's blank markers
    as values: 9223372036854775794 for an int64 field with no value (as the README of the
    time showed), 140737488355328.000000 for a float64 one."""
    text = dcgm_metrics().replace("nvidia-dcgm-exporter-s228n", "qa-mig-worker-gpu-1")
    text = _with_value(text, "DCGM_FI_DEV_XID_ERRORS", "1", "9223372036854775794")
    text = _with_value(text, "DCGM_FI_DEV_FB_USED", "0", "9223372036854775794")
    text = _with_value(text, "DCGM_FI_DEV_POWER_USAGE", "0", "140737488355328.000000")
    kube.add(cluster_policy(), dcgm_service(), *fixture("node-2x-tesla-t4.yaml"))
    kube.proxy("gpu-operator", "nvidia-dcgm-exporter:gpu-metrics", text)
    result = probe(kube)
    doc = gpu_node(result, "qa-mig-worker-gpu-1")
    assert doc["xid_events"] == []
    assert doc["gpus"][0]["memory_used_mib"] is None and doc["gpus"][0]["power_draw_w"] is None
    assert doc["gpus"][0]["temperature_c"] == 55.0  # the readings that have a value stay
    gpus = {g["gpu"]: g for g in result["dcgm"]["gpus"]}
    assert sorted(gpus[0]["no_value"]) == ["DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE"]
    assert "DCGM_FI_DEV_XID_ERRORS" not in gpus[1]["metrics"]


# --- the controlled failure -------------------------------------------------------------------

# Karpenter's event on a pod no NodePool can launch a node for (Karpenter v1 format: reason
# FailedScheduling, source karpenter).
KARPENTER = (
    'Failed to schedule pod, incompatible with nodepool "default", daemonset '
    'overhead={"cpu":"150m","pods":"3"}, no instance type satisfied resources '
    '{"cpu":"160m","memory":"48Mi","nvidia.com/gpu":"3","pods":"4"} and requirements '
    "karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [default]"
)


class KarpenterApi(FakeKubeApi):
    """kube-scheduler with Karpenter beside it: Karpenter's FailedScheduling event on the pod
    is listed before the scheduler's."""

    def _admit_pod(self, pod: dict[str, Any]) -> None:
        self._event(pod, "Warning", "FailedScheduling", KARPENTER, "karpenter")
        super()._admit_pod(pod)


def test_the_refusal_naming_the_gpu_shortage_wins_over_karpenters() -> None:
    with KarpenterApi(token=TOKEN) as api:
        api.add_fixture("node-2x-tesla-t4.yaml")
        result = k.over_quota(
            target(api), resolve=Resolver(), namespace=NS, label=LABEL, timeout=5.0
        )
    (scenario,) = result["scenarios"]
    assert scenario["state"] == "pending" and scenario["clean"] is True
    assert "1 Insufficient nvidia.com/gpu" in scenario["reason"]


class ScopedQuotaApi(FakeKubeApi):
    """Quota admission that, as the API server's, leaves a pod without a priority class out of
    a quota scoped to a PriorityClass."""

    def _quota_refusal(self, namespace: str, pod: dict[str, Any]) -> str | None:
        asked = sum(
            int((c.get("resources") or {}).get("limits", {}).get("nvidia.com/gpu") or 0)
            for c in pod["spec"]["containers"]
        )
        key = "requests.nvidia.com/gpu"
        for quota in self.objects("resourcequotas", namespace=namespace):
            if (quota.get("spec") or {}).get("scopeSelector"):
                continue  # PriorityClass In [...]: the probe's pod names none
            limit = int(quota["spec"]["hard"][key])
            used = int(quota["status"]["used"][key])
            if used + asked > limit:
                return (
                    f'pods "{pod["metadata"]["name"]}" is forbidden: exceeded quota: '
                    f"{quota['metadata']['name']}, requested: {key}={asked}, "
                    f"used: {key}={used}, limited: {key}={limit}"
                )
        return None


def _priority_quota(hard: int) -> dict[str, Any]:
    # Kubernetes docs, "Resource Quotas" > "Quota scopes" > "Resource quota per
    # PriorityClass": a quota that only pods of PriorityClass "high" count against.
    quota = gpu_quota(NS, hard, name="gpu-high-priority")
    quota["spec"]["scopeSelector"] = {
        "matchExpressions": [{"operator": "In", "scopeName": "PriorityClass", "values": ["high"]}]
    }
    return quota


def test_a_quota_scoped_to_a_priority_class_is_not_the_one_to_exceed() -> None:
    with ScopedQuotaApi(token=TOKEN) as api:
        api.add(*fixture("node-2x-tesla-t4.yaml"), gpu_quota(NS, 8), _priority_quota(1))
        result = k.over_quota(
            target(api), resolve=Resolver(), namespace=NS, label=LABEL, timeout=5.0
        )
    quota = result["scenarios"][1]
    assert quota["state"] == "refused" and quota["clean"] is True
    assert "exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=9" in quota["reason"]


def test_only_scoped_gpu_quotas_are_named_when_the_quota_scenario_is_skipped() -> None:
    with ScopedQuotaApi(token=TOKEN) as api:
        api.add(*fixture("node-2x-tesla-t4.yaml"), _priority_quota(1))
        result = k.over_quota(
            target(api), resolve=Resolver(), namespace=NS, label=LABEL, timeout=5.0
        )
    assert [s["name"] for s in result["scenarios"]] == ["more_gpus_than_any_node"]
    (note,) = result["notes"]
    assert "scoped to other pods: gpu-high-priority" in note


# --- OpenShift AI / Open Data Hub -------------------------------------------------------------


def _alpha_dsc(with_status: bool) -> dict[str, Any]:
    # The first DataScienceCluster (Open Data Hub operator v2.0, datasciencecluster v1alpha1,
    # as the ODH blog of 2023-07-24 shows it): `enabled` flags, not managementState; the v2.x
    # operators report status.installedComponents (name: true/false, opendatahub-operator
    # issue 300) beside phase and conditions.
    dsc: dict[str, Any] = {
        "apiVersion": "datasciencecluster.opendatahub.io/v1alpha1",
        "kind": "DataScienceCluster",
        "metadata": {"name": "default"},
        "spec": {
            "components": {
                "dashboard": {"enabled": True},
                "datasciencepipelines": {"enabled": False},
                "distributedworkloads": {"enabled": True},
                "kserve": {"enabled": False},
                "modelmeshserving": {"enabled": False},
                "workbenches": {"enabled": True},
            }
        },
    }
    if with_status:
        dsc["status"] = {
            "phase": "Ready",
            "installedComponents": {
                "dashboard": True,
                "data-science-pipelines-operator": False,
                "distributedworkloads": True,
                "kserve": False,
                "model-mesh": False,
                "workbenches": True,
            },
            "conditions": [
                {
                    "lastHeartbeatTime": "2023-08-01T10:00:00Z",
                    "lastTransitionTime": "2023-08-01T10:00:00Z",
                    "message": "DataScienceCluster resource reconciled successfully",
                    "reason": "ReconcileCompleted",
                    "status": "True",
                    "type": "ReconcileComplete",
                }
            ],
        }
    return dsc


@pytest.mark.parametrize("with_status", [True, False])
def test_datasciencecluster_enabled_flags_and_installed_components(
    kube: FakeKubeApi, with_status: bool
) -> None:
    kube.add(_alpha_dsc(with_status))
    result = probe(kube)
    (cluster,) = result["openshift_ai"]["clusters"]
    managed = sorted(n for n, state in cluster["components"].items() if state == "Managed")
    assert managed == ["dashboard", "distributedworkloads", "workbenches"]
    assert cluster["components"]["kserve"] == "Removed"
    detail = product(result, "openshift-ai")["detail"]
    assert "managed components: dashboard, distributedworkloads, workbenches" in detail


def test_queues_without_a_state_are_not_counted_as_closed(kube: FakeKubeApi) -> None:
    """kube-batch's and Volcano 0.x's Queue (scheduling.incubator.k8s.io/v1alpha1) has only
    spec.weight and pod counts in status (unknown, pending, running), no state."""
    kube.add(
        {
            "apiVersion": "scheduling.incubator.k8s.io/v1alpha1",
            "kind": "Queue",
            "metadata": {"name": "default"},
            "spec": {"weight": 1},
            "status": {"unknown": 0, "pending": 1, "running": 2},
        }
    )
    result = probe(kube)
    (queue,) = result["volcano"]["queues"]
    assert queue["name"] == "default" and queue["state"] is None
    detail = product(result, "volcano")["detail"]
    assert detail.startswith("1 queues, 0 PodGroups") and "open" not in detail


# --- Prometheus text format -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("a\\\\nb", "a\\nb"),  # an escaped backslash, then "n": no newline
        ("a\\nb", "a\nb"),
        ('say \\"hi\\"', 'say "hi"'),
        ('q\\"\\\\', 'q"\\'),  # a quote, then a backslash at the end
        ("C:\\\\\\\\new", "C:\\\\new"),  # two escaped backslashes before "new"
        ("\\\\\\n", "\\\n"),  # a backslash, then a newline
    ],
)
def test_label_values_are_unescaped_in_one_left_to_right_pass(written: str, value: str) -> None:
    """The text format escapes a label value's backslash as \\\\, its quote as \\" and its newline
    as \\n (Prometheus, "Exposition formats"); "\\\\n" is a backslash followed by "n"."""
    samples, skipped = k.parse_prometheus(f'm{{path="{written}",b="2"}} 1\n')
    assert skipped == 0
    assert samples == [("m", {"path": value, "b": "2"}, 1.0)]


# --- DCGM exporter: per-code Xid counter -------------------------------------------------------

_T4_GPU0 = (
    'gpu="0",UUID="GPU-7a2e92f2-be71-d37e-a744-541600ffc722",device="nvidia0",'
    'modelName="Tesla T4",Hostname="qa-mig-worker-gpu-1",DCGM_FI_DRIVER_VERSION="525.60.13"'
)
_T4_GPU1 = (
    'gpu="1",UUID="GPU-5f587dd4-6505-0873-c6db-8324dbfe5ba9",device="nvidia1",'
    'modelName="Tesla T4",Hostname="qa-mig-worker-gpu-1",DCGM_FI_DRIVER_VERSION="525.60.13"'
)


def test_the_per_code_xid_counter_gives_each_code_once(kube: FakeKubeApi) -> None:
    """dcgm-exporter 3.3.5+ publishes DCGM_EXP_XID_ERRORS_COUNT once per GPU and Xid code seen
    within its window (label xid, label window_size_in_ms from --xid-count-window-size, 300000
    by default), beside DCGM_FI_DEV_XID_ERRORS, which holds the last code (NVIDIA/dcgm-exporter
    pull request 239). GPU 1 saw Xid 79 once and Xid 13 three times, 79 last; GPU 0's Xid 48
    left the window and only the last-code gauge still shows it."""
    text = dcgm_metrics().replace("nvidia-dcgm-exporter-s228n", "qa-mig-worker-gpu-1")
    text = _with_value(text, "DCGM_FI_DEV_XID_ERRORS", "0", "48")
    text = _with_value(text, "DCGM_FI_DEV_XID_ERRORS", "1", "79")
    text += (
        "\n# HELP DCGM_EXP_XID_ERRORS_COUNT Count of XID Errors within user-specified time window "
        "(see xid-count-window-size param).\n"
        "# TYPE DCGM_EXP_XID_ERRORS_COUNT gauge\n"
        f'DCGM_EXP_XID_ERRORS_COUNT{{{_T4_GPU1},window_size_in_ms="300000",xid="79"}} 1\n'
        f'DCGM_EXP_XID_ERRORS_COUNT{{{_T4_GPU1},window_size_in_ms="300000",xid="13"}} 3\n'
        f'DCGM_EXP_XID_ERRORS_COUNT{{{_T4_GPU0},window_size_in_ms="300000",xid="43"}} 0\n'
    )
    kube.add(cluster_policy(), dcgm_service(), *fixture("node-2x-tesla-t4.yaml"))
    kube.proxy("gpu-operator", "nvidia-dcgm-exporter:gpu-metrics", text)
    result = probe(kube)
    events = gpu_node(result, "qa-mig-worker-gpu-1")["xid_events"]
    assert sorted((x["code"], x["gpu_index"]) for x in events) == [(13, 1), (48, 0), (79, 1)]
    by_code = {x["code"]: x["message"] for x in events}
    assert "3 times within its last 300 s (DCGM_EXP_XID_ERRORS_COUNT)" in by_code[13]
    assert "once within its last 300 s" in by_code[79]
    assert "DCGM_FI_DEV_XID_ERRORS" in by_code[48]
    gpus = {g["gpu"]: g for g in result["dcgm"]["gpus"]}
    assert [(c["code"], c["count"]) for c in gpus[1]["xid_counts"]] == [(79, 1), (13, 3)]
    assert "DCGM_EXP_XID_ERRORS_COUNT" not in gpus[1]["metrics"]


# --- NVIDIA GPU Operator: NVIDIADriver resources -----------------------------------------------


def _nvidia_driver(name: str, version: str, ready: bool) -> dict[str, Any]:
    """An NVIDIADriver as the GPU Operator writes it (api/nvidia/v1alpha1/nvidiadriver_types.go:
    cluster-scoped, status.state ready / notReady, metav1 conditions Ready and Error, set by
    internal/conditions/nvidiadriver.go: Ready True "Reconciled" with Error False "Ready", or
    Ready False "Error" with Error True and the failure's reason)."""
    if ready:
        conditions = [
            ("Ready", "True", "Reconciled", "All resources have been successfully reconciled"),
            ("Error", "False", "Ready", ""),
        ]
    else:
        conditions = [
            ("Ready", "False", "Error", ""),
            (
                "Error",
                "True",
                "ConflictingNodeSelector",
                "nodes are selected by more than one NVIDIADriver instance",
            ),
        ]
    return {
        "apiVersion": f"nvidia.com/{version}",
        "kind": "NVIDIADriver",
        "metadata": {
            "name": name,
            "uid": f"6c1d2a57-0e1b-4f5e-9a3b-{len(name):012d}",
            "resourceVersion": "81234",
            "generation": 1,
            "creationTimestamp": "2026-06-05T17:30:02Z",
        },
        "spec": {
            "driverType": "gpu",
            "repository": "nvcr.io/nvidia",
            "image": "driver",
            "version": "550.90.07",
            "nodeSelector": {"nvidia.com/gpu.present": "true"},
        },
        "status": {
            "state": "ready" if ready else "notReady",
            "namespace": "gpu-operator",
            "conditions": [
                {
                    "type": kind,
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": "2026-06-05T17:31:10Z",
                    "observedGeneration": 1,
                }
                for kind, status, reason, message in conditions
            ],
        },
    }


def _serve_drivers(kube: FakeKubeApi, version: str, *drivers: dict[str, Any]) -> None:
    # Stored as the cluster-scoped objects they are (no metadata.namespace).
    kube.serve("nvidia.com", version, "nvidiadrivers")
    kube.store[("nvidia.com", version, "nvidiadrivers")].extend(drivers)


def _policy_using_driver_crd() -> dict[str, Any]:
    policy = cluster_policy("ready")
    policy["spec"]["driver"] = {"enabled": True, "useNvidiaDriverCRD": True}
    return policy


@pytest.mark.parametrize("version", ["v1alpha1", "v1"])
def test_nvidiadriver_resources_are_found_by_discovery_and_reported(
    kube: FakeKubeApi, version: str
) -> None:
    kube.add(_policy_using_driver_crd(), *operand_daemonsets())
    _serve_drivers(
        kube,
        version,
        _nvidia_driver("default", version, ready=True),
        _nvidia_driver("h100-drivers", version, ready=False),
    )
    result = probe(kube)
    assert result["could_not_check"] == []
    drivers = result["gpu_operator"]["nvidia_drivers"]
    assert drivers["present"] is True and drivers["version"] == version
    assert result["gpu_operator"]["use_nvidia_driver_crd"] is True
    found = {
        d["name"]: (d["state"], d["ready_reason"], d["error"], d["error_reason"])
        for d in drivers["drivers"]
    }
    assert found == {
        "default": ("ready", "Reconciled", "False", "Ready"),
        "h100-drivers": ("notReady", "Error", "True", "ConflictingNodeSelector"),
    }
    detail = product(result, "kubernetes-gpu-operator")["detail"]
    assert "NVIDIADriver default ready (Ready True: Reconciled)" in detail
    assert "h100-drivers notReady (Ready False: Error; Error: ConflictingNodeSelector)" in detail
    assert any(r["path"] == f"/apis/nvidia.com/{version}/nvidiadrivers" for r in kube.requests)
    rules = rbac_rules("ClusterRole")
    assert [r["path"] for r in kube.requests if not allowed(rules, r["method"], r["path"])] == []


def test_forbidden_nvidiadrivers_are_could_not_check_not_absent(kube: FakeKubeApi) -> None:
    kube.add(_policy_using_driver_crd(), *operand_daemonsets())
    _serve_drivers(kube, "v1alpha1", _nvidia_driver("default", "v1alpha1", ready=True))
    kube.forbid("/apis/nvidia.com/v1/nvidiadrivers")  # the first version discovery lists
    result = probe(kube)
    drivers = result["gpu_operator"]["nvidia_drivers"]
    assert drivers["present"] is None and drivers["state"] == "could not check"
    (problem,) = [c for c in result["could_not_check"] if "NVIDIADriver" in c["what"]]
    assert problem["reason"].startswith("403 Forbidden: nvidiadrivers.nvidia.com is forbidden")
    entry = product(result, "kubernetes-gpu-operator")
    assert entry["present"] is True and entry["state"] == "ready"
    assert "NVIDIADriver resources: could not check (403 Forbidden" in entry["detail"]


def test_a_policy_using_nvidiadrivers_without_any_says_so(kube: FakeKubeApi) -> None:
    kube.add(_policy_using_driver_crd(), *operand_daemonsets())
    _serve_drivers(kube, "v1alpha1")
    result = probe(kube)
    assert result["gpu_operator"]["nvidia_drivers"]["present"] is True
    detail = product(result, "kubernetes-gpu-operator")["detail"]
    assert "useNvidiaDriverCRD is set but no NVIDIADriver resource exists" in detail


# --- the controlled failure on taints other than nvidia.com/gpu --------------------------------


def _tolerates(pod: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Kubernetes' toleration matching (core/v1 Toleration.ToleratesTaint)."""
    for toleration in pod["spec"].get("tolerations") or []:
        if toleration.get("effect") and toleration["effect"] != taint["effect"]:
            continue
        if toleration.get("key") and toleration["key"] != taint["key"]:
            continue
        if not toleration.get("key") and toleration.get("operator") != "Exists":
            continue
        if toleration.get("operator") == "Exists" or toleration.get("value") == taint.get("value"):
            return True
    return False


class TaintAwareApi(FakeKubeApi):
    """kube-scheduler's filters for taints and GPUs: a node with a NoSchedule taint the pod does
    not tolerate is out with "node(s) had untolerated taint {key: value}" (TaintToleration),
    one without enough GPUs with "Insufficient nvidia.com/gpu" (NodeResourcesFit); the message
    counts each reason over the nodes, sorted, as the scheduler's FitError does."""

    def _admit_pod(self, pod: dict[str, Any]) -> None:
        asked = gpu_request(pod)
        reasons: dict[str, int] = {}
        for node in self.objects("nodes"):
            taints = [
                t
                for t in (node.get("spec") or {}).get("taints") or []
                if t["effect"] in ("NoSchedule", "NoExecute") and not _tolerates(pod, t)
            ]
            allocatable = int(node["status"]["allocatable"].get("nvidia.com/gpu") or 0)
            if taints:
                taint = taints[0]
                reason = (
                    f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"
                )
            elif allocatable < asked:
                reason = "Insufficient nvidia.com/gpu"
            else:
                super()._admit_pod(pod)
                return
            reasons[reason] = reasons.get(reason, 0) + 1
        self.serve("", "v1", "pods")
        total = sum(reasons.values())
        fit = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
        victims: dict[str, int] = {}
        for reason, count in reasons.items():
            if reason.startswith("Insufficient"):
                why = "No preemption victims found for incoming pod"
            else:
                why = "Preemption is not helpful for scheduling"
            victims[why] = victims.get(why, 0) + count
        preemption = ", ".join(sorted(f"{count} {why}" for why, count in victims.items()))
        message = (
            f"0/{total} nodes are available: {fit}. preemption: 0/{total} nodes are "
            f"available: {preemption}."
        )
        pod["status"] = {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                }
            ],
        }
        self.store[("", "v1", "pods")].append(pod)
        self._event(pod, "Warning", "FailedScheduling", message, "default-scheduler")


def _aks_node(name: str, pool: str, gpus: int, taint: tuple[str, str]) -> dict[str, Any]:
    # An AKS node: GPU pools tainted sku=gpu:NoSchedule as AKS's GPU guide recommends, the
    # system pool CriticalAddonsOnly=true:NoSchedule as its system node pool guide does.
    capacity = {"cpu": "6", "memory": "115496652Ki", "pods": "110"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "agentpool": pool,
                "kubernetes.azure.com/agentpool": pool,
                "node.kubernetes.io/instance-type": "Standard_NC6s_v3"
                if gpus
                else "Standard_D4s_v5",
                **({"kubernetes.azure.com/accelerator": "nvidia"} if gpus else {}),
            },
        },
        "spec": {"taints": [{"key": taint[0], "value": taint[1], "effect": "NoSchedule"}]},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def test_a_gpu_pool_tainted_sku_gpu_refuses_for_the_gpu_shortage() -> None:
    with TaintAwareApi(token=TOKEN) as api:
        api.add(
            _aks_node("aks-gpunp-12345678-vmss000000", "gpunp", 1, ("sku", "gpu")),
            _aks_node("aks-gpunp-12345678-vmss000001", "gpunp", 1, ("sku", "gpu")),
            _aks_node(
                "aks-system-87654321-vmss000000", "system", 0, ("CriticalAddonsOnly", "true")
            ),
        )
        result = k.over_quota(
            target(api), resolve=Resolver(), namespace=NS, label=LABEL, timeout=5.0
        )
        posted = [r["body"] for r in api.received("POST")]
    (scenario,) = result["scenarios"]
    assert scenario["state"] == "pending" and scenario["clean"] is True, scenario
    assert scenario["reason"] == (
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
        "available: 3 No preemption victims found for incoming pod."
    )
    # What the page shows beforehand is what was created: every NoSchedule taint tolerated,
    # the rest of the pod as before.
    assert posted == k.planned_objects(NS, LABEL, 2)
    spec = posted[0]["spec"]["template"]["spec"]
    assert spec["tolerations"] == [{"operator": "Exists", "effect": "NoSchedule"}]
    assert spec["restartPolicy"] == "Never" and spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True
    (container,) = spec["containers"]
    assert container["image"] == k.PAUSE_IMAGE
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "2"
