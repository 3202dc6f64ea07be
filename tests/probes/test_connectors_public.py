"""The Kubernetes and Slurm connectors against shapes of public recorded objects and outputs.

Each input is written here from the shape of a public capture (the docstring names the release
whose shape it reproduces); the Kubernetes ones are served by the fake API server
(tests/fakes/k8s_api.py), the Slurm ones fed to the parsers or to a local HTTP server.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from poc.probes.connectors import kubernetes as k
from poc.probes.connectors import slurm as s
from tests.fakes.k8s_api import (
    FakeKubeApi,
    cluster_policy,
    dcgm_service,
    h100_node,
    operand_daemonsets,
)

TOKEN = "eyJhbGciOiJSUzI1NiJ9.public-shapes-4c1d"
NS = "gpu-probe"
LABEL = "workbench.probe/run=public"


@pytest.fixture
def kube() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(token=TOKEN) as api:
        yield api


@pytest.fixture(autouse=True)
def _fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k.failure, "POLL_SECONDS", 0.01)


def _target(api: FakeKubeApi) -> k.KubeTarget:
    return k.KubeTarget(api_url=api.url("kube.test"), token=TOKEN, timeout=5.0)


def _loopback(host: str, port: int) -> str:
    return "127.0.0.1"


def _probe(api: FakeKubeApi) -> dict[str, Any]:
    return k.probe_kubernetes(_target(api), resolve=_loopback)


def _product(result: dict[str, Any], key: str) -> dict[str, Any]:
    return next(p for p in result["products"] if p["key"] == key)


# --- Slurm: `scontrol show node` / `show partition` in the multi-line form -------------------

# The layout `scontrol show node` prints without -o (Slurm 24.05, as pasted in public issue
# threads): a record over several indented lines, a blank line between records.
SCONTROL_NODES_MULTILINE = """\
NodeName=gpu-a01 Arch=x86_64 CoresPerSocket=1
   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=0.99
   AvailableFeatures=(null)
   ActiveFeatures=(null)
   Gres=gpu:nvidia-rtx-3090:1
   NodeAddr=gpu-a01 NodeHostName=gpu-a01 Version=24.05.0
   OS=Linux 5.10.0-153.12.0.92.x86_64 #1 SMP Wed Jun 28 23:04:48 CST 2023
   RealMemory=1 AllocMem=0 FreeMem=340 Sockets=8 Boards=1
   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=compute100
   BootTime=2024-11-18T20:46:45 SlurmdStartTime=2024-12-19T11:41:49
   LastBusyTime=2024-12-19T11:41:49 ResumeAfterTime=None
   CfgTRES=cpu=8,mem=1M,billing=8,gres/gpu=1
   AllocTRES=
   CurrentWatts=0 AveWatts=0

   Reason=gres/gpu count reported lower than configured (0 < 1) [slurm@2024-12-19T11:03:34]

NodeName=gpu-a02 Arch=x86_64 CoresPerSocket=32
   CPUAlloc=16 CPUEfctv=64 CPUTot=64 CPULoad=3.10
   Gres=gpu:a100:4(S:0-1)
   GresDrain=N/A
   GresUsed=gpu:a100:2(IDX:0-1)
   RealMemory=515000 AllocMem=64000 FreeMem=400000 Sockets=2 Boards=1
   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=gpu,debug
"""


def test_scontrol_show_node_in_the_multi_line_form() -> None:
    """`scontrol show node` without -o (Slurm 24.05 layout, GresUsed as with -d)."""
    first, second = s.parse_scontrol_nodes(SCONTROL_NODES_MULTILINE)
    assert first["name"] == "gpu-a01"
    assert (first["state"], first["state_flags"]) == ("idle", ["DRAIN"])
    assert first["reason"] == "gres/gpu count reported lower than configured (0 < 1)"
    assert first["partitions"] == ["compute100"]
    assert first["gres"] == [
        {"name": "gpu", "type": "nvidia-rtx-3090", "count": 1, "indexes": None}
    ]
    assert (first["gpus_total"], first["gpus_used"]) == (1, 0)  # from the empty AllocTRES
    assert (first["cpus"], first["real_memory_mb"]) == (8, 1)
    assert second["state"] == "mixed" and second["partitions"] == ["gpu", "debug"]
    assert (second["gpus_total"], second["gpus_used"]) == (4, 2)
    assert second["gres_used"][0]["indexes"] == "0-1"

    facts = s.facts_from_cli({s.SCONTROL_NODES_COMMAND: SCONTROL_NODES_MULTILINE})
    assert [len(doc["gpus"]) for doc in facts["gpu_nodes"]] == [1, 4]
    assert facts["gpu_nodes"][1]["gpus"][0]["name"] == "a100"


def test_scontrol_show_partition_in_the_multi_line_form() -> None:
    """`scontrol show partition` without -o (layout of Slurm 20.11 to 24.x)."""
    text = """\
PartitionName=gpu
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=YES QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=gpu-a[01-04]
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=256 TotalNodes=4 SelectTypeParameters=NONE
   JobDefaults=DefCpuPerGPU=8
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=256,mem=2000G,node=4,billing=256,gres/gpu=16

PartitionName=cpu
   Default=NO
   Nodes=cpu[01-02]
   State=DOWN TotalCPUs=128 TotalNodes=2
   TRES=cpu=128,mem=500G,node=2
"""
    gpu, cpu = s.parse_scontrol_partitions(text)
    assert (gpu["name"], gpu["state"], gpu["default"]) == ("gpu", "UP", True)
    assert (gpu["nodes"], gpu["total_cpus"], gpu["total_nodes"]) == ("gpu-a[01-04]", 256, 4)
    assert gpu["gpus_total"] == 16
    assert (cpu["name"], cpu["state"], cpu["default"], cpu["gpus_total"]) == (
        "cpu",
        "DOWN",
        False,
        None,
    )


# --- Slurm: slurmrestd of a release newer than the known API versions ------------------------


@contextlib.contextmanager
def _serve(routes: dict[str, Any]) -> Iterator[tuple[int, list[str]]]:
    """A local HTTP server answering JSON `routes[path]`; 404 for every other path."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            found = routes.get(self.path)
            data = json.dumps(found).encode() if found is not None else b"not found"
            self.send_response(200 if found is not None else 404)
            self.send_header("Content-Type", "application/json" if found else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def test_a_slurmrestd_serving_only_newer_api_versions_is_found() -> None:
    """A slurmrestd that no longer serves v0.0.43 or older and withholds its OpenAPI document
    (data_parser v0.0.45 exists in Slurm's sources); node shape of the v0.0.42 man page
    example (numbers as {"set", "infinite", "number"}, state a list)."""
    version = "v0.0.45"
    meta = {"slurm": {"release": "26.05.0", "version": {"major": "26", "minor": "05"}}}
    node = {
        "name": "host1",
        "state": ["IDLE"],
        "gres": "gpu:fake1:1(S:0),gpu:fake2:1(S:0)",
        "gres_used": "gpu:fake1:0(IDX:N/A),gpu:fake2:0(IDX:N/A)",
        "partitions": ["debug"],
        "cpus": 32,
        "real_memory": 127927,
        "reason": "",
        "free_mem": {"set": True, "infinite": False, "number": 39871},
    }
    routes = {
        f"/slurm/{version}/ping": {
            "meta": meta,
            "errors": [],
            "pings": [{"hostname": "ctl", "pinged": "UP", "latency": 314, "mode": "primary"}],
        },
        f"/slurm/{version}/nodes": {"meta": meta, "errors": [], "nodes": [node]},
    }
    target = s.SlurmRestTarget(url="http://slurm.invalid:1", user="u", token="tok-123456")
    with _serve(routes) as (port, seen):
        target.url = f"http://slurm.invalid:{port}"
        facts = s.probe_slurm_rest(target, resolve=_loopback)
    assert facts["api_version"] == version and facts["slurm_version"] == "26.05.0"
    assert facts["controllers"] == [{"host": "ctl", "state": "UP"}]
    (read,) = facts["nodes"]
    assert (read["gpus_total"], read["gpus_used"], read["state"]) == (2, 0, "idle")
    assert [g["name"] for g in facts["gpu_nodes"][0]["gpus"]] == ["fake1", "fake2"]
    assert "/slurm/v0.0.36/ping" in seen  # every known version was asked first


# --- Kubernetes: GPU Operator with a duplicate ClusterPolicy ---------------------------------


def test_a_duplicate_clusterpolicy_marked_ignored_does_not_hide_the_reconciled_one(
    kube: FakeKubeApi,
) -> None:
    """GPU Operator (v1.x to v25.x) reconciles one ClusterPolicy and sets status.state "ignored"
    on every other; the API server lists them by name, so the ignored one may come first."""
    duplicate = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "a-second-policy"},
        "spec": {},
        "status": {"state": "ignored"},
    }
    kube.add(duplicate, cluster_policy("notReady"), *operand_daemonsets(("nvidia-dcgm-exporter",)))
    result = _probe(kube)
    entry = _product(result, "kubernetes-gpu-operator")
    assert entry["present"] is True and entry["state"] == "notReady"
    assert "ClusterPolicy cluster-policy: notReady" in entry["detail"]
    assert "a-second-policy" in entry["detail"]
    assert result["gpu_operator"]["active_policy"] == "cluster-policy"
    assert result["gpu_operator"]["operands_not_ready"] == ["nvidia-dcgm-exporter"]


# --- Kubernetes: DCGM exporter 1.x metric names ----------------------------------------------


def test_dcgm_exporter_1x_lower_case_metrics_are_read(kube: FakeKubeApi) -> None:
    """dcgm-exporter 1.x (GPU Operator 1.x) wrote `dcgm_gpu_temp{gpu="0",uuid="GPU-..."}`:
    lower-case names, a lower-case uuid label, no Hostname."""
    uuid = "GPU-8f640a3c-7e9a-608d-02a3-f4372d72b323"
    text = "\n".join(
        [
            "# HELP dcgm_gpu_temp GPU temperature (in C).",
            "# TYPE dcgm_gpu_temp gauge",
            f'dcgm_gpu_temp{{gpu="0",uuid="{uuid}"}} 34',
            "# TYPE dcgm_gpu_utilization gauge",
            f'dcgm_gpu_utilization{{gpu="0",uuid="{uuid}"}} 7',
            "# TYPE dcgm_power_usage gauge",
            f'dcgm_power_usage{{gpu="0",uuid="{uuid}"}} 31.737',
            "# TYPE dcgm_fb_used gauge",
            f'dcgm_fb_used{{gpu="0",uuid="{uuid}"}} 1024',
            "",
        ]
    )
    kube.add(h100_node(), cluster_policy(), dcgm_service())
    kube.proxy("gpu-operator", "nvidia-dcgm-exporter:gpu-metrics", text)
    result = _probe(kube)
    assert result["could_not_check"] == []
    (gpu,) = result["dcgm"]["gpus"]
    assert gpu["gpu"] == 0 and gpu["uuid"] == uuid
    assert gpu["metrics"] == {
        "DCGM_FI_DEV_GPU_TEMP": 34.0,
        "DCGM_FI_DEV_GPU_UTIL": 7.0,
        "DCGM_FI_DEV_POWER_USAGE": 31.737,
        "DCGM_FI_DEV_FB_USED": 1024.0,
    }


# --- Kubernetes: the scheduler's refusal where events cannot be read ------------------------


def test_the_refusal_is_read_from_the_pod_condition_when_events_are_forbidden(
    kube: FakeKubeApi,
) -> None:
    """kube-scheduler (1.19 and later) writes its FailedScheduling message into the pod's
    PodScheduled condition (reason Unschedulable) as well as into an event; a role without
    `events` (or an event already expired) must not turn the refusal into a timeout."""
    kube.add(h100_node())
    kube.forbid(f"/api/v1/namespaces/{NS}/events")
    result = k.over_quota(_target(kube), resolve=_loopback, namespace=NS, label=LABEL, timeout=2)
    first = result["scenarios"][0]
    assert first["name"] == "more_gpus_than_any_node"
    assert first["state"] == "pending", first
    assert "Insufficient nvidia.com/gpu" in first["reason"]
    assert first["clean"] is True


# --- Slurm: the long and short spellings of node states ---------------------------------------


@pytest.mark.parametrize(
    ("raw", "base", "flags"),
    [
        ("drained", "idle", ["DRAIN"]),  # sinfo %T, slurmrestd v0.0.37's node_state_string
        ("DRAINING", "allocated", ["DRAIN"]),
        ("drain*", "idle", ["NOT_RESPONDING", "DRAIN"]),  # sinfo %t
        ("drng@", "allocated", ["REBOOT_REQUESTED", "DRAIN"]),
        ("mix", "mixed", []),
        ("alloc", "allocated", []),
    ],
)
def test_node_state_spellings(raw: str, base: str, flags: list[str]) -> None:
    """sinfo prints drained nodes as "drained"/"drain" and draining ones as "draining"/"drng"
    (Slurm 20.11 to 25.x, %T and %t), and "mix"/"alloc" in the short form; the facts document
    names the base state and the DRAIN flag whatever the spelling."""
    (node,) = s.parse_sinfo_nodes(
        f"gpu01|gpu*|{raw}|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|64|500000|none|"
    )
    assert (node["state"], node["state_flags"]) == (base, flags)
