"""The push agent's bundle: what it ran on one node, as JSON (see docs/probes.md).

    {"format": "workbench-probe-bundle/1", "host": "gpu-node-07", "expected_gpus": 8,
     "outputs": [{"name": "nvidia-smi -q -x", "exit_code": 0, "stdout": "...", "stderr": ""}],
     "benchmarks": [{"gpu_index": 0, "matmul_tflops": {"bf16": 779.1}, ...}]}

This module checks the bundle's shape and returns its parts; parsing the outputs is the
caller's. A command that exited non-zero or printed nothing becomes a warning ("nvidia-smi
nvlink -s: exit 3: ...not supported"); its stdout, if any, is still read. A key of the wrong
type is refused with its path ("outputs[2].stdout must be a string"); keys this version does
not know are ignored, so newer agents can add some.

The registry's `bundle` entry (formats.py) says how a bundle is recognised; parsers.parse_bundle
reads its outputs through the registry.
"""

import math
from dataclasses import dataclass, field
from typing import Any

from poc.probes.facts import Benchmark

from .values import ParseError

FORMAT = "workbench-probe-bundle/1"
_MAX_STDERR = 300

_BENCHMARK_FLOATS = ("device_copy_tbps", "host_to_device_gbps", "device_to_host_gbps")
_BENCHMARK_TEXTS = ("device_name", "framework", "error")


@dataclass
class Bundle:
    """A checked bundle: outputs worth parsing, warnings for the others, and benchmarks."""

    host: str | None
    expected_gpus: int | None
    outputs: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    benchmarks: list[Benchmark] = field(default_factory=list)


def _optional(value: object, kind: type | tuple[type, ...], path: str, what: str) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) and kind is not bool:
        raise ParseError(f"{path} must be {what}")
    if not isinstance(value, kind):
        raise ParseError(f"{path} must be {what}")
    return value


def _number(value: object, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(f"{path} must be a number")
    try:
        number = float(value)
    except OverflowError:
        raise ParseError(f"{path} must be a finite number") from None
    if not math.isfinite(number) or number < 0:
        raise ParseError(f"{path} must be a finite number, not negative")
    return number


def _count(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParseError(f"{path} must be a whole number, not negative")
    return value


def _benchmark(raw: object, path: str) -> Benchmark:
    if not isinstance(raw, dict):
        raise ParseError(f"{path} must be an object")
    benchmark: Benchmark = {}
    if raw.get("gpu_index") is not None:
        benchmark["gpu_index"] = _count(raw["gpu_index"], f"{path}.gpu_index")
    if raw.get("matmul_size") is not None:
        benchmark["matmul_size"] = _count(raw["matmul_size"], f"{path}.matmul_size")
    for key in _BENCHMARK_TEXTS:
        value = _optional(raw.get(key), str, f"{path}.{key}", "a string")
        if value is not None:
            benchmark[key] = value[:500]  # type: ignore[literal-required]
    for key in _BENCHMARK_FLOATS:
        if raw.get(key) is not None:
            benchmark[key] = _number(raw[key], f"{path}.{key}")  # type: ignore[literal-required]
    tflops = _optional(raw.get("matmul_tflops"), dict, f"{path}.matmul_tflops", "an object")
    if tflops is not None:
        figures: dict[str, float] = {}
        for dtype, value in tflops.items():
            if (
                not isinstance(dtype, str)
                or not dtype
                or len(dtype) > 40
                or not dtype.isprintable()
            ):
                raise ParseError(f"{path}.matmul_tflops has a bad data type name")
            figures[dtype] = _number(value, f"{path}.matmul_tflops.{dtype}")
        benchmark["matmul_tflops"] = figures
    return benchmark


def read_bundle(raw: object) -> Bundle:
    """The bundle's parts; ParseError naming the first field that is wrong."""
    if not isinstance(raw, dict):
        raise ParseError("bundle must be a JSON object")
    format_ = raw.get("format")
    if not isinstance(format_, str):
        raise ParseError("format must be a string naming the bundle format")
    if format_ != FORMAT:
        raise ParseError(f"format {format_[:60]!r} is not supported (expected {FORMAT!r})")
    host = _optional(raw.get("host"), str, "host", "a string")
    _optional(raw.get("collected_at"), str, "collected_at", "a string")
    _optional(raw.get("collection_id"), str, "collection_id", "a string")
    _optional(raw.get("candidate"), str, "candidate", "a string")
    _optional(raw.get("agent"), dict, "agent", "an object")
    _optional(raw.get("nvml"), dict, "nvml", "an object")
    expected = raw.get("expected_gpus")
    if expected is not None:
        expected = _count(expected, "expected_gpus")
    host = host.strip()[:255] if host else None
    bundle = Bundle(host=host or None, expected_gpus=expected)

    outputs = raw.get("outputs")
    if not isinstance(outputs, list):
        raise ParseError("outputs must be a list")
    for position, output in enumerate(outputs):
        path = f"outputs[{position}]"
        if not isinstance(output, dict):
            raise ParseError(f"{path} must be an object")
        name = output.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ParseError(f"{path}.name must be a non-empty string")
        stdout = _optional(output.get("stdout"), str, f"{path}.stdout", "a string") or ""
        stderr = _optional(output.get("stderr"), str, f"{path}.stderr", "a string") or ""
        exit_code = _optional(output.get("exit_code"), int, f"{path}.exit_code", "an integer")
        duration = output.get("duration_s")
        if duration is not None:
            _number(duration, f"{path}.duration_s")
        label = " ".join(name.split())[:200]
        detail = " ".join(stderr.split())[:_MAX_STDERR]
        if exit_code not in (None, 0):
            bundle.warnings.append(f"{label}: exit {exit_code}" + (f": {detail}" if detail else ""))
        elif not stdout.strip():
            bundle.warnings.append(f"{label}: no output" + (f": {detail}" if detail else ""))
        # A failing command may still print what it found: dcgmi diag exits non-zero when a
        # test fails, with the results on stdout. Whatever stdout holds is read.
        if stdout.strip():
            bundle.outputs.append((name, stdout))

    benchmarks = _optional(raw.get("benchmarks"), list, "benchmarks", "a list") or []
    bundle.benchmarks = [
        _benchmark(item, f"benchmarks[{position}]") for position, item in enumerate(benchmarks)
    ]
    return bundle
