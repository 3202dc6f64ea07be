"""Offline cluster evidence: documents an air-gapped cluster's admins paste or upload, read by the
live connectors' own functions into the same facts.

Kubernetes inputs are the recorded objects of shared/fixtures/k8s/ (and the fakes built from its
captures), dumped as kubectl writes them; the live side is the connector probing the fake API
server loaded with the very same objects. Slurm inputs are shared/fixtures/slurm/ and the
`scontrol` layout Slurm documents (tests/probes/test_slurm.py)."""

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from poc.probes.connectors import kubernetes as kube
from poc.probes.connectors import offline, slurm
from poc.probes.connectors.slurm.rest import rest_node
from tests.fakes.k8s_api import (
    FIXTURES,
    FakeKubeApi,
    cluster_policy,
    fixture,
    gpu_quota,
    h100_node,
    operand_daemonsets,
    unschedulable_podgroup,
)
from tests.probes.test_slurm import DOCUMENTED_NODES, DOCUMENTED_PARTITIONS
from tests.probes.test_slurm import FIXTURES as SLURM

TOKEN = "offline-evidence-token"
SCHEDULERS = FIXTURES / "schedulers"


def read(*documents: tuple[str, str | bytes]) -> dict[str, Any]:
    return offline.read_documents(list(documents))


def refused(*documents: tuple[str, str | bytes]) -> str:
    with pytest.raises(offline.DocumentError) as caught:
        offline.read_documents(list(documents))
    message = str(caught.value)
    assert "\n" not in message
    return message


def as_list(objects: list[dict[str, Any]]) -> str:
    """`kubectl get ... -o yaml`: a List whose items carry their kind."""
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects})


def by_key(items: list[dict[str, Any]], key: str = "key") -> dict[str, Any]:
    return {item[key]: item for item in items}


# --- Kubernetes: the live connector's facts -------------------------------------------------


@pytest.fixture(scope="module")
def cluster_objects() -> list[dict[str, Any]]:
    return [
        *fixture("node-2x-tesla-t4.yaml"),
        *fixture("node-a100-mig-mixed-7g40gb.yaml"),
        h100_node(),
        *fixture("schedulers/queue-default-get-oyaml.yaml"),
        unschedulable_podgroup(),
        *fixture("schedulers/kai-limited-queue-gpu-quota1-limit1.yaml"),
        *fixture("schedulers/dsc-v1-status-no-managed-components-PARTIAL.yaml"),
        cluster_policy("notReady"),
        *operand_daemonsets(("nvidia-device-plugin-daemonset",)),
        gpu_quota("team-a", 4, 1),
    ]


@pytest.fixture(scope="module")
def live(cluster_objects: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    with FakeKubeApi(token=TOKEN) as api:
        api.add(*copy.deepcopy(cluster_objects))
        target = kube.KubeTarget(api_url=api.url("kube.test"), token=TOKEN, timeout=5.0)
        yield kube.probe_kubernetes(target, resolve=lambda host, port: "127.0.0.1")


def test_kubernetes_documents_give_the_live_probes_facts(
    cluster_objects: list[dict[str, Any]], live: dict[str, Any]
) -> None:
    nodes = [o for o in cluster_objects if o["kind"] == "Node"]
    others = [o for o in cluster_objects if o["kind"] != "Node"]
    facts = read(
        ("nodes.yaml", as_list(nodes)),  # kubectl get nodes -o yaml
        # kubectl get ... -o json | jq '.items[]': objects one after another
        ("queues.json", "\n".join(json.dumps(o, indent=1) for o in others[:4])),
        ("rest.yaml", yaml.safe_dump_all(others[4:])),  # several documents, `---` between
    )
    assert facts["format"] == live["format"] == "workbench-k8s-facts/1"
    for key in ("nodes", "volcano", "kai", "openshift_ai", "quotas"):
        assert facts[key] == live[key], key
    strip = [{**n, "sources": []} for n in facts["gpu_nodes"]]
    assert strip == [{**n, "sources": []} for n in live["gpu_nodes"]]
    assert [len(n["gpus"]) for n in facts["gpu_nodes"]] == [2, 1, 1]
    assert facts["gpu_nodes"][0]["sources"] == ["kubernetes: Node object (nodes.yaml)"]
    operator = {k: v for k, v in facts["gpu_operator"].items() if k != "nvidia_drivers"}
    assert operator == {k: v for k, v in live["gpu_operator"].items() if k != "nvidia_drivers"}
    assert operator["operands_not_ready"] == ["nvidia-device-plugin-daemonset"]
    offline_products, live_products = by_key(facts["products"]), by_key(live["products"])
    for key in ("volcano", "kai", "openshift-ai"):
        assert offline_products[key] == live_products[key], key
    assert offline_products["kubernetes-gpu-operator"]["state"] == "notReady"
    # What no document holds could not be checked: it is never "not installed".
    assert offline_products["runai"]["present"] is None
    assert live_products["runai"]["present"] is False
    missing = {c["what"]: c["reason"] for c in facts["could_not_check"]}
    assert missing["Run:ai projects"] == "not among the uploaded documents"
    assert "server version (GET /version)" in missing
    assert "raw" in facts and [d["name"] for d in facts["raw"]] == [
        "nodes.yaml",
        "queues.json",
        "rest.yaml",
    ]


def test_the_api_servers_own_node_list_as_json_is_read(live: dict[str, Any]) -> None:
    """`kubectl get --raw /api/v1/nodes`: a NodeList whose items carry no kind."""
    items = [
        {k: v for k, v in node.items() if k not in ("kind", "apiVersion")}
        for node in fixture("node-2x-tesla-t4.yaml")
    ]
    body = json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": items})
    facts = read(("nodes.json", body))
    (t4,) = facts["nodes"]
    assert t4 == next(n for n in live["nodes"] if n["name"] == "qa-mig-worker-gpu-1")
    assert facts["documents"] == [
        {"name": "nodes.json", "kind": "Kubernetes NodeList (1 Node, JSON)"}
    ]


def test_a_node_file_as_kubectl_dumps_it_reads_its_gpus() -> None:
    facts = read(("a100.yaml", (FIXTURES / "node-a100-mig-mixed-7g40gb.yaml").read_bytes()))
    ((gpu,),) = [n["gpus"] for n in facts["gpu_nodes"]]
    assert gpu["name"] == "NVIDIA-A100-SXM4-40GB" and gpu["mig_mode_current"] is True
    assert [m["profile"] for m in gpu["mig_devices"]] == ["7g.40gb"]
    assert "controlled_failures" not in facts


# --- refusals a scheduler or the API server gave ----------------------------------------------


def test_described_pending_pods_are_the_controlled_failure() -> None:
    facts = read(
        ("kai.txt", (SCHEDULERS / "kai-pod-unschedulable-event.txt").read_text()),
        (
            "events.txt",
            (SCHEDULERS / "pod-failedscheduling-insufficient-gpu-event.txt").read_text(),
        ),
        ("quota.txt", (SCHEDULERS / "resourcequota-gpu-exceeded-error.txt").read_text()),
    )
    scenarios = facts["controlled_failures"]["scenarios"]
    assert [(s["name"], s["clean"], s["state"]) for s in scenarios] == [
        ("more_gpus_than_any_node", True, "pending"),
        ("more_gpus_than_any_node", True, "pending"),
        ("over_resource_quota", True, "refused"),
    ]
    assert scenarios[0]["reason"].startswith("No nodes with enough resources were found")
    assert scenarios[1]["reason"] == "0/6 nodes are available: 6 Insufficient nvidia.com/gpu."
    assert "exceeded quota: gpu-quota" in scenarios[2]["reason"]
    assert facts["nodes"] == [] and facts["gpu_nodes"] == []


def test_a_whole_describe_pod_with_a_cpu_refusal_is_not_clean() -> None:
    text = """\
Name:             train-7
Namespace:        team-a
Node:             <none>
Status:           Pending
Containers:
  train:
    Limits:
      nvidia.com/gpu:  9
    Requests:
      nvidia.com/gpu:  9
Conditions:
  Type           Status
  PodScheduled   False
Events:
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: 3 Insufficient cpu.
"""
    (scenario,) = read(("pod.txt", text))["controlled_failures"]["scenarios"]
    assert (scenario["clean"], scenario["gpus_requested"]) == (False, 9)
    assert scenario["reason"] == "0/3 nodes are available: 3 Insufficient cpu."
    assert "pod team-a/train-7" in scenario["note"]
    scheduled = text.replace("<none>", "gpu-node-1/10.0.0.5").replace("Pending", "Running")
    scheduled = scheduled.split("Events:")[0].replace("False", "True")
    failures = read(("pod.txt", scheduled))["controlled_failures"]
    assert failures["scenarios"] == []
    assert "was scheduled on gpu-node-1" in failures["notes"][0]


def test_a_pod_object_the_scheduler_refused_is_read_like_the_live_job() -> None:
    (pod,) = kube.planned_objects("team-a", "workbench.probe/run=7", 1, 9)[1:]
    pod["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
            }
        ],
    }
    (scenario,) = read(("pod.yaml", yaml.safe_dump(pod)))["controlled_failures"]["scenarios"]
    assert scenario["clean"] is True and scenario["gpus_requested"] == 9


# --- Slurm ----------------------------------------------------------------------------------


def test_scontrol_and_sinfo_text_give_the_ssh_connectors_facts() -> None:
    sinfo = "gpu01|gpu*|mixed|gpu:h100:4(S:0-1)|gpu:h100:3(IDX:0-2)|64|515000|none|\n"
    outputs = {
        slurm.SCONTROL_NODES_COMMAND: DOCUMENTED_NODES,
        slurm.SCONTROL_PARTITIONS_COMMAND: DOCUMENTED_PARTITIONS,
        slurm.SINFO_COMMAND: sinfo,
        slurm.VERSION_COMMAND: "slurm 23.02.7\n",
    }
    live = slurm.facts_from_cli(outputs)
    header = "NODELIST|PARTITION|STATECOMPLETE|GRES|GRESUSED|CPUS|MEMORY|REASON|\n"
    facts = read(
        # One file of both kinds of scontrol records, one of sinfo with its header row.
        ("scontrol.txt", DOCUMENTED_NODES + DOCUMENTED_PARTITIONS),
        ("sinfo.txt", header + sinfo),
        ("version.txt", "slurm 23.02.7\n"),
    )
    for key in ("format", "nodes", "partitions", "gpu_nodes", "slurm_version", "warnings"):
        assert facts[key] == live[key], key
    assert [len(n["gpus"]) for n in facts["gpu_nodes"]] == [4, 4]
    # What no document held is named as the SSH connector names a command not run.
    assert facts["could_not_check"] == [
        {
            **c,
            "reason": c["reason"].replace(" not run", " output: not among the uploaded documents"),
        }
        for c in live["could_not_check"]
    ]
    assert {c["what"] for c in facts["could_not_check"]} == {"slurm_version", "jobs"}


def test_scontrol_show_node_of_single_nodes_in_separate_files() -> None:
    first, second, third = DOCUMENTED_NODES.splitlines()
    multi_line = first.replace(" State=", "\n   State=").replace(" Partitions=", "\n   Partitions=")
    facts = read(("gpu01.txt", multi_line), ("gpu02.txt", second), ("cpu01.txt", third))
    assert [n["name"] for n in facts["nodes"]] == ["gpu01", "gpu02", "cpu01"]
    assert facts["nodes"] == slurm.parse_scontrol_nodes(DOCUMENTED_NODES)


def test_sinfo_json_of_slurm_21_is_read_as_slurmrestds_nodes() -> None:
    text = (SLURM / "sinfo-json-v0.0.37-slurm-21.08.5-nodes.json").read_text()
    data = json.loads(text)
    facts = read(("sinfo.json", text))
    assert facts["nodes"] == [rest_node(n) for n in data["nodes"]]
    assert (facts["api_version"], facts["slurm_version"]) == ("v0.0.37", "21.08.5")
    assert facts["gpu_nodes"] == []  # a CPU cluster: GRES empty
    # The same nodes declaring GPUs become GPU nodes, as live.
    for node in data["nodes"]:
        node.update(gres="gpu:h200:8(S:0-1)", gres_used="gpu:h200:2(IDX:0-1)")
    facts = read(
        ("sinfo.json", json.dumps(data)),
        ("jobs.json", (SLURM / "squeue-json-v0.0.37-jobs.json").read_text()),
    )
    assert [len(n["gpus"]) for n in facts["gpu_nodes"]] == [8, 8, 8, 8]
    assert {g["name"] for n in facts["gpu_nodes"] for g in n["gpus"]} == {"h200"}
    assert {n["gpus_used"] for n in facts["nodes"]} == {2}
    assert facts["jobs_pending_reasons"] == {"Dependency": 1}
    assert {c["what"] for c in facts["could_not_check"]} == {"partitions"}


def test_sinfo_json_of_slurm_24_and_the_default_summary() -> None:
    """The `sinfo` array of `sinfo -N --json` (Slurm 23.02 and later, as Slurm 24.11 writes it),
    and sinfo's default output, which names partitions only."""
    element = {
        "partition": {"name": "gpu", "nodes": {"configured": "g[01-02]", "total": 2}},
        "node": {"state": ["IDLE", "DRAIN"]},
        "nodes": {"nodes": ["g01"]},
        "cpus": {"minimum": 64, "maximum": 64, "total": 64},
        "memory": {"minimum": 1547680, "maximum": 1547680},
        "gres": {"total": "tmpsize:7T,gpu:l40s:4(S:0-1)", "used": "gpu:l40s:1(IDX:0)"},
        "reason": "bad GPU",
    }
    meta = {
        "plugin": {"type": "", "data_parser": "data_parser/v0.0.42"},
        "slurm": {"release": "24.11.1"},
    }
    facts = read(("sinfo.json", json.dumps({"meta": meta, "sinfo": [element], "errors": []})))
    (node,) = facts["nodes"]
    assert (node["name"], node["state"], node["state_flags"]) == ("g01", "idle", ["DRAIN"])
    assert (node["gpus_total"], node["gpus_used"], node["cpus"]) == (4, 1, 64)
    assert facts["partitions"][0]["nodes"] == "g[01-02]"
    assert facts["slurm_versions"]["client"] == "24.11.1" and facts["api_version"] == "v0.0.42"
    summary = """\
PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST
gpu*         up   infinite      1  alloc g01
gpu*         up   infinite      1   idle g02
debug        up      30:00      2   idle c[01-02]
"""
    facts = read(("sinfo.txt", summary))
    assert [
        (p["name"], p["default"], p["total_nodes"], p["nodes"]) for p in facts["partitions"]
    ] == [
        ("gpu", True, 2, "g01,g02"),
        ("debug", False, 2, "c[01-02]"),
    ]
    assert facts["nodes"] == [] and {"nodes", "jobs"} <= {
        c["what"] for c in facts["could_not_check"]
    }


def test_a_refused_sbatch_is_the_controlled_failure() -> None:
    text = (SLURM / "sbatch-gres-rejected-requested-node-config.txt").read_text()
    (scenario,) = read(("sbatch.txt", text))["controlled_failures"]["scenarios"]
    assert (scenario["scenario"], scenario["state"], scenario["clean"]) == (
        "more_gpus_than_any_node",
        "refused",
        True,
    )
    assert scenario["reason"] == "Requested node configuration is not available"
    assert scenario["gpus_requested"] == 1  # --gres=gpu:teslap100:1 on the pasted prompt


# --- what is refused, and why -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("podgroup-unschedulable-describe.txt", "describe output of a PodGroup"),
        ("queue-gpu-capability-describe.txt", "kubectl get queues -A -o yaml"),
        ("node-labels-h100-mig-single-all-disabled.json", "neither a Kubernetes object"),
        ("gpu-operator-pods-with-mig-manager.txt", "a kubectl get table, which is not read"),
        ("clusterpolicy-notready-operator-log.jsonl", "(JSON document 1): JSON that is neither"),
    ],
)
def test_captures_that_are_not_read_are_named_with_what_they_look_like(
    name: str, expected: str
) -> None:
    message = refused((name, (SCHEDULERS / name).read_bytes()))
    assert message.startswith(name) and expected in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "empty"),
        ("hello, these are my notes", "not recognised"),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n",
            "a Kubernetes Service (v1) is not read",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n",
            "ClusterQueue (kueue.x-k8s.io)",
        ),
        ("kind: List\napiVersion: v1\nitems: []\n", "no Kubernetes object"),
        ("apiVersion: v1\nkind: Node\nmetadata: [1, 2]\n", "metadata is not a mapping"),
        ("apiVersion: v1\nkind: Node\n  bad: [\n", "not valid YAML"),
        (
            '{"meta": {}, "errors": [{"error": "Invalid user"}], "nodes": []}',
            "only errors: Invalid user",
        ),
        ('{"format": "workbench-probe-bundle/1", "outputs": []}', "upload it as probe output"),
        ("NAME   STATUS   ROLES\nnode1  Ready    <none>\n", "a kubectl get table"),
        (
            "Name:               gpu-1\nRoles:              <none>\nTaints:             <none>\n"
            "Events:\n  Type    Reason    Age   From     Message\n"
            "  Normal  Starting  5m    kubelet  Starting kubelet.\n",
            "describe output of a Node, which is not read: give kubectl get nodes -o yaml",
        ),
        (
            "Name:           train\nNamespace:      team-a\nParallelism:    1\nPod Template:\n"
            "  Containers:\n   train:\n    Image:  pytorch\n",
            "kubectl describe output of an object other than a pod",
        ),
    ],
)
def test_documents_that_are_not_read(text: str, expected: str) -> None:
    assert expected in refused(("doc", text))


def test_gpu_tool_output_is_sent_to_the_node_upload() -> None:
    from tests.probes.helpers import H200, XID_79

    message = refused(("smi.xml", (H200 / "nvidia-smi-q-idle.xml").read_bytes()))
    assert "output of a node's GPU tools (smi-xml)" in message
    # The recorded Xid line as `dmesg` prints it, time stamp first: a "[" that is no JSON.
    dmesg = "[ 8121.348213] " + XID_79.read_text().splitlines()[1]
    assert "GPU tools (kernel-log)" in refused(("dmesg.txt", dmesg))


def test_alias_bombs_binary_and_mixed_platforms_are_refused() -> None:
    bomb = "kind: List\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for n in range(1, 9):
        bomb += f"{chr(97 + n)}: &{chr(97 + n)} [" + ", ".join([f"*{chr(96 + n)}"] * 10) + "]\n"
    assert "expands too far" in refused(("bomb.yaml", bomb))
    assert "binary data" in refused(("x.bin", b"\x89PNG\r\n\x1a\n\x00\x00"))
    nodes = (FIXTURES / "node-2x-tesla-t4.yaml").read_text()
    assert "a Kubernetes cluster and of a Slurm cluster" in refused(
        ("nodes.yaml", nodes), ("scontrol.txt", DOCUMENTED_NODES)
    )
    sinfo_json = (SLURM / "sinfo-json-v0.0.37-slurm-21.08.5-nodes.json").read_text()
    assert "both as command output and as JSON" in refused(
        ("scontrol.txt", DOCUMENTED_NODES), ("sinfo.json", sinfo_json)
    )
    wrong_types = {"apiVersion": "v1", "kind": "Node", "status": {"conditions": 7}}
    assert "not shaped as kubectl or Slurm writes it" in refused(
        ("n.json", json.dumps(wrong_types))
    )
