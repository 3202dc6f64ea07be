#!/usr/bin/env python3
# ruff: noqa: T201  (a command-line tool: printing is its output)
"""workbench-probe: collect a GPU node's evidence for the GPU Selection Workbench.

Runs on the GPU node itself, which the workbench cannot reach: it reads what nvidia-smi, the
kernel log and (when asked) DCGM and a short benchmark say about the node, and either writes one
JSON bundle to upload later through the browser, or POSTs it to the workbench, or both. One
file, standard library only, Python 3.8 or newer: copy it to the node and run it.

    python3 workbench-probe.py --expected-gpus 8 --output node17.json
    export WORKBENCH_TOKEN=...        # a project API token; never given on the command line
    python3 workbench-probe.py --expected-gpus 8 --benchmark \\
        --url https://workbench.example.com --project demo --candidate volcano
    python3 workbench-probe.py --benchmark-only --gpus 0,1

What it runs (COMMANDS, in this order), each command with a time limit (--timeout, 60 s by
default); a command that is missing, fails or times out is recorded with its error and the
probe carries on:

    nvidia-smi -q -x
    nvidia-smi --query-gpu=<QUERY_FIELDS> --format=csv
        drivers before 535 call clocks_event_reasons.* clocks_throttle_reasons.*: when the tool
        answers 'Field "..." is not a valid field to query.' the other name set is tried, and any
        other field the driver does not know is left out and named in the output's "note"
    nvidia-smi -L
    nvidia-smi nvlink -s, nvidia-smi nvlink -e    (fail on GPUs without NVLink: recorded)
    dmesg, or journalctl -k -b when dmesg cannot be read: only lines containing "NVRM: Xid",
        "SXid (" or "RmInitAdapter failed" are kept; "permission denied" is recorded as that
        output's error
    dcgmi diag -r LEVEL -j                        only with --dcgm LEVEL
    NVML through pynvml (nvidia-ml-py) when it is importable: a few values per GPU under "nvml"

--benchmark adds per-GPU figures measured with PyTorch (else CuPy) on CUDA: dense matmul TFLOP/s
(bf16, fp16, tf32; CuPy: fp16, fp32) of --matmul-size square matrices, FLOPs = 2 n^3, 3 warm-ups
then the median of 10 runs each timed with CUDA events; device-to-device copy of 1 GiB in TB/s
counting bytes read + written; pinned host-to-device and device-to-host copies of 1 GiB in GB/s.
Without either framework the bundle says so in "benchmarks" instead.

The bundle (format workbench-probe-bundle/1):

    {"format": "workbench-probe-bundle/1",
     "agent": {"version": "1.1.0", "python": "3.8.18"},
     "host": "gpu-node-17", "collected_at": "2026-11-29T22:26:46Z",
     "expected_gpus": 8,                       # or null
     "candidate": "volcano",                   # only when --candidate is given
     "outputs": [{"name": "nvidia-smi -q -x", "command": ["nvidia-smi", "-q", "-x"],
                  "exit_code": 0, "stdout": "...", "stderr": "", "duration_s": 0.41,
                  "error": null,               # "not found", "timed out after 60 s", ...
                  "note": "..."}],             # only where the output was filtered or adapted
     "nvml": {...},                            # only when pynvml is importable
     "benchmarks": []}                         # filled by --benchmark

"name" is the command line with the tool's own name (whatever --nvidia-smi says); "command" is
what was run. A command that could not start has exit_code null. Captured stdout is limited to
32 MiB per command (stderr 1 MiB): past that it is cut and "error" says so.

With --url, the bundle is POSTed as JSON to {URL}/api/v1/projects/{PROJECT}/probes/?candidate=
{CANDIDATE} with the token of the WORKBENCH_TOKEN environment variable and an Idempotency-Key
derived from the bundle and its target, so a retried or repeated post is stored once.
Connection errors, 429 (honouring Retry-After) and 5xx answers are retried with exponential
backoff; other answers are final. --ca-file trusts a private CA; certificate checks cannot be
turned off.

Exit status:
    0  collected, and written / delivered
    1  the workbench refused the bundle, or it could not be delivered or written
    2  usage error (WORKBENCH_TOKEN missing with --url included)
    3  nvidia-smi is missing or none of its commands succeeded (with --benchmark-only: nothing
       could be measured); the bundle is still written and sent, as evidence of the failure
"""

from __future__ import annotations

import argparse
import contextlib
import email.utils
import hashlib
import http.client
import json
import os
import platform
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

VERSION = "1.1.0"
BUNDLE_FORMAT = "workbench-probe-bundle/1"
PROG = "workbench-probe"
TOKEN_ENV = "WORKBENCH_TOKEN"

EXIT_OK, EXIT_UNDELIVERED, EXIT_USAGE, EXIT_NO_GPU_TOOL = 0, 1, 2, 3

STDOUT_LIMIT = 32 * 1024 * 1024
STDERR_LIMIT = 1024 * 1024

# Health and identity values read through --query-gpu. Names are the tool's canonical ones (the
# CSV header repeats them); the clock event reasons come last and are renamed on old drivers.
QUERY_FIELDS = (
    "index",
    "uuid",
    "name",
    "serial",
    "pci.bus_id",
    "pci.device_id",
    "driver_version",
    "memory.total",
    "memory.used",
    "compute_cap",
    "persistence_mode",
    "mig.mode.current",
    "mig.mode.pending",
    "ecc.mode.current",
    "ecc.mode.pending",
    "ecc.errors.corrected.volatile.total",
    "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.corrected.aggregate.total",
    "ecc.errors.uncorrected.aggregate.total",
    "retired_pages.single_bit_ecc.count",
    "retired_pages.double_bit.count",
    "retired_pages.pending",
    "remapped_rows.correctable",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.gen.gpumax",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "power.draw",
    "power.limit",
    "temperature.gpu",
    "clocks.current.sm",
    "clocks.max.sm",
    "utilization.gpu",
    "fabric.state",
    "fabric.status",
    "clocks_event_reasons.active",
    "clocks_event_reasons.gpu_idle",
    "clocks_event_reasons.applications_clocks_setting",
    "clocks_event_reasons.sw_power_cap",
    "clocks_event_reasons.hw_slowdown",
    "clocks_event_reasons.hw_thermal_slowdown",
    "clocks_event_reasons.hw_power_brake_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown",
    "clocks_event_reasons.sync_boost",
)
REASON_PREFIXES = ("clocks_event_reasons.", "clocks_throttle_reasons.")
INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query')

# The kernel log lines kept (the rest never leaves the node): GPU Xid errors, NVSwitch SXid
# errors and GPUs the driver could not initialise.
KERNEL_LOG_MARKERS = (b"NVRM: Xid", b"SXid (", b"RmInitAdapter failed")
KERNEL_LOG_NOTE = (
    "only the lines naming an Xid, an NVSwitch SXid or a GPU the driver could not initialise "
    "(RmInitAdapter) are kept"
)
# What runs on the node, in this order: the command line (FIELDS: QUERY_FIELDS as this driver
# knows them, see QueryFields; LEVEL: the level --dcgm asks for), the format of what it prints
# (the workbench's parsers' name for it) and when it runs: "always", "kernel log" (these in
# turn until one succeeds) or "dcgm" (only with --dcgm). The workbench keeps the same list for
# its SSH probe, its upload page and its docs (poc/probes/parsers/node_commands.py), and
# tests/probes/test_node_commands.py holds the two equal: change both.
COMMANDS = (
    ("nvidia-smi -q -x", "smi-xml", "always"),
    ("nvidia-smi --query-gpu=FIELDS --format=csv", "query-csv", "always"),
    ("nvidia-smi -L", "smi-list", "always"),
    ("nvidia-smi nvlink -s", "nvlink-status", "always"),
    ("nvidia-smi nvlink -e", "nvlink-errors", "always"),
    ("dmesg", "kernel-log", "kernel log"),
    ("journalctl -k -b --no-pager -o short-iso", "kernel-log", "kernel log"),
    ("dcgmi diag -r LEVEL -j", "dcgm-json", "dcgm"),
)
KERNEL_LOG_COMMANDS = tuple(line.split() for line, _kind, when in COMMANDS if when == "kernel log")
PERMISSION_TEXT = re.compile(
    r"operation not permitted|permission denied|insufficient permissions|not seeing messages",
    re.IGNORECASE,
)
# How long `dcgmi diag` may run at each level unless --dcgm-timeout says otherwise.
DCGM_TIMEOUTS = {1: 300.0, 2: 900.0, 3: 3600.0, 4: 10800.0}

# Benchmark method (the one behind the reference figures of the H200 fixture).
WARMUPS, REPEATS = 3, 10
COPY_BYTES = 1 << 30
NO_FRAMEWORK = "no PyTorch or CuPy with CUDA on this node"

MAX_RETRY_AFTER = 600.0


def log(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


# --- running commands -------------------------------------------------------------------------


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping up to `limit` bytes of the lines `keep` accepts."""

    def __init__(
        self, stream: Any, limit: int, keep: Callable[[bytes], bool] | None = None
    ) -> None:
        super().__init__(daemon=True)
        self.stream, self.limit, self.keep = stream, limit, keep
        self.chunks: list[bytes] = []
        self.kept = 0
        self.wanted = 0  # what would have been kept without the limit
        self.start()

    def run(self) -> None:
        try:
            for line in iter(lambda: self.stream.readline(1 << 20), b""):
                if self.keep is not None and not self.keep(line):
                    continue
                self.wanted += len(line)
                room = self.limit - self.kept
                if room > 0:
                    self.chunks.append(line[:room])
                    self.kept += min(room, len(line))
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                self.stream.close()

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def _child_env() -> dict[str, str]:
    """The environment for commands: ours, less the workbench token."""
    return {k: v for k, v in os.environ.items() if k != TOKEN_ENV}


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the command and anything it started
    except (AttributeError, OSError):
        process.kill()


def run_command(
    argv: list[str],
    timeout: float,
    *,
    name: str | None = None,
    keep: Callable[[bytes], bool] | None = None,
    limit: int = STDOUT_LIMIT,
) -> dict[str, Any]:
    """Run one command (no shell) and record what happened; never raises for the command."""
    entry: dict[str, Any] = {
        "name": name or " ".join(argv),
        "command": list(argv),
        "exit_code": None,
        "stdout": "",
        "stderr": "",
        "duration_s": 0.0,
        "error": None,
    }
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_child_env(),
            start_new_session=os.name == "posix",
        )
    except FileNotFoundError:
        entry["error"] = "not found"
        return entry
    except PermissionError:
        entry["error"] = "permission denied"
        return entry
    except OSError as error:
        entry["error"] = f"could not start: {error}"
        return entry
    out = _Drain(process.stdout, limit, keep)
    err = _Drain(process.stderr, STDERR_LIMIT)
    try:
        process.wait(timeout=timeout)
        entry["exit_code"] = process.returncode
    except subprocess.TimeoutExpired:
        _kill(process)
        process.wait()
        entry["error"] = f"timed out after {timeout:g} s"
    except BaseException:
        _kill(process)
        raise
    out.join(5)
    err.join(5)
    entry["stdout"], entry["stderr"] = out.text(), err.text()
    entry["duration_s"] = round(time.monotonic() - started, 3)
    if out.wanted > out.kept and entry["error"] is None:
        entry["error"] = f"stdout truncated to {out.kept} of {out.wanted} bytes"
    return entry


def succeeded(entry: dict[str, Any]) -> bool:
    return entry["exit_code"] == 0 and entry["error"] is None


# --- what is collected ------------------------------------------------------------------------


def _swap_reason_prefix(field: str) -> str:
    for old, new in (REASON_PREFIXES, REASON_PREFIXES[::-1]):
        if field.startswith(old):
            return new + field[len(old) :]
    return field


class QueryFields:
    """The --query-gpu field list, adapted to what the node's driver knows: when the tool answers
    'Field "..." is not a valid field to query.', a clock event reason makes all of them take
    the other name (once), and any other field is left out. The agent and the workbench's SSH
    probe ask the same way: `args()` for each try, `adapt(answer)` after it, at most `tries`."""

    def __init__(self, fields: Iterable[str] = QUERY_FIELDS) -> None:
        self.fields = list(fields)
        self.tries = len(self.fields) + 2
        self.renamed = False
        self.dropped: list[str] = []

    def args(self) -> list[str]:
        line = next(line for line, kind, _when in COMMANDS if kind == "query-csv")
        return line.replace("FIELDS", ",".join(self.fields)).split()[1:]

    def adapt(self, entry: dict[str, Any]) -> bool:
        """Whether to ask again: the answer refused a field asked for, and fields are left."""
        match = INVALID_FIELD.search(entry["stdout"] + entry["stderr"])
        if entry["exit_code"] == 0 or not match or match.group(1) not in self.fields:
            return False
        invalid = match.group(1)
        if invalid.startswith(REASON_PREFIXES) and not self.renamed:
            self.fields = [_swap_reason_prefix(f) for f in self.fields]
            self.renamed = True
        else:
            self.fields.remove(invalid)
            self.dropped.append(invalid)
        return bool(self.fields)

    def dropped_note(self) -> str:
        """What the output's note says of the fields left out ("" when none was)."""
        if not self.dropped:
            return ""
        return "fields this driver does not know were left out: " + ", ".join(self.dropped)


def query_gpu(tool: list[str], timeout: float, fields: Iterable[str] = QUERY_FIELDS) -> dict:
    """`nvidia-smi --query-gpu`, adapting the field list to what this driver knows."""
    query = QueryFields(fields)
    entry: dict[str, Any] = {}
    for _attempt in range(query.tries):
        args = query.args()
        entry = run_command(tool + args, timeout, name=" ".join(["nvidia-smi", *args]))
        if not query.adapt(entry):
            break
    notes = []
    if query.renamed:
        notes.append("this driver names the clock event reasons " + _reason_prefix(query.fields))
    if query.dropped:
        notes.append(query.dropped_note())
    if notes:
        entry["note"] = "; ".join(notes)
    return entry


def _reason_prefix(fields: list[str]) -> str:
    return next((p + "*" for p in REASON_PREFIXES for f in fields if f.startswith(p)), "?")


def kernel_line_kept(line: bytes) -> bool:
    return any(marker in line for marker in KERNEL_LOG_MARKERS)


def kernel_log(timeout: float) -> list[dict[str, Any]]:
    """The kernel log's Xid, SXid and RmInitAdapter lines: dmesg, else journalctl where dmesg
    cannot be read."""
    entries = []
    for argv in KERNEL_LOG_COMMANDS:
        entry = run_command(argv, timeout, keep=kernel_line_kept)
        entry["note"] = KERNEL_LOG_NOTE
        if entry["error"] is None and PERMISSION_TEXT.search(entry["stderr"]):
            entry["error"] = "permission denied"
        entries.append(entry)
        if succeeded(entry):
            break
    return entries


def collect_outputs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The outputs of COMMANDS, in order; nvidia-smi is the one --nvidia-smi names."""
    outputs: list[dict[str, Any]] = []
    for line, kind, when in COMMANDS:
        words = line.split()
        if when == "always" and kind == "query-csv":
            outputs.append(query_gpu([args.nvidia_smi], args.timeout))
        elif when == "always":
            argv = [args.nvidia_smi, *words[1:]] if words[0] == "nvidia-smi" else words
            outputs.append(run_command(argv, args.timeout, name=line))
        elif when == "kernel log" and words == KERNEL_LOG_COMMANDS[0]:
            outputs += kernel_log(args.timeout)
        elif when == "dcgm" and args.dcgm:
            limit = args.dcgm_timeout or max(args.timeout, DCGM_TIMEOUTS[args.dcgm])
            argv = [str(args.dcgm) if word == "LEVEL" else word for word in words]
            outputs.append(run_command(argv, limit))
    for entry in outputs:
        if not succeeded(entry):
            detail = entry["error"] or f"exit status {entry['exit_code']}"
            log(f"{entry['name'][:60]}: {detail} (recorded)")
    return outputs


def nvidia_smi_worked(outputs: list[dict[str, Any]]) -> bool:
    return any(succeeded(o) for o in outputs if o["name"].startswith("nvidia-smi "))


# --- NVML (optional) --------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """NVML answers as JSON values: bytes as text, ctypes structures as dicts."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").rstrip("\x00")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    fields = getattr(value, "_fields_", None)
    if fields is not None:
        return {f[0]: _plain(getattr(value, f[0], None)) for f in fields}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _nvml_value(nvml: Any, function: str, *args: Any) -> Any:
    call = getattr(nvml, function, None)
    if call is None:
        return {"error": f"{function} is not in this pynvml"}
    try:
        return _plain(call(*args))
    except Exception as error:  # NVMLError_NotSupported and friends: recorded per value
        return {"error": f"{type(error).__name__}: {error}"}


def _nvml_gpu(nvml: Any, index: int) -> dict[str, Any]:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)

    def const(name: str, default: int) -> Any:
        return getattr(nvml, name, default)

    uncorrected = const("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
    corrected = const("NVML_MEMORY_ERROR_TYPE_CORRECTED", 0)
    volatile = const("NVML_VOLATILE_ECC", 0)
    reasons = (
        "nvmlDeviceGetCurrentClocksEventReasons"
        if hasattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons")
        else "nvmlDeviceGetCurrentClocksThrottleReasons"
    )
    gpu = {"index": index}
    for key, function, *args in (
        ("name", "nvmlDeviceGetName"),
        ("uuid", "nvmlDeviceGetUUID"),
        ("serial", "nvmlDeviceGetSerial"),
        ("pci", "nvmlDeviceGetPciInfo"),
        ("memory", "nvmlDeviceGetMemoryInfo"),
        ("cc", "nvmlDeviceGetCudaComputeCapability"),
        ("temp", "nvmlDeviceGetTemperature", const("NVML_TEMPERATURE_GPU", 0)),
        ("power_mw", "nvmlDeviceGetPowerUsage"),
        ("power_limit_mw", "nvmlDeviceGetPowerManagementLimit"),
        ("util", "nvmlDeviceGetUtilizationRates"),
        ("ecc_mode", "nvmlDeviceGetEccMode"),
        ("ecc_uncorrected_volatile", "nvmlDeviceGetTotalEccErrors", uncorrected, volatile),
        ("ecc_corrected_volatile", "nvmlDeviceGetTotalEccErrors", corrected, volatile),
        ("mig_mode", "nvmlDeviceGetMigMode"),
        ("remapped_rows", "nvmlDeviceGetRemappedRows"),
        ("clocks_sm", "nvmlDeviceGetClockInfo", const("NVML_CLOCK_SM", 1)),
        ("clocks_max_sm", "nvmlDeviceGetMaxClockInfo", const("NVML_CLOCK_SM", 1)),
        ("pcie_gen", "nvmlDeviceGetCurrPcieLinkGeneration"),
        ("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
        ("pcie_width", "nvmlDeviceGetCurrPcieLinkWidth"),
        ("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
        ("throttle", reasons),
        ("persistence", "nvmlDeviceGetPersistenceMode"),
        ("nvlink0", "nvmlDeviceGetNvLinkState", 0),
    ):
        gpu[key] = _nvml_value(nvml, function, handle, *args)
    return gpu


def _read_nvml(nvml: Any, into: dict[str, Any]) -> None:
    try:
        nvml.nvmlInit()
    except Exception as error:
        into["error"] = f"{type(error).__name__}: {error}"
        return
    try:
        into["driver"] = _nvml_value(nvml, "nvmlSystemGetDriverVersion")
        into["nvml"] = _nvml_value(nvml, "nvmlSystemGetNVMLVersion")
        into["cuda_driver"] = _nvml_value(nvml, "nvmlSystemGetCudaDriverVersion")
        count = _nvml_value(nvml, "nvmlDeviceGetCount")
        into["count"] = count
        into["gpus"] = []
        for index in range(count if isinstance(count, int) else 0):
            try:
                into["gpus"].append(_nvml_gpu(nvml, index))
            except Exception as error:
                into["gpus"].append({"index": index, "error": f"{type(error).__name__}: {error}"})
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def read_nvml(timeout: float) -> dict[str, Any] | None:
    """A light per-GPU dict through pynvml, or None where pynvml is not importable."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the old `pynvml` package warns on import
            import pynvml  # nvidia-ml-py
    except Exception:
        return None
    result: dict[str, Any] = {}
    reader = threading.Thread(target=_read_nvml, args=(pynvml, result), daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        return {"error": f"timed out after {timeout:g} s"}
    return result


# --- benchmark --------------------------------------------------------------------------------


def median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of nothing")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def tflops(n: int, seconds: float) -> float:
    """TFLOP/s of one n x n by n x n matrix product (2 n^3 floating-point operations)."""
    return 2.0 * n**3 / seconds / 1e12


def rate(nbytes: float, seconds: float, unit: float) -> float:
    """Bytes per second in `unit` (1e9: GB/s, 1e12: TB/s)."""
    return nbytes / seconds / unit


def time_op(
    op: Callable[[], Any],
    new_event: Callable[[], Any],
    synchronize: Callable[[], Any],
    warmups: int = WARMUPS,
    repeats: int = REPEATS,
) -> list[float]:
    """Seconds of each of `repeats` runs of `op`, after `warmups`, each between two events.

    Everything is set up before: only the op is enqueued between an event pair, the runs are
    queued back to back and read after one synchronization."""
    for _ in range(warmups):
        op()
    pairs = [(new_event(), new_event()) for _ in range(repeats)]
    synchronize()
    for start, end in pairs:
        start.record()
        op()
        end.record()
    synchronize()
    return [start.elapsed_time(end) / 1000.0 for start, end in pairs]


def _load_torch() -> Any:
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


def _load_cupy() -> Any:
    try:
        import cupy

        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:
        return None


# Each measurement below allocates what it needs in a function of its own, so that its buffers
# are released when it returns; the caller then hands the cached memory back to the driver.


@contextlib.contextmanager
def _tf32(torch: Any, enabled: bool) -> Iterator[None]:
    """Let float32 matrix products use TF32 (or not) for a while, then restore the setting."""
    settings = torch.backends.cuda.matmul
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # newer releases suggest another switch; this one works
        previous = settings.allow_tf32
        settings.allow_tf32 = enabled
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            settings.allow_tf32 = previous


def _torch_matmul(torch: Any, device: Any, n: int, dtype: Any, timing: Any) -> float:
    a = torch.randn((n, n), device=device, dtype=dtype)
    b = torch.randn((n, n), device=device, dtype=dtype)
    c = torch.empty((n, n), device=device, dtype=dtype)
    return tflops(n, median(time_op(lambda: torch.matmul(a, b, out=c), *timing)))


def _torch_device_copy(torch: Any, device: Any, timing: Any) -> float:
    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return rate(2 * COPY_BYTES, median(time_op(lambda: dst.copy_(src), *timing)), 1e12)


def _torch_host_copies(torch: Any, device: Any, timing: Any) -> tuple[float, float]:
    host = torch.empty(COPY_BYTES, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(COPY_BYTES, dtype=torch.uint8, device=device)
    up = median(time_op(lambda: dev.copy_(host, non_blocking=True), *timing))
    down = median(time_op(lambda: host.copy_(dev, non_blocking=True), *timing))
    return rate(COPY_BYTES, up, 1e9), rate(COPY_BYTES, down, 1e9)


def _torch_gpu(torch: Any, index: int, size: int) -> dict[str, Any]:
    device = torch.device("cuda", index)
    timing = (
        lambda: torch.cuda.Event(enable_timing=True),
        lambda: torch.cuda.synchronize(device),
    )
    result: dict[str, Any] = {
        "gpu_index": index,
        "device_name": torch.cuda.get_device_name(index),
        "framework": f"torch {torch.__version__}",
    }
    with torch.cuda.device(index):
        figures = {}
        for label, dtype, tf32 in (
            ("bf16", torch.bfloat16, False),
            ("fp16", torch.float16, False),
            ("tf32", torch.float32, True),
        ):
            try:
                with _tf32(torch, tf32):
                    figures[label] = round(_torch_matmul(torch, device, size, dtype, timing), 1)
            finally:
                torch.cuda.empty_cache()
        result["matmul_tflops"] = figures
        result["matmul_size"] = size
        try:
            result["device_copy_tbps"] = round(_torch_device_copy(torch, device, timing), 3)
        finally:
            torch.cuda.empty_cache()
        try:
            up, down = _torch_host_copies(torch, device, timing)
        finally:
            torch.cuda.empty_cache()
        result["host_to_device_gbps"] = round(up, 1)
        result["device_to_host_gbps"] = round(down, 1)
    return result


class _CupyEvent:
    def __init__(self, cupy: Any) -> None:
        self.cupy = cupy
        self.event = cupy.cuda.Event()

    def record(self) -> None:
        self.event.record()

    def elapsed_time(self, end: _CupyEvent) -> float:
        return self.cupy.cuda.get_elapsed_time(self.event, end.event)


def _cupy_matmul(cupy: Any, n: int, dtype: Any, timing: Any) -> float:
    a = cupy.random.standard_normal((n, n), dtype=cupy.float32).astype(dtype)
    b = cupy.random.standard_normal((n, n), dtype=cupy.float32).astype(dtype)
    c = cupy.empty((n, n), dtype=dtype)
    return tflops(n, median(time_op(lambda: cupy.matmul(a, b, out=c), *timing)))


def _cupy_device_copy(cupy: Any, timing: Any) -> float:
    src = cupy.empty(COPY_BYTES, dtype=cupy.uint8)
    dst = cupy.empty_like(src)

    def copy() -> None:
        dst.data.copy_from_device_async(src.data, COPY_BYTES)

    return rate(2 * COPY_BYTES, median(time_op(copy, *timing)), 1e12)


def _cupy_host_copies(cupy: Any, timing: Any) -> tuple[float, float]:
    import cupyx

    host = cupyx.empty_pinned((COPY_BYTES,), dtype=cupy.uint8)
    dev = cupy.empty(COPY_BYTES, dtype=cupy.uint8)
    pointer = host.ctypes.data
    up = median(time_op(lambda: dev.data.copy_from_host_async(pointer, COPY_BYTES), *timing))
    down = median(time_op(lambda: dev.data.copy_to_host_async(pointer, COPY_BYTES), *timing))
    return rate(COPY_BYTES, up, 1e9), rate(COPY_BYTES, down, 1e9)


def _cupy_gpu(cupy: Any, index: int, size: int) -> dict[str, Any]:
    """CuPy has no bfloat16, and picks TF32 when it is imported: fp16 and fp32 here."""
    properties = cupy.cuda.runtime.getDeviceProperties(index)
    result: dict[str, Any] = {
        "gpu_index": index,
        "device_name": _plain(properties.get("name", "")),
        "framework": f"cupy {cupy.__version__}",
    }
    pool, pinned_pool = cupy.get_default_memory_pool(), cupy.get_default_pinned_memory_pool()
    with cupy.cuda.Device(index) as device:
        timing = (lambda: _CupyEvent(cupy), device.synchronize)
        figures = {}
        for label, dtype in (("fp16", cupy.float16), ("fp32", cupy.float32)):
            try:
                figures[label] = round(_cupy_matmul(cupy, size, dtype, timing), 1)
            finally:
                pool.free_all_blocks()
        result["matmul_tflops"] = figures
        result["matmul_size"] = size
        try:
            result["device_copy_tbps"] = round(_cupy_device_copy(cupy, timing), 3)
        finally:
            pool.free_all_blocks()
        try:
            up, down = _cupy_host_copies(cupy, timing)
        finally:
            pool.free_all_blocks()
            pinned_pool.free_all_blocks()
        result["host_to_device_gbps"] = round(up, 1)
        result["device_to_host_gbps"] = round(down, 1)
    return result


def run_benchmarks(gpus: list[int] | None, size: int) -> list[dict[str, Any]]:
    """Figures for each GPU (all CUDA devices without `gpus`); failures recorded per GPU."""
    torch = _load_torch()
    if torch is not None:
        count, measure = torch.cuda.device_count, lambda i: _torch_gpu(torch, i, size)
    else:
        cupy = _load_cupy()
        if cupy is None:
            return [{"error": NO_FRAMEWORK}]
        count, measure = cupy.cuda.runtime.getDeviceCount, lambda i: _cupy_gpu(cupy, i, size)
    results = []
    for index in gpus if gpus is not None else range(count()):
        log(f"benchmarking GPU {index}")
        try:
            results.append(measure(index))
        except Exception as error:  # out of memory, a broken GPU, a bad index: evidence too
            results.append({"gpu_index": index, "error": f"{type(error).__name__}: {error}"[:500]})
    return results


# --- the bundle -------------------------------------------------------------------------------


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: UP017 (3.8)


def build_bundle(args: argparse.Namespace) -> dict[str, Any]:
    bundle: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "agent": {"version": VERSION, "python": platform.python_version()},
        "host": socket.gethostname(),
        "collected_at": utc_now(),
        # One id per collection: a retried post of this bundle is the same request, while two
        # collections in the same second are two runs.
        "collection_id": uuid.uuid4().hex,
        "expected_gpus": args.expected_gpus,
    }
    if args.candidate:
        bundle["candidate"] = args.candidate
    bundle["outputs"] = collect_outputs(args)
    if not args.no_nvml:
        nvml = read_nvml(args.timeout)
        if nvml is not None:
            bundle["nvml"] = nvml
    bundle["benchmarks"] = run_benchmarks(args.gpus, args.matmul_size) if args.benchmark else []
    return bundle


def encode(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def write_output(path: str, body: bytes) -> None:
    if path == "-":
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
        return
    partial = f"{path}.partial"
    with open(partial, "wb") as handle:
        handle.write(body)
    os.replace(partial, path)


# --- delivery ---------------------------------------------------------------------------------


class PostError(Exception):
    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered, not followed: the token goes to the URL given and nowhere else."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def probes_url(base: str, project: str, candidate: str) -> str:
    query = urllib.parse.urlencode({"candidate": candidate})
    return (
        f"{base.rstrip('/')}/api/v1/projects/{urllib.parse.quote(project, safe='')}/probes/?{query}"
    )


def idempotency_key(url: str, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (url.encode("utf-8"), body):
        digest.update(hashlib.sha256(part).digest())
    return "workbench-probe-" + digest.hexdigest()[:48]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())  # noqa: UP017 (3.8)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw.decode("utf-8", "replace")[:500]


def _one_line(text: str, limit: int = 500) -> str:
    return " ".join(str(text).split())[:limit]


def _detail(payload: Any) -> str:
    if isinstance(payload, dict) and payload.get("detail"):
        return _one_line(payload["detail"])
    if isinstance(payload, (dict, list)):
        return _one_line(json.dumps(payload))
    return _one_line(payload or "no details")


def retryable(status: int) -> bool:
    return status == 429 or 500 <= status < 600


def post(
    url: str,
    body: bytes,
    *,
    token: str,
    key: str,
    retries: int = 4,
    backoff: float = 1.0,
    timeout: float = 60.0,
    ca_file: str | None = None,
) -> tuple[int, Any]:
    """POST with retries; returns (status, parsed JSON). Raises PostError when not delivered."""
    context = ssl.create_default_context(cafile=ca_file)
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _NoRedirect)
    attempt = 0
    while True:
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Idempotency-Key": key,
                "Accept": "application/json",
                "User-Agent": f"{PROG}/{VERSION}",
            },
        )
        wait = backoff * (2**attempt)
        try:
            with opener.open(request, timeout=timeout) as response:
                return response.status, _json(response.read())
        except urllib.error.HTTPError as error:
            payload = _json(error.read())
            if 300 <= error.code < 400:
                where = error.headers.get("Location", "?")
                raise PostError(
                    f"HTTP {error.code}: redirected to {where}; give that URL to --url",
                    error.code,
                ) from None
            if not retryable(error.code) or attempt >= retries:
                raise PostError(f"HTTP {error.code}: {_detail(payload)}", error.code) from None
            asked = _retry_after(error.headers.get("Retry-After"))
            if asked is not None:
                wait = max(wait, min(asked, MAX_RETRY_AFTER))
            log(f"HTTP {error.code}, retrying in {wait:.0f} s")
        except urllib.error.URLError as error:
            if isinstance(error.reason, ssl.SSLCertVerificationError):
                raise PostError(
                    f"certificate of {url} not trusted: {error.reason}; see --ca-file"
                ) from None
            if attempt >= retries:
                raise PostError(f"cannot reach {url}: {error.reason}") from None
            log(f"{error.reason}, retrying in {wait:.0f} s")
        except (OSError, http.client.HTTPException) as error:
            if attempt >= retries:
                raise PostError(f"cannot reach {url}: {error}") from None
            log(f"{type(error).__name__}: {error}, retrying in {wait:.0f} s")
        attempt += 1
        time.sleep(wait)


def summary(status: int, result: Any) -> str:
    run = result.get("run") if isinstance(result, dict) else None
    if not isinstance(run, dict):
        return f"{PROG}: delivered (HTTP {status})"
    facts = []
    if run.get("verdict") is not None:
        facts.append(f"verdict {run['verdict']}")
    if run.get("gpus") is not None:
        facts.append(f"{run['gpus']} GPUs")
    if run.get("status") is not None:
        facts.append(f"status {run['status']}")
    line = f"{PROG}: stored probe run {run.get('id', '?')}"
    if facts:
        line += " (" + ", ".join(facts) + ")"
    if run.get("url"):
        line += f": {run['url']}"
    return line


# --- command line -----------------------------------------------------------------------------

EPILOG = f"""examples:
  %(prog)s --expected-gpus 8 --output node17.json
      collect, write the bundle for an upload through the workbench's browser page
  export {TOKEN_ENV}=...
  %(prog)s --expected-gpus 8 --benchmark --url https://workbench.example.com \\
      --project demo --candidate volcano
      collect, measure, and post the bundle to the workbench
  %(prog)s --benchmark-only --gpus 0,1
      only print the benchmark figures as JSON

The token is read from {TOKEN_ENV}, never from the command line.
exit status: 0 done, 1 refused or not delivered, 2 usage error,
  3 nvidia-smi missing or failing (the bundle is still written and sent)"""


def _gpu_list(text: str) -> list[int]:
    try:
        indices = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected GPU indices like 0,1,3") from None
    if not indices or min(indices) < 0:
        raise argparse.ArgumentTypeError("expected GPU indices like 0,1,3")
    return indices


def _positive(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be above 0: {text}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Collect a GPU node's evidence (nvidia-smi, kernel log Xid lines, DCGM, "
        "benchmarks) and write it as one JSON bundle or post it to the GPU Selection Workbench.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {VERSION}")
    collect = parser.add_argument_group("collection")
    collect.add_argument(
        "--nvidia-smi", default="nvidia-smi", metavar="PATH", help="default: from PATH"
    )
    collect.add_argument(
        "--timeout",
        type=_positive(float),
        default=60.0,
        metavar="S",
        help="limit for each command, in seconds (default 60)",
    )
    collect.add_argument(
        "--expected-gpus", type=_positive(int), metavar="N", help="GPUs this node should have"
    )
    collect.add_argument(
        "--dcgm",
        type=int,
        choices=(1, 2, 3, 4),
        metavar="LEVEL",
        help="also run `dcgmi diag -r LEVEL -j` (1-4)",
    )
    collect.add_argument(
        "--dcgm-timeout",
        type=_positive(float),
        metavar="S",
        help="limit for dcgmi (default by level: 300, 900, 3600, 10800 s)",
    )
    collect.add_argument("--no-nvml", action="store_true", help="do not read NVML via pynvml")
    bench = parser.add_argument_group("benchmark (PyTorch or CuPy with CUDA)")
    bench.add_argument("--benchmark", action="store_true", help="measure each GPU too")
    bench.add_argument(
        "--benchmark-only", action="store_true", help="only measure, and print the figures"
    )
    bench.add_argument("--gpus", type=_gpu_list, metavar="0,1", help="default: every GPU")
    bench.add_argument(
        "--matmul-size", type=_positive(int), default=8192, metavar="N", help="default 8192"
    )
    out = parser.add_argument_group("output")
    out.add_argument("--output", metavar="FILE", help="write the bundle to FILE (- for stdout)")
    out.add_argument("--url", help="the workbench, e.g. https://workbench.example.com")
    out.add_argument("--project", metavar="SLUG")
    out.add_argument("--candidate", metavar="SLUG")
    out.add_argument(
        "--retries", type=int, default=4, metavar="N", help="after the first try (default 4)"
    )
    out.add_argument(
        "--backoff", type=float, default=1.0, metavar="S", help="first wait, doubled each retry"
    )
    out.add_argument("--ca-file", metavar="PEM", help="trust this CA bundle for --url")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.benchmark_only and args.url:
        parser.error("--benchmark-only prints the figures; post them with --benchmark --url")
    if args.benchmark_only:
        figures = {
            "agent": {"version": VERSION, "python": platform.python_version()},
            "host": socket.gethostname(),
            "collected_at": utc_now(),
            "benchmarks": run_benchmarks(args.gpus, args.matmul_size),
        }
        write_output(args.output or "-", encode(figures))
        measured = any("error" not in b for b in figures["benchmarks"])
        return EXIT_OK if measured else EXIT_NO_GPU_TOOL
    if not args.output and not args.url:
        parser.error(
            "say where the bundle goes: --output FILE (or -), or --url with --project "
            "and --candidate"
        )
    token = ""
    if args.url:
        missing = [n for n in ("project", "candidate") if not getattr(args, n)]
        if missing:
            parser.error("--url needs " + " and ".join(f"--{m}" for m in missing))
        scheme = urllib.parse.urlsplit(args.url).scheme
        if scheme not in ("http", "https"):
            parser.error(f"--url must be http:// or https://, not {args.url}")
        token = os.environ.get(TOKEN_ENV, "").strip()
        if not token:
            log(f"{TOKEN_ENV} is not set: export the project's API token before using --url")
            return EXIT_USAGE
        if args.ca_file and not os.path.isfile(args.ca_file):
            log(f"--ca-file {args.ca_file}: no such file")
            return EXIT_USAGE
        host = urllib.parse.urlsplit(args.url).hostname or ""
        if scheme == "http" and host not in ("localhost", "127.0.0.1", "::1"):
            log("warning: the token travels unencrypted over http://")

    bundle = build_bundle(args)
    body = encode(bundle)
    gpu_tool_ok = nvidia_smi_worked(bundle["outputs"])
    if not gpu_tool_ok:
        log("nvidia-smi is missing or failed: the bundle records how")

    if args.output:
        try:
            write_output(args.output, body)
        except OSError as error:
            log(f"cannot write {args.output}: {error}")
            return EXIT_UNDELIVERED
    if args.url:
        url = probes_url(args.url, args.project, args.candidate)
        try:
            status, result = post(
                url,
                body,
                token=token,
                key=idempotency_key(url, body),
                retries=max(0, args.retries),
                backoff=max(0.0, args.backoff),
                ca_file=args.ca_file,
            )
        except PostError as error:
            log(f"not delivered: {error}")
            return EXIT_UNDELIVERED
        print(summary(status, result), file=sys.stderr if args.output == "-" else sys.stdout)
    return EXIT_OK if gpu_tool_ok else EXIT_NO_GPU_TOOL


if __name__ == "__main__":
    sys.exit(main())
