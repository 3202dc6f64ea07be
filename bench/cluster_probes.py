"""Cluster probes over SSH: concurrency, and memory over a long run.

Targets: 50 SSH targets on loopback with 8 at a time finish within 1.5x of one probe's time
times ceil(50/8); 500 nodes through one cluster run finish with memory flat.

The nodes are real OpenSSH servers on 127.0.0.1 (tests/sshd.py: throwaway keys, a user of their
own), several ports each. Their `nvidia-smi` here is a shell script that prints the real H200
captures, so that what is timed is the probe (connect, authenticate, run the node commands,
parse, store), not a Python start-up per fake command. Needs root and openssh-server. Run with
`make bench` or `.venv/bin/python bench/cluster_probes.py` (BENCH_TRACE=1 also lists the
largest live Python allocations at the end of the long run; BENCH_ONLY=concurrency stops after
the concurrency figures). The CPU time the whole machine spends on the probes is counted too
(run it on an otherwise quiet machine): on loopback the servers' work shares the machine's
cores with the probes', which bounds what any concurrency can reach.
"""

import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DEBUG", "false")  # no query log growing with the run
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import ROOT, django_on_throwaway_database  # noqa: E402

sys.path.append(str(ROOT / "tests"))
CAPTURES = ROOT.parent / "shared" / "fixtures" / "gpu" / "h200"
FAKE_SMI = """#!/bin/sh
D=%(dir)s
case "$*" in
  "-q -x") exec cat "$D/nvidia-smi-q-idle.xml" ;;
  "-L") echo "GPU 0: NVIDIA H200 (UUID: GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e)" ;;
  --query-gpu=*) exec cat "$D/query-gpu.csv" ;;
  nvlink*) echo "GPU 0: NVIDIA H200: Device does not have or support Nvlink"; exit 3 ;;
  *) exit 2 ;;
esac
"""
PORTS_PER_SERVER = 15  # sshd listens on at most 16 sockets
SINGLES = 9  # single probes timed, one after another (their median is "one probe")
FIFTIES = 3  # runs of the 50 (the median run is compared)


def start_servers(root: Path, count: int, key: Path) -> list[tuple[object, list[int]]]:
    """`count` sshd processes of PORTS_PER_SERVER ports each, sharing one client key."""
    import sshd

    servers = []
    for index in range(count):
        node = sshd.start_node(root / f"s{index}", key)
        smi = node.directory / "bin" / "nvidia-smi"
        smi.unlink()
        smi.write_text(FAKE_SMI % {"dir": CAPTURES})
        smi.chmod(0o755)
        ports = [node.port] + [sshd.free_port() for _ in range(PORTS_PER_SERVER - 1)]
        config = node.directory / "sshd_config"
        text = config.read_text().replace(
            f"Port {node.port}\n", "".join(f"Port {p}\n" for p in ports)
        )
        config.write_text(text + "MaxStartups 200\n")
        node.stop()
        node.process = sshd._start(node.directory, node.port)
        servers.append((node, ports))
    return servers


def rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def own_cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def machine_cpu_seconds() -> float:
    """CPU time the whole machine has spent so far, every core, every process and the kernel
    (/proc/stat: all but idle and iowait). A session's processes are not all counted in its
    sshd's children's times (what a session's shell runs is reaped elsewhere), so the probes'
    cost is read here, for the machine, which had better be otherwise quiet."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def bench_concurrency(targets: list[tuple[str, int]], host_key: str, key_text: str) -> None:
    from poc.probes.connectors import ssh

    def nodes(chosen: list[tuple[str, int]]) -> list[ssh.SshNode]:
        return [
            ssh.SshNode(
                host=h,
                port=p,
                address=h,
                username="wbprobe",
                host_key=host_key,
                private_key=key_text,
            )
            for h, p in chosen
        ]

    for result in ssh.probe_nodes(nodes(targets[:2]), concurrency=2):  # warm up
        assert not result.error, result.error
    cpu = machine_cpu_seconds()
    time.sleep(1)
    idle = machine_cpu_seconds() - cpu  # what the machine spends a second without the probes
    singles = []
    cpu = machine_cpu_seconds()
    for target in targets[:SINGLES]:
        started = time.perf_counter()
        (result,) = list(ssh.probe_nodes(nodes([target]), concurrency=1))
        singles.append(time.perf_counter() - started)
        assert not result.error, result.error
    time.sleep(0.5)  # the server's last session ends
    one_cpu = (machine_cpu_seconds() - cpu - idle * (sum(singles) + 0.5)) / SINGLES  # the mean
    one = statistics.median(singles)
    rounds = math.ceil(50 / 8)
    cores = os.cpu_count() or 1
    runs = []  # (wall, machine CPU, the probing process's CPU) of each run of the 50
    for first in range(0, 50 * FIFTIES, 50):  # each run on targets of its own
        cpu, client = machine_cpu_seconds(), own_cpu_seconds()
        started = time.perf_counter()
        results = list(ssh.probe_nodes(nodes(targets[first : first + 50]), concurrency=8))
        total = time.perf_counter() - started
        client = own_cpu_seconds() - client
        time.sleep(0.5)  # the servers end their last sessions
        runs.append((total, machine_cpu_seconds() - cpu - idle * (total + 0.5), client))
        assert len(results) == 50 and not [r for r in results if r.error]
    runs.sort()
    total, fifty_cpu, client = runs[len(runs) // 2]  # the median run
    # However the probes overlap, the 50 cannot finish before their CPU time is spent on the
    # machine's cores: that bound, against the target's one probe x rounds.
    floor = fifty_cpu / cores
    print("50 SSH targets on loopback, 8 at a time (the connector alone)")
    print(
        f"  one probe (median of {SINGLES})       {one * 1000:7.0f} ms wall, "
        f"{one_cpu * 1000:5.0f} ms CPU (the mean)"
    )
    walls = ", ".join(f"{run[0] * 1000:.0f}" for run in runs)
    print(f"  50 targets, {FIFTIES} runs            {walls} ms wall")
    wall_ms, cpu_ms = total * 1000, fifty_cpu * 1000
    print(f"  the median run                {wall_ms:7.0f} ms wall, {cpu_ms:5.0f} ms CPU")
    print(
        f"  the machine was busy          {100 * fifty_cpu / (total * cores):7.0f} % of its cores"
    )
    print(f"  of which the probing process  {client * 1000:7.0f} ms CPU (one process: one core)")
    print(f"  ratio to one probe x {rounds}      {total / (one * rounds):7.2f}   (target <= 1.5)")
    print(
        f"  CPU floor on {cores} cores        {floor * 1000:7.0f} ms = "
        f"{floor / (one * rounds):.2f} x one probe x {rounds} (the least any schedule can reach)"
    )


def bench_long_run(targets: list[tuple[str, int]], host_key: str, key_text: str) -> None:
    from django.conf import settings

    from evaluations.models import Candidate, Project, Solution
    from poc.probes.models import (
        Cluster,
        ProbeRun,
    )
    from poc.probes.services import clusters as services
    from poc.probes.services import probes as probe_services
    from poc.probes.services.clusters import executors

    settings.PROBE_CONCURRENCY = 8
    project = Project.objects.create(slug="bench-clusters", name="Bench clusters")
    candidate = Candidate.objects.create(
        project=project, solution=Solution.objects.filter(kind="product").first(), slug="k8s"
    )
    cluster = services.cluster_save(
        project=project,
        data=services.ClusterData(
            name="big",
            kind="ssh",
            candidate=candidate,
            hosts="\n".join(f"{h}:{p}" for h, p in targets),
            ssh_user="wbprobe",
        ),
        secrets={"ssh_private_key": key_text},
        actor=None,
    )
    Cluster.objects.filter(pk=cluster.pk).update(
        host_keys={f"{h}:{p}": {"key": host_key, "fingerprint": "bench"} for h, p in targets}
    )
    run = services.probe_run_start(cluster=cluster, actor=None)
    samples: list[tuple[int, float]] = []
    original = executors.store_read_node

    snapshots: list[object] = []

    def watched(run_row, collected, node):  # type: ignore[no-untyped-def]
        original(run_row, collected, node)
        if collected.position in (50, 100, 200, 300, 400, 500):
            samples.append((collected.position, rss_mb()))
        if os.environ.get("BENCH_TRACE") and collected.position in (100, 450):
            import tracemalloc

            snapshots.append(tracemalloc.take_snapshot())

    executors.store_read_node = watched
    if os.environ.get("BENCH_TRACE"):
        import tracemalloc

        tracemalloc.start()
    before = rss_mb()
    started = time.perf_counter()
    try:
        services.probe_run_execute(run_id=run.pk)
    finally:
        executors.store_read_node = original
    elapsed = time.perf_counter() - started
    if os.environ.get("BENCH_TRACE"):
        import tracemalloc

        for stat in tracemalloc.take_snapshot().statistics("lineno")[:8]:
            print("  ", stat)
        if len(snapshots) == 2:
            print("  live allocations that grew from node 100 to node 450:")
            for diff in snapshots[1].compare_to(snapshots[0], "lineno")[:8]:  # type: ignore[attr-defined]
                print("  ", diff)
    run = ProbeRun.objects.get(pk=run.pk)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"one cluster run over {len(targets)} SSH nodes, 8 at a time, stored node by node")
    print(f"  status {run.status}, {run.node_count} nodes, {run.gpu_count} GPUs, {elapsed:.1f} s")
    print(
        f"  RSS before {before:.0f} MB; "
        + ", ".join(f"after {n}: {mb:.0f} MB" for n, mb in samples)
    )
    print(f"  peak RSS {peak:.0f} MB")
    del probe_services


def main() -> None:
    if os.geteuid() != 0 or not (shutil.which("sshd") or Path("/usr/sbin/sshd").exists()):
        # `make bench` runs every benchmark: say why this one cannot run here, and go on.
        print("skipped: needs root (it adds a user) and openssh-server (apt-get install)")
        return
    import logging

    import sshd

    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="wb-bench-ssh-"))
    root.chmod(0o755)
    key = root / "client_ed25519"
    sshd.keygen(key)
    servers = start_servers(root, math.ceil(500 / PORTS_PER_SERVER), key)
    try:
        host_key = servers[0][0].host_key  # type: ignore[attr-defined]
        # One host key for every server: copy the first one's (the pins name it per port).
        for node, _ports in servers[1:]:
            node.stop()  # type: ignore[attr-defined]
            for name in ("host_ed25519", "host_ed25519.pub"):
                shutil.copy(servers[0][0].directory / name, node.directory / name)  # type: ignore[attr-defined]
            node.process = sshd._start(node.directory, node.port)  # type: ignore[attr-defined]
        targets = [("127.0.0.1", port) for _node, ports in servers for port in ports]
        key_text = key.read_text()
        bench_concurrency(targets, host_key, key_text)
        if os.environ.get("BENCH_ONLY") == "concurrency":
            return
        teardown = django_on_throwaway_database()
        try:
            from django.core.management import call_command

            call_command("seed_catalog", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
            bench_long_run(targets[:500], host_key, key_text)
        finally:
            teardown()
    finally:
        for node, _ports in servers:
            node.stop()  # type: ignore[attr-defined]
        subprocess.run(["rm", "-rf", str(root)], check=False)


if __name__ == "__main__":
    main()
