"""The Slurm connector against a real single-node Slurm 22.05 (tests/slurm_rig.py: munged,
slurmctld, slurmd with eight declared H200 GPUs, slurmrestd with JWT), and its parsers against
recorded outputs (shared/fixtures/slurm/, see its README) and against lines built from the
format Slurm documents for `scontrol show node -o` / `show partition -o` (said where so)."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from poc.probes.connectors.slurm import (
    CLI_COMMANDS,
    SCONTROL_NODES_COMMAND,
    SINFO_COMMAND,
    ConnectorError,
    SlurmRestTarget,
    facts_from_cli,
    over_quota_command,
    over_quota_rest,
    oversized_request,
    parse_gres,
    parse_over_quota_output,
    parse_scontrol_nodes,
    parse_scontrol_partitions,
    parse_sinfo_nodes,
    probe_slurm_rest,
)
from tests.slurm_rig import GPU_COUNT, SlurmRig, missing_binaries, slurm_rig

FIXTURES = (
    Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "slurm"
)  # beside the checkout
REFUSAL = "Requested node configuration is not available"
GPU_FIELDS = ("gres", "gres_used", "gpus_total", "gpus_used", "state", "partitions", "cpus")


@pytest.fixture(scope="module")
def rig() -> Iterator[SlurmRig]:
    missing = missing_binaries()
    if missing:
        pytest.skip(
            f"Slurm not installed ({', '.join(missing)}): apt-get install slurm-wlm slurmrestd"
        )
    with slurm_rig() as running:
        yield running


class Guard:
    """A resolve() that records its calls and sends every name to loopback."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> str:
        self.calls.append((host, port))
        return "127.0.0.1"


def target(rig: SlurmRig, token: str | None = None) -> SlurmRestTarget:
    # A name that does not resolve: only the guard can make it reach the rig.
    url = f"http://slurm.invalid:{rig.rest_port}"
    return SlurmRestTarget(url=url, user=rig.job_user, token=token or rig.token(), timeout=10)


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)


def job_state(rig: SlurmRig, job_id: int) -> tuple[str, str]:
    done = rig.run(["squeue", "-h", "-j", str(job_id), "-o", "%T|%r"])
    state, _, reason = done.stdout.strip().partition("|")
    return state, reason


def submit(rig: SlurmRig, *args: str) -> int:
    done = rig.run(
        ["sbatch", "--parsable", "--chdir=/tmp", "--output=/dev/null", *args], user=rig.job_user
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().split(";")[0])


def cli_outputs(rig: SlurmRig) -> dict[str, str]:
    """CLI_COMMANDS run through a shell as the ordinary user, as over SSH."""
    outputs = {}
    for command in CLI_COMMANDS:
        done = rig.shell(command, user=rig.job_user)
        assert done.returncode == 0, (command, done.stderr)
        outputs[command] = done.stdout
    return outputs


# --- the real cluster -------------------------------------------------------------------


def test_probe_reads_declared_gpus_node_and_partition(rig: SlurmRig) -> None:
    guard = Guard()
    token = rig.token()
    facts = probe_slurm_rest(target(rig, token), resolve=guard)
    assert guard.calls == [("slurm.invalid", rig.rest_port)]
    assert facts["format"] == "workbench-slurm-facts/1"
    assert facts["api_version"] == "v0.0.38"  # the newest 22.05 serves
    assert facts["slurm_version"].startswith("22.05")
    assert facts["controllers"] and facts["controllers"][0]["state"] == "UP"
    assert facts["could_not_check"] == []
    [node] = facts["nodes"]
    assert node["name"] == "localhost"
    assert node["gres"] == [{"name": "gpu", "type": "h200", "count": 8, "indexes": None}]
    assert (node["gpus_total"], node["gpus_used"]) == (GPU_COUNT, 0)
    assert node["state"] == "idle" and node["state_flags"] == []
    assert node["partitions"] == ["gpu"]
    assert node["real_memory_mb"] and node["cpus"]
    [partition] = facts["partitions"]
    assert partition["name"] == "gpu" and partition["default"] is True
    assert partition["state"] == "UP" and partition["nodes"] == "localhost"
    [gpu_node] = facts["gpu_nodes"]
    assert gpu_node["host"] == "localhost"
    assert gpu_node["sources"] == ["slurmrestd: GET /slurm/v0.0.38/nodes"]
    assert [g["name"] for g in gpu_node["gpus"]] == ["h200"] * GPU_COUNT
    assert all(g["memory_total_mib"] is None and g["index"] is None for g in gpu_node["gpus"])
    names = {r["name"]: r["status"] for r in facts["raw"]}
    assert names["GET /slurm/v0.0.38/nodes"] == 200
    text = json.dumps(facts)  # plain JSON, and the token is nowhere in it
    assert token not in text


def test_running_job_shows_as_gres_used_and_pending_reason(rig: SlurmRig) -> None:
    running = submit(rig, "--gres=gpu:h200:2", "--wrap", "sleep 30")
    waiting = None
    try:
        wait_for("the 2-GPU job to run", lambda: job_state(rig, running)[0] == "RUNNING")
        # Eight more cannot fit beside the two in use: it waits for Resources.
        waiting = submit(rig, "--gres=gpu:h200:8", "--wrap", "true")
        wait_for("a pending reason", lambda: job_state(rig, waiting)[1] == "Resources")
        facts = probe_slurm_rest(target(rig), resolve=Guard())
        [node] = facts["nodes"]
        assert node["gres_used"] == [{"name": "gpu", "type": "h200", "count": 2, "indexes": "0-1"}]
        assert (node["gpus_total"], node["gpus_used"]) == (8, 2)
        assert node["state"] in ("mixed", "allocated")
        assert facts["jobs_pending_reasons"] == {"Resources": 1}
        # The same cluster read through its commands, as an SSH connector would.
        cli = facts_from_cli(cli_outputs(rig))
        [cli_node] = cli["nodes"]
        assert {k: cli_node[k] for k in GPU_FIELDS} == {k: node[k] for k in GPU_FIELDS}
        assert cli["jobs_pending_reasons"] == {"Resources": 1}
        [sinfo_node] = parse_sinfo_nodes(rig.shell(SINFO_COMMAND).stdout)
        assert (sinfo_node["gpus_used"], sinfo_node["gres_used"][0]["indexes"]) == (2, "0-1")
    finally:
        rig.run(["scancel", str(running)] + ([str(waiting)] if waiting else []))
    wait_for("the jobs to end", lambda: not rig.run(["squeue", "-h"]).stdout.strip())


def test_cli_facts_of_the_rig_match_the_rest_facts(rig: SlurmRig) -> None:
    reason = "bad GPU Xid=79 | reseat"  # "=" and "|" inside free text
    rig.run(["scontrol", "update", "nodename=localhost", "state=drain", f"reason={reason}"])
    try:
        rest = probe_slurm_rest(target(rig), resolve=Guard())
        cli = facts_from_cli(cli_outputs(rig))
    finally:
        rig.run(["scontrol", "update", "nodename=localhost", "state=resume"])
    [rest_node], [cli_node] = rest["nodes"], cli["nodes"]
    assert rest_node["reason"] == cli_node["reason"] == reason
    assert "DRAIN" in rest_node["state_flags"] and "DRAIN" in cli_node["state_flags"]
    for key in (*GPU_FIELDS, "real_memory_mb", "name"):
        assert cli_node[key] == rest_node[key], key
    assert cli["api_version"] is None and cli["slurm_version"] == rest["slurm_version"]
    assert cli["partitions"][0] | {"gpus_total": None} == rest["partitions"][0] | {
        "gpus_total": None
    }
    assert cli["gpu_nodes"][0]["sources"] == ["scontrol"]
    assert len(cli["gpu_nodes"][0]["gpus"]) == GPU_COUNT
    assert cli["could_not_check"] == []


def test_over_quota_is_refused_at_submit(rig: SlurmRig) -> None:
    explicit = over_quota_rest(target(rig), resolve=Guard(), gpus=GPU_COUNT + 1)
    sized = over_quota_rest(target(rig), resolve=Guard())  # one more than the largest node
    for result in (explicit, sized):
        assert result["scenario"] == "more_gpus_than_any_node"
        assert (result["state"], result["clean"], result["job_id"]) == ("refused", True, None)
        assert result["reason"] == REFUSAL
        assert 0 < result["seconds"] < 10
    submits = [r for r in sized["raw"] if r["name"].startswith("POST")]
    assert json.loads(submits[0]["text"])["errors"][0]["error"] == REFUSAL
    assert (explicit["gpus_requested"], sized["gpus_requested"]) == (9, 9)  # the node has 8
    assert not rig.run(["squeue", "-h", "-t", "PD,R"]).stdout.strip()


def test_over_quota_command_is_refused_when_run_as_a_user(rig: SlurmRig) -> None:
    line = over_quota_command(GPU_COUNT + 1)
    assert line.startswith("sbatch ") and "--gres=gpu:9" in line and "--test-only" not in line
    started = time.monotonic()
    done = rig.shell(line, user=rig.job_user)
    result = parse_over_quota_output(
        done.returncode, done.stdout, done.stderr, seconds=time.monotonic() - started, command=line
    )
    assert done.returncode != 0
    assert (result["state"], result["clean"], result["reason"]) == ("refused", True, REFUSAL)
    assert result["gpus_requested"] == 9 and result["raw"][0]["status"] == done.returncode


def test_a_request_that_fits_is_reported_and_cancelled(rig: SlurmRig) -> None:
    # Against a cluster whose nodes are big enough the "failure" is accepted: it must be undone.
    result = over_quota_rest(target(rig), resolve=Guard(), gpus=1)
    assert result["state"] in ("accepted", "pending") and result["clean"] is False
    assert isinstance(result["job_id"], int)
    # Cancelled at once; `true` finishing first would be the one other clean ending.
    assert result["cancelled"] is True or "ended before" in result["note"], result["note"]
    state, _ = job_state(rig, result["job_id"])
    assert state in ("", "CANCELLED", "COMPLETED", "COMPLETING")
    done = rig.shell(over_quota_command(1), user=rig.job_user)
    via_ssh = parse_over_quota_output(done.returncode, done.stdout, done.stderr)
    assert via_ssh["state"] == "accepted" and via_ssh["clean"] is False
    assert rig.shell(via_ssh["cancel_command"], user=rig.job_user).returncode == 0


def test_a_rejected_token_is_a_readable_error_without_the_token(rig: SlurmRig) -> None:
    good = rig.token()
    forged = good[:-6] + ("AAAAAA" if not good.endswith("AAAAAA") else "BBBBBB")
    with pytest.raises(ConnectorError) as refused:
        probe_slurm_rest(target(rig, forged), resolve=Guard())
    message = str(refused.value)
    # slurmrestd 22.05 turns slurmctld's refusal into a 500 "Unspecified error" on every path.
    assert "HTTP 500" in message and "token" in message
    assert forged not in message and good not in message
    with pytest.raises(ConnectorError) as unauthorised:
        probe_slurm_rest(
            SlurmRestTarget(url=rig.rest_url, user=rig.job_user, token="", timeout=5),
            resolve=Guard(),
        )
    assert "HTTP 401" in str(unauthorised.value)


def test_a_refused_token_leaves_over_quota_in_error_not_refused(rig: SlurmRig) -> None:
    result = over_quota_rest(target(rig, "x" * 40), resolve=Guard(), gpus=9)
    assert result["state"] == "error" and result["clean"] is False
    assert "x" * 40 not in json.dumps(result)


# --- servers that are not slurmrestd ----------------------------------------------------


@contextlib.contextmanager
def serve(
    routes: dict[str, tuple[int, str, str]], tls: ssl.SSLContext | None = None
) -> Iterator[tuple[int, list[str]]]:
    """A local HTTP server answering `routes[path]` = (status, content type, body); 404 else."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            status, ctype, body = routes.get(self.path, routes.get("*", (404, "text/plain", "no")))
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def plain_target(port: int) -> SlurmRestTarget:
    return SlurmRestTarget(
        url=f"http://slurm.invalid:{port}", user="u", token="tok-123456", timeout=5
    )


def test_an_html_answer_is_a_readable_error() -> None:
    page = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>login</body></html>"
    html = {"*": (200, "text/html; charset=utf-8", page)}
    with serve(html) as (port, _seen), pytest.raises(ConnectorError) as error:
        probe_slurm_rest(plain_target(port), resolve=Guard())
    assert str(error.value).endswith("slurmrestd answered text/html, not JSON: " + page[:80])
    assert "\n" not in str(error.value)


def test_a_refusing_guard_stops_before_any_connection() -> None:
    def refuse(host: str, port: int) -> str:
        raise ConnectorError(f"{host} resolves to a private address")

    with serve({"*": (200, "application/json", "{}")}) as (port, seen):
        for call in (probe_slurm_rest, over_quota_rest):
            with pytest.raises(ConnectorError, match="private address"):
                call(plain_target(port), resolve=refuse)
    assert seen == []


def test_https_goes_to_the_guarded_address_and_checks_the_original_name(tmp_path: Path) -> None:
    """TLS to the IP the guard returned, with SNI and certificate check for the URL's name: a
    self-signed certificate is refused (and nothing is sent in clear)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "slurm.invalid")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("slurm.invalid")]), False)
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    names: list[str | None] = []
    context.sni_callback = lambda _sock, server_name, _ctx: names.append(server_name)
    with serve({"*": (200, "application/json", "{}")}, tls=context) as (port, seen):
        https = SlurmRestTarget(url=f"https://slurm.invalid:{port}", user="u", token="tok-123456")
        with pytest.raises(ConnectorError, match="certificate not trusted") as error:
            probe_slurm_rest(https, resolve=Guard())
    assert names == ["slurm.invalid"] and seen == []
    assert "tok-123456" not in str(error.value)


def test_a_closed_port_is_a_connector_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectorError, match="could not talk to slurmrestd"):
        probe_slurm_rest(plain_target(port), resolve=Guard())


def test_recorded_v0_0_37_answers_parse_through_the_rest_path() -> None:
    """sinfo/squeue --json of Slurm 21.08 (the v0.0.37 shape slurmrestd serves), at the real
    paths of a server with no OpenAPI document: discovery walks down from the newest version."""
    ping = {"meta": {}, "errors": [], "pings": [{"hostname": "ctl", "ping": "UP"}]}
    routes = {
        "/slurm/v0.0.37/ping": (200, "application/json", json.dumps(ping)),
        "/slurm/v0.0.37/nodes": (
            200,
            "application/json",
            (FIXTURES / "sinfo-json-v0.0.37-slurm-21.08.5-nodes.json").read_text(),
        ),
        "/slurm/v0.0.37/diag": (403, "text/plain", "Forbidden"),
        "/slurm/v0.0.37/jobs": (
            200,
            "application/json",
            (FIXTURES / "squeue-json-v0.0.37-jobs.json").read_text(),
        ),
    }
    with serve(routes) as (port, seen):
        facts = probe_slurm_rest(plain_target(port), resolve=Guard())
    assert seen[:3] == ["/openapi/v3", "/openapi", "/slurm/v0.0.43/ping"]
    assert facts["api_version"] == "v0.0.37" and facts["slurm_version"] == "21.08.5"
    assert len(facts["nodes"]) == 4 and facts["gpu_nodes"] == []
    first = facts["nodes"][0]
    assert first["name"] == "cs2.example.company.com"
    assert (first["gres"], first["gpus_total"], first["gpus_used"]) == ([], 0, 0)
    assert (first["state"], first["cpus"], first["real_memory_mb"]) == ("mixed", 64, 500000)
    assert first["partitions"] == ["hw"]
    assert facts["jobs_pending_reasons"] == {"Dependency": 1}
    missing = {c["what"]: c["reason"] for c in facts["could_not_check"]}
    assert set(missing) == {"diag", "partitions"}  # recorded, not fatal, never "absent"
    assert "HTTP 403 Forbidden" in missing["diag"] and "HTTP 404" in missing["partitions"]


# --- parsers on recorded and documented text --------------------------------------------


def test_recorded_sbatch_rejection_parses_as_refused() -> None:
    text = (FIXTURES / "sbatch-gres-rejected-requested-node-config.txt").read_text()
    result = parse_over_quota_output(1, "", text)
    assert (result["state"], result["clean"], result["reason"]) == ("refused", True, REFUSAL)
    assert result["job_id"] is None


@pytest.mark.parametrize(
    ("exit_code", "stdout", "stderr", "state", "job_id"),
    [
        (0, "42\n", "", "accepted", 42),
        (0, "42;cluster\n", "", "accepted", 42),
        (0, "Submitted batch job 7\n", "", "accepted", 7),
        (
            1,
            "",
            "sbatch: error: Batch job submission failed: Invalid generic resource (gres) "
            "specification\n",
            "error",  # the form of the request was refused: the GPU count was never weighed
            None,
        ),
        (
            1,
            "",
            "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
            "(job submit limit, user's size and/or time limits)\n",
            "refused",
            None,
        ),
        (
            1,
            "",
            "srun: error: Unable to allocate resources: Requested node configuration is "
            "not available\n",
            "refused",
            None,
        ),
        (
            1,
            "",
            "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
            "(connect failure)\n",
            "error",
            None,
        ),
        (127, "", "sh: 1: sbatch: not found\n", "error", None),
    ],
)
def test_submit_outputs(
    exit_code: int, stdout: str, stderr: str, state: str, job_id: int | None
) -> None:
    result = parse_over_quota_output(exit_code, stdout, stderr)
    assert (result["state"], result["job_id"]) == (state, job_id)
    assert result["clean"] is (state == "refused")
    if state == "accepted":
        assert result["cancel_command"] == f"scancel {job_id}"


def test_over_quota_command_quotes_the_partition() -> None:
    line = over_quota_command(3, partition="gpu; rm -rf /")
    assert "'--partition=gpu; rm -rf /'" in line and "--gres=gpu:3" in line
    with pytest.raises(ValueError):
        over_quota_command(0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpu:h200:8", [("gpu", "h200", 8, None)]),
        ("gpu:8", [("gpu", None, 8, None)]),
        ("gpu:h200:8(S:0-1)", [("gpu", "h200", 8, None)]),
        ("gpu:h200:3(IDX:0-2)", [("gpu", "h200", 3, "0-2")]),
        ("gpu:h200:0(IDX:N/A)", [("gpu", "h200", 0, None)]),
        ("gpu:tesla:2,mps:200", [("gpu", "tesla", 2, None), ("mps", None, 200, None)]),
        ("gpu:a100:2(S:0,1),gpu:v100:1(S:1)", [("gpu", "a100", 2, None), ("gpu", "v100", 1, None)]),
        ("gpu:a100:2(IDX:0,2)", [("gpu", "a100", 2, "0,2")]),
        ("gres:gpu:h200:3", [("gpu", "h200", 3, None)]),  # a job's tres_per_node
        ("gres/gpu=2", [("gpu", None, 2, None)]),
        ("gpu:tesla", [("gpu", "tesla", 1, None)]),  # no count: one, as Slurm reads it
        ("gpu:h100:no_consume:4", [("gpu", "h100", 4, None)]),
        ("mps:1K", [("mps", None, 1024, None)]),
        # sinfo --json and slurmrestd print an untyped GRES with a "(null)" type.
        ("gpu:(null):4(IDX:0-3)", [("gpu", None, 4, "0-3")]),
        ("gpu:(null):4", [("gpu", None, 4, None)]),
        ("(null)", []),
        ("", []),
        (None, []),
    ],
)
def test_gres_strings(text: str | None, expected: list[tuple[Any, ...]]) -> None:
    entries = parse_gres(text)
    assert [(e["name"], e["type"], e["count"], e["indexes"]) for e in entries] == expected


# Built from the key=value layout Slurm documents for `scontrol show node -o` (one line per
# node; OS and Reason carry spaces; Reason ends with "[user@time]"), not captured from a cluster.
DOCUMENTED_NODES = (
    "NodeName=gpu01 Arch=x86_64 CoresPerSocket=32 CPUAlloc=8 CPUEfctv=64 CPUTot=64 CPULoad=3.10 "
    "AvailableFeatures=h100 ActiveFeatures=h100 Gres=gpu:h100:4(S:0-1) GresDrain=N/A "
    "GresUsed=gpu:h100:1(IDX:2) NodeAddr=10.0.0.11 NodeHostName=gpu01 Version=23.02.7 "
    "OS=Linux 5.15.0-91-generic #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023  RealMemory=515000 "
    "AllocMem=64000 FreeMem=400000 Sockets=2 Boards=1 State=MIXED ThreadsPerCore=1 TmpDisk=0 "
    "Weight=1 Owner=N/A MCS_label=N/A Partitions=gpu,debug  BootTime=2024-01-01T00:00:00 "
    "SlurmdStartTime=2024-01-01T00:01:00 LastBusyTime=2024-01-02T10:00:00 "
    "CfgTRES=cpu=64,mem=515000M,billing=64,gres/gpu=4 AllocTRES=cpu=8,mem=64000M,gres/gpu=1 "
    "CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 "
    "ExtSensorsTemp=n/s\n"
    "NodeName=gpu02 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUTot=64 CPULoad=N/A "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:h100:4 GresDrain=N/A "
    "GresUsed=gpu:h100:0(IDX:N/A) NodeAddr=10.0.0.12 NodeHostName=gpu02 RealMemory=515000 "
    "State=DOWN*+DRAIN Partitions=gpu CfgTRES=cpu=64,mem=515000M,billing=64,gres/gpu=4 "
    "AllocTRES= Reason=Not responding: Xid=79 on GPU 2 [slurm@2024-01-02T11:00:00]\n"
    "NodeName=cpu01 CPUTot=16 Gres=(null) RealMemory=64000 State=IDLE Partitions=cpu\n"
)
DOCUMENTED_PARTITIONS = (
    "PartitionName=gpu AllowGroups=ALL Default=YES QoS=N/A MaxTime=UNLIMITED Nodes=gpu[01-02] "
    "State=UP TotalCPUs=128 TotalNodes=2 TRES=cpu=128,mem=1030000M,node=2,billing=128,gres/gpu=8\n"
    "PartitionName=debug Default=NO Nodes=gpu01 State=DRAIN TotalCPUs=64 TotalNodes=1 "
    "TRES=cpu=64,mem=515000M,node=1\n"
)


def test_scontrol_nodes_in_documented_format() -> None:
    gpu01, gpu02, cpu01 = parse_scontrol_nodes(DOCUMENTED_NODES)
    assert gpu01["gres"] == [{"name": "gpu", "type": "h100", "count": 4, "indexes": None}]
    assert gpu01["gres_used"][0]["indexes"] == "2"
    assert (gpu01["gpus_total"], gpu01["gpus_used"], gpu01["cpus"]) == (4, 1, 64)
    assert (gpu01["state"], gpu01["partitions"], gpu01["reason"]) == (
        "mixed",
        ["gpu", "debug"],
        None,
    )
    assert gpu01["real_memory_mb"] == 515000
    assert gpu02["state"] == "down" and gpu02["state_flags"] == ["NOT_RESPONDING", "DRAIN"]
    assert gpu02["reason"] == "Not responding: Xid=79 on GPU 2"
    assert (gpu02["gpus_total"], gpu02["gpus_used"]) == (4, 0)
    assert (cpu01["gres"], cpu01["gpus_total"], cpu01["gpus_used"]) == ([], 0, None)
    assert parse_scontrol_nodes("No nodes in the system\n") == []


def test_scontrol_partitions_in_documented_format() -> None:
    gpu, debug = parse_scontrol_partitions(DOCUMENTED_PARTITIONS)
    assert (gpu["name"], gpu["default"], gpu["state"], gpu["nodes"]) == (
        "gpu",
        True,
        "UP",
        "gpu[01-02]",
    )
    assert (gpu["gpus_total"], gpu["total_cpus"], gpu["max_gpus_per_job"]) == (8, 128, None)
    assert (debug["default"], debug["state"], debug["gpus_total"]) == (False, "DRAIN", None)


def test_cli_facts_from_documented_output_and_missing_commands() -> None:
    # Without -d scontrol prints no GresUsed: sinfo's column fills it in.
    sinfo = "gpu01|gpu*|mixed|gpu:h100:4(S:0-1)|gpu:h100:3(IDX:0-2)|64|515000|none|\n"
    sinfo += "gpu01|debug|mixed|gpu:h100:4(S:0-1)|gpu:h100:3(IDX:0-2)|64|515000|none|\n"
    line = DOCUMENTED_NODES.splitlines()[0].replace("GresUsed=gpu:h100:1(IDX:2) ", "")
    facts = facts_from_cli({SCONTROL_NODES_COMMAND: line, SINFO_COMMAND: sinfo})
    [node] = facts["nodes"]
    assert (node["gpus_used"], node["gres_used"][0]["indexes"]) == (3, "0-2")
    assert facts["gpu_nodes"][0]["sources"] == ["scontrol/sinfo"]
    assert [p["name"] for p in facts["partitions"]] == ["gpu", "debug"]  # from sinfo
    assert facts["partitions"][0]["default"] is True
    missing = {c["what"] for c in facts["could_not_check"]}
    assert missing == {"slurm_version", "partitions", "jobs"}
    [sinfo_node] = parse_sinfo_nodes(sinfo)
    assert sinfo_node["partitions"] == ["gpu", "debug"]
    json.dumps(facts)


def test_a_site_that_demands_a_gpu_type_is_not_a_clean_refusal() -> None:
    """A job_submit plugin refuses any GPU request without a type; the verdict line says only
    "Unspecified error". The site's own message is kept, and the scenario did not run."""
    stderr = (
        "sbatch: error: You must always specify a type when requesting gpu GRES\n"
        "sbatch: error: Batch job submission failed: Unspecified error\n"
    )
    result = parse_over_quota_output(1, "", stderr)
    assert (result["state"], result["clean"]) == ("error", False)
    assert "You must always specify a type" in result["reason"]
    assert "not for the GPU count" in result["reason"]


def test_a_site_plugin_refusal_keeps_the_sites_words() -> None:
    stderr = (
        "sbatch: error: !!! slurm_job_submit ERROR: job to a gpu partition without a GPU "
        "account.\nsbatch: error: Batch job submission failed: Unspecified error\n"
    )
    result = parse_over_quota_output(1, "", stderr)
    assert result["state"] == "error" and "without a GPU account" in result["reason"]


def test_a_gres_syntax_refusal_names_the_sites_hint() -> None:
    stderr = (
        "sbatch: error: Gres format wrong, specify --gres=gpu:TYPE:NUM\n"
        "sbatch: error: Batch job submission failed: Invalid generic resource (gres) "
        "specification\n"
    )
    result = parse_over_quota_output(1, "", stderr)
    assert result["state"] == "error" and "specify --gres=gpu:TYPE:NUM" in result["reason"]


def test_the_oversized_request_names_the_gpu_type_of_the_largest_node() -> None:
    nodes = parse_scontrol_nodes(DOCUMENTED_NODES)
    assert oversized_request(nodes) == (5, "h100")
    assert over_quota_command(5, gpu_type="h100").count("--gres=gpu:h100:5") == 1
    mixed = parse_scontrol_nodes(
        "NodeName=n1 Gres=gpu:a100:2,gpu:v100:2 State=IDLE Partitions=gpu\n"
    )
    assert oversized_request(mixed) == (5, None)  # two types: ask without one
    assert oversized_request(parse_scontrol_nodes("NodeName=c1 Gres=(null) State=IDLE\n")) is None
    with pytest.raises(ValueError):
        over_quota_command(3, gpu_type="a100; reboot")


def test_gpus_in_use_from_alloctres_without_gresused() -> None:
    """`scontrol show node -o` without -d prints no GresUsed; AllocTRES still counts GPUs."""
    busy, idle = parse_scontrol_nodes(
        "NodeName=g1 Gres=gpu:l40s:4 State=MIXED Partitions=gpu "
        "CfgTRES=cpu=32,gres/gpu=4 AllocTRES=cpu=4,gres/gpu=2,gres/gpu:l40s=2\n"
        "NodeName=g2 Gres=gpu:l40s:4 State=IDLE Partitions=gpu CfgTRES=cpu=32,gres/gpu=4 "
        "AllocTRES= \n"
    )
    assert (busy["gpus_total"], busy["gpus_used"]) == (4, 2)
    assert (idle["gpus_total"], idle["gpus_used"]) == (4, 0)
