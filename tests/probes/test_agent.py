"""workbench-probe, run as the single standard-library file a GPU node gets.

The node is a folder on PATH holding the fake nvidia-smi (replaying the H200 captures in
shared/fixtures/gpu/h200), a fake dmesg and whatever a test adds; PyTorch, CuPy and pynvml are
made unimportable so that the outcome does not depend on what this machine has installed.
"""

import ast
import contextlib
import ctypes
import glob
import http.server
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
AGENT = REPO / "poc" / "probes" / "node" / "agent.py"
FAKE_SMI = REPO / "tests" / "fakes" / "nvidia-smi"
FIXTURES = REPO.parent / "shared" / "fixtures" / "gpu"
H200 = FIXTURES / "h200"
XID_LOG = FIXTURES / "logs" / "dmesg-xid-79-fallen-off-bus.txt"
XID_LINE = (
    "NVRM: Xid (PCI:0000:ca:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
)
H200_UUID = "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"


def _load_agent() -> Any:
    spec = importlib.util.spec_from_file_location("workbench_probe", AGENT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


agent = _load_agent()
QUERY_NAME = "nvidia-smi --query-gpu=" + ",".join(agent.QUERY_FIELDS) + " --format=csv"


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def node(tmp_path: Path) -> SimpleNamespace:
    """A GPU node as PATH sees it, and the environment to run the agent in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").symlink_to(FAKE_SMI)
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    _script(
        bin_dir / "dmesg",
        "#!/usr/bin/env python3\n"
        'print("[    0.000000] Linux version 6.18.44 (builder@host)")\n'
        f"for line in open({str(XID_LOG)!r}):\n"
        '    print("[ 8123.456789] " + line.rstrip("\\n"))\n'
        'print("[ 8200.000000] usb 1-1: new high-speed USB device")\n',
    )
    blockers = tmp_path / "blocked"
    for name in ("torch", "cupy", "pynvml"):
        (blockers / name).mkdir(parents=True)
        (blockers / name / "__init__.py").write_text(f"raise ImportError('{name} is blocked')\n")
    env = {
        "PATH": str(bin_dir),
        "FAKE_NVIDIA_SMI_DIR": str(H200),
        "PYTHONPATH": str(blockers),
        "LANG": "C.UTF-8",
    }
    return SimpleNamespace(bin=bin_dir, env=env, tmp=tmp_path)


def probe(
    node: SimpleNamespace, *args: str, python: str = sys.executable, **env: str
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, str(AGENT), *args],
        env={**node.env, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )


def by_name(bundle: dict) -> dict[str, dict]:
    return {output["name"]: output for output in bundle["outputs"]}


# --- collecting -------------------------------------------------------------------------------


def test_bundle_holds_each_command_and_what_it_printed(node: SimpleNamespace) -> None:
    out = node.tmp / "bundle.json"
    done = probe(node, "--output", str(out), "--expected-gpus", "8", "--candidate", "volcano")
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_text())
    assert bundle["format"] == "workbench-probe-bundle/1"
    assert bundle["agent"] == {"version": "1.1.0", "python": sys.version.split()[0]}
    assert bundle["host"] == socket.gethostname()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", bundle["collected_at"])
    assert re.fullmatch(r"[0-9a-f]{32}", bundle["collection_id"])
    assert bundle["expected_gpus"] == 8 and bundle["candidate"] == "volcano"
    assert bundle["benchmarks"] == [] and "nvml" not in bundle
    outputs = by_name(bundle)
    assert list(outputs) == [
        "nvidia-smi -q -x",
        QUERY_NAME,
        "nvidia-smi -L",
        "nvidia-smi nvlink -s",
        "nvidia-smi nvlink -e",
        "dmesg",
    ]
    xml = outputs["nvidia-smi -q -x"]
    assert xml["command"] == ["nvidia-smi", "-q", "-x"]
    assert xml["stdout"] == (H200 / "nvidia-smi-q-idle.xml").read_text()
    assert (xml["exit_code"], xml["stderr"], xml["error"]) == (0, "", None)
    assert 0 <= xml["duration_s"] < 30
    assert outputs["nvidia-smi -L"]["stdout"] == f"GPU 0: NVIDIA H200 (UUID: {H200_UUID})\n"
    # The CSV answers every field asked for: the capture's values, [N/A] for what it lacks.
    query = outputs[QUERY_NAME]
    header, row = query["stdout"].splitlines()
    titles = [re.sub(r" \[.*\]$", "", title) for title in header.split(", ")]
    assert titles == list(agent.QUERY_FIELDS) and query["exit_code"] == 0
    values = dict(zip(titles, row.split(", "), strict=True))
    assert values["name"] == "NVIDIA H200" and values["uuid"] == H200_UUID
    assert values["memory.total"] == "143771 MiB" and values["clocks.current.sm"] == "1980 MHz"
    assert values["remapped_rows.pending"] == "[N/A]"
    # No NVLink on this GPU: the failure is recorded and the probe goes on.
    nvlink = outputs["nvidia-smi nvlink -s"]
    assert nvlink["exit_code"] == 3 and "Device does not have or support Nvlink" in nvlink["stdout"]
    assert "nvidia-smi nvlink -s: exit status 3 (recorded)" in done.stderr
    # Only the Xid lines of the kernel log are kept.
    kernel = outputs["dmesg"]
    assert kernel["stdout"] == f"[ 8123.456789] {XID_LINE}\n"
    assert kernel["exit_code"] == 0 and kernel["note"] == agent.KERNEL_LOG_NOTE


def test_two_collections_in_one_second_are_two_requests(
    node: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Same second, same outputs (a fast node prints the same thing twice): only the collection
    # id tells the two apart, so the second post is a new run, not a replay of the first.
    monkeypatch.setattr(agent, "utc_now", lambda: "2026-12-01T10:00:00Z")
    monkeypatch.setenv("PATH", node.env["PATH"])
    args = agent.build_parser().parse_args(["--output", "-", "--no-nvml"])
    first, second = agent.build_bundle(args), agent.build_bundle(args)
    second["outputs"] = first["outputs"]
    assert first["collection_id"] != second["collection_id"]
    target = "https://workbench.example.com/api/v1/projects/alpha/probes/?candidate=volcano"
    keys = [agent.idempotency_key(target, agent.encode(b)) for b in (first, second, first)]
    assert keys[0] != keys[1] and keys[0] == keys[2]


def test_output_dash_prints_the_bundle(node: SimpleNamespace) -> None:
    done = probe(node, "--output", "-")
    assert done.returncode == 0, done.stderr
    bundle = json.loads(done.stdout)
    assert bundle["expected_gpus"] is None and "candidate" not in bundle
    assert by_name(bundle)["nvidia-smi -q -x"]["exit_code"] == 0


def test_a_hanging_nvidia_smi_is_cut_and_recorded(node: SimpleNamespace) -> None:
    out = node.tmp / "bundle.json"
    started = time.monotonic()
    done = probe(node, "--output", str(out), "--timeout", "1", FAKE_NVIDIA_SMI_HANG="1")
    assert time.monotonic() - started < 60
    assert done.returncode == 3, done.stderr
    outputs = by_name(json.loads(out.read_text()))
    for name, output in outputs.items():
        if name.startswith("nvidia-smi"):
            assert output["exit_code"] is None and output["error"] == "timed out after 1 s"
            assert output["duration_s"] < 10
    assert outputs["dmesg"]["exit_code"] == 0  # the rest carried on


def test_a_failing_driver_gives_exit_3_and_a_bundle_that_says_why(node: SimpleNamespace) -> None:
    out = node.tmp / "bundle.json"
    done = probe(node, "--output", str(out), FAKE_NVIDIA_SMI_FAIL="1")
    assert done.returncode == 3
    assert "nvidia-smi is missing or failed" in done.stderr
    outputs = by_name(json.loads(out.read_text()))
    smi = [o for name, o in outputs.items() if name.startswith("nvidia-smi")]
    assert len(smi) == 5
    for output in smi:
        assert output["exit_code"] == 9
        assert "couldn't communicate with the NVIDIA driver" in output["stdout"]


def test_a_missing_nvidia_smi_is_recorded_as_not_found(node: SimpleNamespace) -> None:
    out = node.tmp / "bundle.json"
    absent = str(node.tmp / "nowhere" / "nvidia-smi")
    done = probe(node, "--output", str(out), "--nvidia-smi", absent)
    assert done.returncode == 3
    xml = by_name(json.loads(out.read_text()))["nvidia-smi -q -x"]
    assert xml["command"] == [absent, "-q", "-x"]
    assert (xml["exit_code"], xml["error"]) == (None, "not found")


def test_query_fields_follow_what_an_older_driver_knows(node: SimpleNamespace) -> None:
    done = probe(
        node,
        "--output",
        "-",
        FAKE_NVIDIA_SMI_INVALID_FIELDS="clocks_event_reasons.,fabric.,pcie.link.gen.gpumax",
    )
    assert done.returncode == 0, done.stderr
    [query] = [o for o in json.loads(done.stdout)["outputs"] if "--query-gpu" in o["name"]]
    assert query["exit_code"] == 0
    fields = query["command"][1].split("=", 1)[1].split(",")
    assert "clocks_throttle_reasons.hw_slowdown" in fields
    assert not [f for f in fields if f.startswith(("clocks_event_reasons.", "fabric."))]
    assert query["note"] == (
        "this driver names the clock event reasons clocks_throttle_reasons.*; fields this "
        "driver does not know were left out: pcie.link.gen.gpumax, fabric.state, fabric.status"
    )


def test_dcgm_runs_only_when_asked(node: SimpleNamespace) -> None:
    _script(node.bin / "dcgmi", '#!/bin/sh\necho "{\\"args\\": \\"$*\\"}"\n')
    without = json.loads(probe(node, "--output", "-").stdout)
    assert not [o for o in without["outputs"] if o["name"].startswith("dcgmi")]
    done = probe(node, "--output", "-", "--dcgm", "2")
    dcgm = by_name(json.loads(done.stdout))["dcgmi diag -r 2 -j"]
    assert dcgm["exit_code"] == 0 and json.loads(dcgm["stdout"]) == {"args": "diag -r 2 -j"}
    (node.bin / "dcgmi").unlink()
    missing = by_name(json.loads(probe(node, "--output", "-", "--dcgm", "1").stdout))
    assert missing["dcgmi diag -r 1 -j"]["error"] == "not found"


def test_an_unreadable_kernel_log_is_recorded_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _script(
        tmp_path / "dmesg",
        "#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n",
    )
    _script(
        tmp_path / "journalctl",
        "#!/bin/sh\necho '-- No entries --'\n"
        "echo 'Hint: You are currently not seeing messages from other users and the system.' >&2\n",
    )
    monkeypatch.setenv("PATH", str(tmp_path))
    dmesg, journal = agent.kernel_log(timeout=30)
    assert (dmesg["name"], dmesg["exit_code"], dmesg["error"]) == ("dmesg", 1, "permission denied")
    assert journal["command"][:2] == ["journalctl", "-k"]
    assert journal["error"] == "permission denied" and journal["stdout"] == ""


def test_commands_get_neither_the_token_nor_unlimited_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WORKBENCH_TOKEN", "secret")
    seen = agent.run_command(
        [sys.executable, "-c", "import os; print(os.environ.get('WORKBENCH_TOKEN'))"], 30
    )
    assert seen["stdout"] == "None\n"
    big = agent.run_command([sys.executable, "-c", "print('x' * 5000)"], 30, limit=1000)
    assert big["stdout"] == "x" * 1000 and big["exit_code"] == 0
    assert big["error"] == "stdout truncated to 1000 of 5001 bytes"


# --- benchmark --------------------------------------------------------------------------------


def test_benchmark_without_torch_or_cupy_records_why(node: SimpleNamespace) -> None:
    done = probe(node, "--output", "-", "--benchmark")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["benchmarks"] == [
        {"error": "no PyTorch or CuPy with CUDA on this node"}
    ]
    only = probe(node, "--benchmark-only", "--gpus", "0")
    assert only.returncode == 3
    assert json.loads(only.stdout)["benchmarks"] == [{"error": agent.NO_FRAMEWORK}]


def test_benchmark_maths() -> None:
    # The H200 reference: 8192^3 in bf16 at 778.6 TFLOP/s is 1.412 ms a product.
    seconds = 2 * 8192**3 / 778.6203869978742e12
    assert agent.tflops(8192, seconds) == pytest.approx(778.62, abs=0.01)
    assert agent.tflops(1000, 1.0) == pytest.approx(0.002)
    assert agent.median([3.0, 1.0, 2.0]) == 2.0
    assert agent.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(ValueError):
        agent.median([])
    # 1 GiB copied device to device counts 2 GiB (read + written); host copies count 1 GiB.
    assert agent.rate(2 * 2**30, 2 * 2**30 / 4188.28e9, 1e12) == pytest.approx(4.188, abs=1e-3)
    assert agent.rate(2**30, 0.02, 1e9) == pytest.approx(53.687, abs=1e-3)


class StandIn:
    """Just enough of torch's CUDA API for the benchmark code, on a clock that only the
    measured operations advance: what the agent reports can be checked exactly."""

    __version__ = "2.11.0+standin"
    bfloat16, float16, float32, uint8 = "bf16", "fp16", "fp32", "u8"
    MATMUL_MS = {"bf16": 1.0, "fp16": 2.0, "fp32": 40.0, "fp32+tf32": 4.0}
    COPY_MS = {"d2d": 0.5, "h2d": 20.0, "d2h": 25.0, "unpinned": 500.0}

    def __init__(self, broken: tuple[int, ...] = ()) -> None:
        self.clock = 0.0
        self.calls: list[Any] = []
        self.broken = broken
        self.backends = SimpleNamespace(
            cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False))
        )
        self.cuda = SimpleNamespace(
            is_available=lambda: True,
            device_count=lambda: 2,
            get_device_name=self._name,
            device=lambda index: contextlib.nullcontext(),
            Event=self._event,
            synchronize=lambda device=None: self.calls.append("synchronize"),
            empty_cache=lambda: self.calls.append("empty_cache"),
        )

    def _name(self, index: int) -> str:
        if index in self.broken:
            raise RuntimeError("CUDA error: unspecified launch failure")
        return "NVIDIA H200"

    def _event(self, enable_timing: bool = False) -> Any:
        assert enable_timing
        clock = self

        class Event:
            def record(self) -> None:
                self.at = clock.clock

            def elapsed_time(self, end: "Event") -> float:
                return end.at - self.at

        return Event()

    def device(self, kind: str, index: int) -> tuple[str, int]:
        return (kind, index)

    def randn(self, shape: tuple[int, int], *, device: Any, dtype: str) -> "Tensor":
        return Tensor(self, dtype, device)

    def empty(self, shape: Any, *, dtype: str, device: Any = None, pin_memory: bool = False):
        return Tensor(self, dtype, device, pin_memory)

    def empty_like(self, tensor: "Tensor") -> "Tensor":
        return Tensor(self, tensor.dtype, tensor.device)

    def matmul(self, a: "Tensor", b: "Tensor", *, out: "Tensor") -> "Tensor":
        tf32 = self.backends.cuda.matmul.allow_tf32
        kind = a.dtype + ("+tf32" if a.dtype == "fp32" and tf32 else "")
        self.calls.append(("matmul", kind))
        self.clock += self.MATMUL_MS[kind]
        return out


class Tensor:
    def __init__(self, torch: StandIn, dtype: str, device: Any, pinned: bool = False) -> None:
        self.torch, self.dtype, self.device, self.pinned = torch, dtype, device, pinned

    def copy_(self, src: "Tensor", non_blocking: bool = False) -> "Tensor":
        if self.device is not None and src.device is not None:
            kind = "d2d"
        else:
            host = src if src.device is None else self
            fast = host.pinned and non_blocking
            kind = ("h2d" if src.device is None else "d2h") if fast else "unpinned"
        self.torch.calls.append(("copy", kind))
        self.torch.clock += self.torch.COPY_MS[kind]
        return self


def test_benchmark_measures_each_gpu_the_way_the_reference_was_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch = StandIn(broken=(1,))
    torch.backends.cuda.matmul.allow_tf32 = None  # whatever it was, it is put back
    monkeypatch.setattr(agent, "_load_torch", lambda: torch)
    first, second = agent.run_benchmarks(None, 8192)
    assert first == {
        "gpu_index": 0,
        "device_name": "NVIDIA H200",
        "framework": "torch 2.11.0+standin",
        "matmul_tflops": {
            "bf16": round(agent.tflops(8192, 0.001), 1),
            "fp16": round(agent.tflops(8192, 0.002), 1),
            "tf32": round(agent.tflops(8192, 0.004), 1),  # TF32 was on for float32
        },
        "matmul_size": 8192,
        "device_copy_tbps": round(2 * 2**30 / 0.0005 / 1e12, 3),
        "host_to_device_gbps": round(2**30 / 0.020 / 1e9, 1),  # pinned, asynchronous
        "device_to_host_gbps": round(2**30 / 0.025 / 1e9, 1),
    }
    assert second == {
        "gpu_index": 1,
        "error": "RuntimeError: CUDA error: unspecified launch failure",
    }
    assert torch.backends.cuda.matmul.allow_tf32 is None
    # 3 warm-ups and 10 timed runs of each, and memory handed back after each test.
    assert torch.calls.count(("matmul", "bf16")) == 13
    assert torch.calls.count(("copy", "h2d")) == 13 and torch.calls.count(("copy", "d2h")) == 13
    assert torch.calls.count("empty_cache") == 5
    assert agent.run_benchmarks([1], 64) == [second]


def test_time_op_keeps_set_up_and_warm_ups_out_of_the_timed_runs() -> None:
    clock = {"now": 0.0, "runs": 0}

    class Event:
        def record(self) -> None:
            self.at = clock["now"]

        def elapsed_time(self, end: "Event") -> float:
            return end.at - self.at

    def op() -> None:
        clock["runs"] += 1
        clock["now"] += 100.0 if clock["runs"] <= 3 else 1.0 + clock["runs"] % 2

    times = agent.time_op(op, Event, lambda: None)
    assert clock["runs"] == 13 and len(times) == 10
    assert agent.median(times) == pytest.approx(0.0015)  # ms -> s; the slow warm-ups left out


def test_nvml_values_are_read_when_pynvml_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    class NVMLError(Exception):
        pass

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong)]

    def not_supported(*args: Any) -> None:
        raise NVMLError("Not Supported")

    pynvml = SimpleNamespace(
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlSystemGetDriverVersion=lambda: b"580.159.04",
        nvmlSystemGetNVMLVersion=lambda: "13.580.159.04",
        nvmlSystemGetCudaDriverVersion=lambda: 13000,
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda index: f"handle-{index}",
        nvmlDeviceGetName=lambda handle: "NVIDIA H200",
        nvmlDeviceGetMemoryInfo=lambda handle: Memory(150754820096, 150109880320),
        nvmlDeviceGetRemappedRows=lambda handle: (0, 0, 0, 0),
        nvmlDeviceGetNvLinkState=not_supported,
    )
    monkeypatch.setitem(sys.modules, "pynvml", pynvml)
    nvml = agent.read_nvml(timeout=30)
    assert (nvml["driver"], nvml["cuda_driver"], nvml["count"]) == ("580.159.04", 13000, 1)
    [gpu] = nvml["gpus"]
    assert gpu["name"] == "NVIDIA H200" and gpu["remapped_rows"] == [0, 0, 0, 0]
    assert gpu["memory"] == {"total": 150754820096, "free": 150109880320}
    assert gpu["nvlink0"] == {"error": "NVMLError: Not Supported"}
    assert gpu["uuid"] == {"error": "nvmlDeviceGetUUID is not in this pynvml"}


# --- posting ----------------------------------------------------------------------------------


@contextlib.contextmanager
def workbench(answers: list[tuple[int, dict, Any]]) -> Iterator[tuple[str, list[dict]]]:
    """A local server that records each request and gives the next answer (the last repeats)."""
    requests: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            requests.append(
                {"path": self.path, "headers": dict(self.headers), "body": body, "at": time.time()}
            )
            status, headers, payload = answers[min(len(requests), len(answers)) - 1]
            data = json.dumps(payload).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", requests
    finally:
        server.shutdown()
        server.server_close()


STORED = {
    "run": {
        "id": 12,
        "url": "https://workbench.example.com/projects/alpha/probes/12/",
        "status": "done",
        "gpus": 1,
        "verdict": "healthy",
    },
    "results": {"stored": 5},
}
TOKEN = "wbt_0123456789abcdef"


def test_post_retries_with_one_idempotency_key_and_the_token(node: SimpleNamespace) -> None:
    out = node.tmp / "bundle.json"
    answers = [(503, {}, {"detail": "busy"}), (429, {"Retry-After": "1"}, {}), (201, {}, STORED)]
    with workbench(answers) as (url, requests):
        done = probe(
            node,
            *("--url", url, "--project", "alpha", "--candidate", "volcano"),
            *("--output", str(out), "--backoff", "0.05", "--expected-gpus", "1"),
            WORKBENCH_TOKEN=TOKEN,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "workbench-probe: stored probe run 12 (verdict healthy, 1 GPUs, status done): "
        "https://workbench.example.com/projects/alpha/probes/12/\n"
    )
    assert "HTTP 503, retrying" in done.stderr and "HTTP 429, retrying in 1 s" in done.stderr
    assert TOKEN not in done.stdout + done.stderr
    assert len(requests) == 3 and requests[2]["at"] - requests[1]["at"] >= 0.9  # Retry-After
    keys = {r["headers"]["Idempotency-Key"] for r in requests}
    target = f"{url}/api/v1/projects/alpha/probes/?candidate=volcano"
    assert keys == {agent.idempotency_key(target, out.read_bytes())}
    for request in requests:
        assert request["path"] == "/api/v1/projects/alpha/probes/?candidate=volcano"
        assert request["headers"]["Authorization"] == f"Bearer {TOKEN}"
        assert request["headers"]["Content-Type"] == "application/json"
        assert request["body"] == out.read_bytes()
    bundle = json.loads(requests[0]["body"])
    assert bundle["candidate"] == "volcano" and bundle["expected_gpus"] == 1


def test_a_refusal_is_final_and_its_detail_printed(node: SimpleNamespace) -> None:
    answers = [(400, {}, {"detail": "No candidate 'volcano'\nin project alpha."})]
    with workbench(answers) as (url, requests):
        done = probe(
            node,
            *("--url", url, "--project", "alpha", "--candidate", "volcano"),
            WORKBENCH_TOKEN=TOKEN,
        )
    assert done.returncode == 1 and len(requests) == 1
    assert done.stderr.splitlines()[-1] == (
        "workbench-probe: not delivered: HTTP 400: No candidate 'volcano' in project alpha."
    )
    assert done.stdout == ""


def test_url_without_token_is_a_usage_error_before_collecting(node: SimpleNamespace) -> None:
    started = time.monotonic()
    done = probe(
        node,
        *("--url", "http://127.0.0.1:9", "--project", "alpha", "--candidate", "volcano"),
        FAKE_NVIDIA_SMI_HANG="1",  # collecting would take minutes
    )
    assert time.monotonic() - started < 30
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "WORKBENCH_TOKEN is not set" in done.stderr


def test_usage(node: SimpleNamespace) -> None:
    helped = probe(node, "--help")
    assert helped.returncode == 0 and "examples:" in helped.stdout
    assert probe(node, "--version").stdout == "workbench-probe 1.1.0\n"
    nowhere = probe(node)
    assert nowhere.returncode == 2 and "--output" in nowhere.stderr
    assert probe(node, "--url", "https://x.example", "--project", "p").returncode == 2
    assert probe(node, "--output", "-", "--gpus", "a,b").returncode == 2


# --- the file itself --------------------------------------------------------------------------


def _interpreters() -> dict[tuple[int, int], str]:
    """Python interpreters 3.8 or newer on this machine, by version (pyenv's and PATH's)."""
    candidates = []
    pyenv = shutil.which("pyenv")
    if pyenv:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        candidates += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python")))
    candidates += [shutil.which(f"python3.{minor}") for minor in range(8, 20)]
    found: dict[tuple[int, int], str] = {}
    for candidate in filter(None, candidates):
        try:
            answer = subprocess.run(
                [candidate, "-c", "import sys; print(*sys.version_info[:2], sys.executable)"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        words = answer.stdout.split()
        if answer.returncode == 0 and len(words) == 3:
            version = (int(words[0]), int(words[1]))
            if version >= (3, 8):
                found.setdefault(version, words[2])
    return found


def test_the_agent_is_python_3_8_standard_library_only(node: SimpleNamespace) -> None:
    source = AGENT.read_text()
    tree = ast.parse(source, feature_version=(3, 8))
    imported = {
        alias.name.split(".")[0]
        for stmt in ast.walk(tree)
        if isinstance(stmt, ast.Import)
        for alias in stmt.names
    } | {
        stmt.module.split(".")[0]
        for stmt in ast.walk(tree)
        if isinstance(stmt, ast.ImportFrom) and stmt.module
    }
    optional = {"torch", "cupy", "cupyx", "pynvml"}  # imported only where present
    assert imported - optional <= sys.stdlib_module_names
    # Run it on the oldest interpreter there is: 3.8 where one is installed.
    interpreters = _interpreters()
    oldest = min(interpreters) if interpreters else sys.version_info[:2]
    python = interpreters.get(oldest, sys.executable)
    out = node.tmp / "bundle.json"
    done = probe(node, "--output", str(out), "--benchmark", python=python)
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_text())
    assert bundle["agent"]["python"].startswith("{}.{}.".format(*oldest))
    assert by_name(bundle)["nvidia-smi -q -x"]["exit_code"] == 0


def test_the_fake_nvidia_smi_answers_like_the_real_one(node: SimpleNamespace) -> None:
    def smi(*args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(node.bin / "nvidia-smi"), *args],
            env={**node.env, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )

    csv = smi("--query-gpu=index,clocks.sm,power.draw,fan.speed", "--format=csv,noheader,nounits")
    assert (csv.returncode, csv.stdout) == (0, "0, 1980, 133.27, [N/A]\n")
    header = smi("--query-gpu=name,clocks.sm", "--format=csv").stdout.splitlines()[0]
    assert header == "name, clocks.current.sm [MHz]"
    assert smi("--version").stdout.startswith("NVIDIA-SMI version  : 580.159.04\n")
    assert "GPU0" in smi("topo", "-m").stdout
    assert smi("-q").stdout == (H200 / "nvidia-smi-q-idle.txt").read_text()
    assert smi("nvlink", "-e").returncode == 3
    bogus = smi("--bogus")
    assert bogus.returncode == 2 and "Invalid combination of input arguments" in bogus.stdout
    failed = smi("-L", FAKE_NVIDIA_SMI_FAIL="1")
    assert failed.returncode == 9 and failed.stdout.startswith("NVIDIA-SMI has failed")


def test_pip_install_gives_a_workbench_probe_command(node: SimpleNamespace) -> None:
    """`pip install .` declares the agent as a console script; the installed command (the
    editable install of this checkout) collects a node like the single file does."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "workbench-probe"]
    assert script.value == "poc.probes.node.agent:main"
    command = Path(sys.executable).parent / "workbench-probe"
    out = node.tmp / "bundle.json"
    done = subprocess.run(
        [str(command), "--output", str(out)],
        env={**node.env, "PYTHONPATH": f"{node.env['PYTHONPATH']}:{REPO}"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert by_name(json.loads(out.read_text()))["nvidia-smi -q -x"]["exit_code"] == 0


def test_the_kernel_log_keeps_xid_sxid_and_failed_initialisation_lines_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = [
        "[  100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has"
        " fallen off the bus.",
        "[  812.250000] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 30 LTSSM"
        " Fault Up",
        "[   20.125000] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1463)",
    ]
    others = ["[    0.000000] Linux version 6.8.0", "[   21.000000] usb 1-1: new device"]
    lines = [others[0], kept[0], kept[1], others[1], kept[2]]
    _script(tmp_path / "dmesg", "#!/bin/sh\nprintf '%s\\n' " + " ".join(f'"{x}"' for x in lines))
    monkeypatch.setenv("PATH", str(tmp_path))
    (dmesg,) = agent.kernel_log(timeout=30)
    assert dmesg["exit_code"] == 0
    assert dmesg["stdout"] == "".join(f"{line}\n" for line in kept)
    assert dmesg["note"] == agent.KERNEL_LOG_NOTE
