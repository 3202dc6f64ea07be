"""GPU evidence for the demo project (development only): a cluster for each candidate that runs
on one, and probe runs read from real captures (demo_captures/SOURCES.md names where each comes
from), stored through the services the browser and the API use. The clusters are not reachable
(their addresses end in .invalid): they are registered without a schedule and nothing probes
them live."""

import json
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from evaluations.models import AcceptanceAction, Candidate, Project
from poc.probes.models import Cluster, ClusterKind, ProbeBinding, ProbeRun, ProbeSource
from poc.probes.services.clusters import ClusterData, cluster_save
from poc.probes.services.documents import cluster_documents_record
from poc.probes.services.probes import (
    nodes_from_text,
    probe_binding_set,
    probe_ingest_bundle,
    probe_record,
)
from workbench.typing import JSONObject

CAPTURES = Path(__file__).resolve().parent / "demo_captures"
H200_XML = "nvidia-smi-q-idle.xml"
H200_CSV = "query-gpu.csv"
H200_BENCH = "bench.json"
L40S_CAPTURE = "linux-x86_64__nvidia-l40s__595.80.txt"
XID_79 = "dmesg-xid-79-fallen-off-bus.txt"
POOL_DOCUMENTS = (
    "node-2x-tesla-t4.yaml",
    "queue-default-get-oyaml.yaml",
    "resourcequota-gpu-exceeded-error.txt",
    "pod-failedscheduling-insufficient-gpu-event.txt",
)


@dataclass(frozen=True)
class DemoCluster:
    candidate: str
    name: str
    kind: str
    api_url: str = ""
    hosts: str = ""
    ssh_user: str = ""
    slurm_user: str = ""
    expected_gpus_per_node: int | None = None


DEMO_CLUSTERS = (
    DemoCluster(
        "k8s-gpu-operator",
        "pool-a",
        ClusterKind.KUBERNETES,
        api_url="https://pool-a.k8s.demo.invalid:6443",
        expected_gpus_per_node=1,
    ),
    DemoCluster(
        "volcano",
        "pool-a-volcano",
        ClusterKind.KUBERNETES,
        api_url="https://pool-a.k8s.demo.invalid:6443",
        expected_gpus_per_node=2,
    ),
    DemoCluster(
        "slurm",
        "batch-h200",
        ClusterKind.SLURM_REST,
        api_url="https://batch.slurm.demo.invalid:6820",
        slurm_user="svc-probe",
    ),
    DemoCluster(
        "runai",
        "runai-poc",
        ClusterKind.SSH,
        hosts="runai-poc-01.demo.invalid",
        ssh_user="probe",
        expected_gpus_per_node=1,
    ),
)


def capture(name: str) -> str:
    """The text of one demo capture."""
    return (CAPTURES / name).read_text(encoding="utf-8")


def capture_bytes(name: str) -> bytes:
    return (CAPTURES / name).read_bytes()


def _bench() -> JSONObject:
    """The H200's PyTorch figures as the push agent reports them."""
    raw = json.loads(capture(H200_BENCH))
    return {
        "gpu_index": 0,
        "device_name": raw["device"],
        "framework": f"torch {raw['torch']}",
        "matmul_tflops": {
            "bf16": raw["matmul_bfloat16_tflops"],
            "fp16": raw["matmul_float16_tflops"],
            "tf32": raw["matmul_tf32_tflops"],
        },
        "matmul_size": 8192,
        "device_copy_tbps": raw["d2d_GBps_rw"] / 1000,
        "host_to_device_gbps": raw["h2d_GBps"],
        "device_to_host_gbps": raw["d2h_GBps"],
    }


def _bundle(host: str, outputs: list[tuple[str, str]], benchmarks: list[JSONObject]) -> JSONObject:
    """What the push agent posts after running these commands on `host`."""
    return {
        "format": "workbench-probe-bundle/1",
        "agent": {"version": "1.0.0", "python": "3.12"},
        "host": host,
        "collected_at": "2026-11-29T10:00:00Z",
        "expected_gpus": 1,
        "outputs": [
            {"name": name, "exit_code": 0, "stdout": text, "stderr": "", "duration_s": 0.4}
            for name, text in outputs
        ],
        "benchmarks": list(benchmarks),
    }


@transaction.atomic
def demo_clusters(project: Project, actor: User | None) -> dict[str, Cluster]:
    """Register the demo clusters that are missing (by name); all of them, by candidate slug."""
    candidates = {c.slug: c for c in Candidate.objects.filter(project=project)}
    held = {c.name: c for c in Cluster.objects.filter(project=project)}
    clusters: dict[str, Cluster] = {}
    for demo in DEMO_CLUSTERS:
        candidate = candidates.get(demo.candidate)
        if candidate is None:
            continue
        cluster = held.get(demo.name)
        if cluster is None:
            data = ClusterData(
                name=demo.name,
                kind=demo.kind,
                candidate=candidate,
                hosts=demo.hosts,
                ssh_user=demo.ssh_user,
                api_url=demo.api_url,
                slurm_user=demo.slurm_user,
                expected_gpus_per_node=demo.expected_gpus_per_node,
            )
            cluster = cluster_save(project=project, data=data, secrets={}, actor=actor)
        clusters[demo.candidate] = cluster
    return clusters


@transaction.atomic
def demo_bindings(project: Project, actor: User | None) -> None:
    """Fit two template checks to the PoC hardware, as the GPU probes page lets a person do:
    each PoC node holds one GPU, and the pool does not share GPUs through MIG in this phase
    (that action is decided by people). Actions bound by hand already are left alone."""
    actions = {
        a.key: a
        for a in AcceptanceAction.objects.filter(
            project=project, key__in=("gpu-probe-count", "gpu-probe-mig-layout")
        )
    }
    bound = set(ProbeBinding.objects.filter(project=project).values_list("action__key", flat=True))
    if "gpu-probe-count" in actions and "gpu-probe-count" not in bound:
        probe_binding_set(
            action=actions["gpu-probe-count"],
            check="gpu_count_at_least",
            params={"count": 1},
            actor=actor,
        )
    if "gpu-probe-mig-layout" in actions and "gpu-probe-mig-layout" not in bound:
        probe_binding_set(action=actions["gpu-probe-mig-layout"], check="", params={}, actor=actor)


@transaction.atomic
def demo_probes(project: Project, people: dict[str, User]) -> int:
    """Store the demo probe runs of each candidate that has none yet; how many were stored.

    One PoC node with an H200 went from candidate to candidate: the push agent's bundle under
    Kubernetes with the GPU Operator (with benchmarks), and under Slurm (whose kernel log holds
    an Xid 79); Volcano's pool is known from the cluster documents its admins uploaded (T4
    nodes on an older driver, and two controlled failures); Run:ai's node, an L40S, from
    nvidia-smi output uploaded in the browser."""
    platform, ops = people.get("platform"), people.get("ops")
    clusters = demo_clusters(project, platform)
    demo_bindings(project, platform)
    probed = set(ProbeRun.objects.filter(project=project).values_list("candidate_id", flat=True))
    candidates = {
        c.slug: c for c in Candidate.objects.filter(project=project) if c.pk not in probed
    }
    stored = 0
    if (candidate := candidates.get("k8s-gpu-operator")) is not None:
        outputs = [
            ("nvidia-smi -q -x", capture(H200_XML)),
            ("nvidia-smi --query-gpu=... --format=csv", capture(H200_CSV)),
        ]
        probe_ingest_bundle(
            project=project,
            candidate=candidate,
            bundle=_bundle("poc-h200-01", outputs, [_bench()]),
            actor=platform,
        )
        stored += 1
    if (candidate := candidates.get("volcano")) is not None:
        cluster_documents_record(
            project=project,
            candidate=candidate,
            cluster=clusters.get("volcano"),
            documents=[(name, capture_bytes(name)) for name in POOL_DOCUMENTS],
            actor=ops,
        )
        stored += 1
    if (candidate := candidates.get("slurm")) is not None:
        outputs = [
            ("nvidia-smi -q -x", capture(H200_XML)),
            ("dmesg -T | grep -i xid", capture(XID_79)),
        ]
        probe_ingest_bundle(
            project=project,
            candidate=candidate,
            bundle=_bundle("poc-h200-01", outputs, []),
            actor=ops,
        )
        stored += 1
    if (candidate := candidates.get("runai")) is not None:
        nodes = nodes_from_text(
            capture_bytes(L40S_CAPTURE), name=L40S_CAPTURE, host="runai-poc-01", expected_gpus=1
        )
        probe_record(
            project=project,
            candidate=candidate,
            source=ProbeSource.UPLOAD,
            nodes=nodes,
            actor=platform,
        )
        stored += 1
    return stored
