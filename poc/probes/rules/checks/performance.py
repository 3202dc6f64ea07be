"""Checks of measured performance against published peaks: matrix
multiplication, copy bandwidth, host-to-device bandwidth."""

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from django.utils.translation import gettext as _

from poc.probes.facts import Benchmark, NodeFacts
from poc.probes.peaks import Peak, peak_for, percent_of_peak
from poc.probes.rules.checks.base import (
    Result,
    failed_result,
    gpu_name,
    listing,
    number,
    passed_result,
    published_figure,
    unable_result,
)

MATMUL_DTYPES = ("bf16", "fp16", "tf32")


class _BenchmarkRow(NamedTuple):
    where: str
    value: float
    peak: float | None
    percent: float | None


def _benchmarks(nodes: list[NodeFacts]) -> Iterable[tuple[str, Benchmark, Peak | None, str]]:
    """Each benchmark of the run with where it ran, the GPU's published peaks and model name."""
    for position, node in enumerate(nodes):
        by_index = {gpu["index"]: gpu for gpu in node["gpus"] if gpu["index"] is not None}
        for bench in node["benchmarks"]:
            gpu_index = bench.get("gpu_index")
            gpu = by_index.get(gpu_index) if gpu_index is not None else None
            name = (gpu["name"] if gpu else None) or bench.get("device_name")
            device_id = gpu["pci_device_id"] if gpu else None
            model = name or device_id or _("unknown model")
            yield gpu_name(nodes, position, gpu_index), bench, peak_for(device_id, name), model


def _lowest(rows: list[_BenchmarkRow]) -> _BenchmarkRow:
    return min(rows, key=lambda row: row.percent if row.percent is not None else row.value)


def _of_many(measured: str, count: int) -> str:
    if count < 2:
        return measured
    return _("%(measured)s (lowest of %(count)s GPUs)") % {"measured": measured, "count": count}


def _percent_of_peak(
    params: dict[str, Any],
    nodes: list[NodeFacts],
    read: Callable[[Benchmark], float | None],
    peak_of: Callable[[Peak], float | None],
    what: str,
    peak_name: str,
    show: Callable[[_BenchmarkRow], str],
) -> Result:
    rows: list[_BenchmarkRow] = []
    unable: list[str] = []
    seen = 0
    for where, bench, peak, model in _benchmarks(nodes):
        seen += 1
        if "error" in bench:
            unable.append(
                _("%(gpu)s: the benchmark failed: %(error)s")
                % {"gpu": where, "error": bench["error"]}
            )
            continue
        value = read(bench)
        if value is None:
            unable.append(_("%(gpu)s: %(what)s was not measured") % {"gpu": where, "what": what})
            continue
        if peak is None:
            unable.append(
                _("%(gpu)s: %(model)s has no published peak in the table")
                % {"gpu": where, "model": model}
            )
            continue
        published = peak_of(peak)
        if published is None:
            unable.append(
                _("%(gpu)s: %(model)s has no published %(what)s peak")
                % {"gpu": where, "model": peak.name, "what": peak_name}
            )
            continue
        rows.append(_BenchmarkRow(where, value, published, percent_of_peak(value, published)))
    if seen == 0:
        return unable_result(_("No benchmark in this run (the agent runs them with --benchmark)."))
    measured = _of_many(show(_lowest(rows)), len(rows)) if rows else ""
    low = [
        f"{row.where}: {show(row)}"
        for row in sorted(rows, key=lambda row: row.percent or 0.0)
        if row.percent is not None and row.percent < params["percent"]
    ]
    if low:
        return failed_result(measured, listing(low))
    if unable:
        return unable_result(listing(unable), measured)
    return passed_result(measured)


def matmul_percent_of_peak(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    dtype = params["dtype"]

    def show(row: _BenchmarkRow) -> str:
        return _("%(value)s TFLOP/s = %(percent)s %% of %(peak)s TFLOP/s (%(dtype)s)") % {
            "value": number(row.value),
            "percent": f"{row.percent:.1f}",
            "peak": published_figure(row.peak),
            "dtype": dtype,
        }

    return _percent_of_peak(
        params,
        nodes,
        lambda bench: bench.get("matmul_tflops", {}).get(dtype),
        lambda peak: peak.matmul_tflops(dtype),
        _("the %(dtype)s matrix product") % {"dtype": dtype},
        dtype,
        show,
    )


def copy_bandwidth_percent_of_peak(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    def show(row: _BenchmarkRow) -> str:
        return _("%(value)s TB/s = %(percent)s %% of %(peak)s TB/s") % {
            "value": number(row.value),
            "percent": f"{row.percent:.1f}",
            "peak": published_figure(row.peak),
        }

    return _percent_of_peak(
        params,
        nodes,
        lambda bench: bench.get("device_copy_tbps"),
        lambda peak: peak.memory_bandwidth_tbps,
        _("the device memory copy"),
        _("memory bandwidth"),
        show,
    )


def host_to_device_gbps_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    rows: list[tuple[str, float]] = []
    unable: list[str] = []
    seen = 0
    for where, bench, _peak, _model in _benchmarks(nodes):
        seen += 1
        value = bench.get("host_to_device_gbps")
        if "error" in bench:
            unable.append(
                _("%(gpu)s: the benchmark failed: %(error)s")
                % {"gpu": where, "error": bench["error"]}
            )
        elif value is None:
            unable.append(_("%(gpu)s: host-to-device bandwidth was not measured") % {"gpu": where})
        else:
            rows.append((where, value))
    if seen == 0:
        return unable_result(_("No benchmark in this run (the agent runs them with --benchmark)."))
    lowest = min(rows, key=lambda row: row[1]) if rows else None
    measured = (
        _of_many(_("%(value)s GB/s") % {"value": number(lowest[1])}, len(rows)) if lowest else ""
    )
    low = [
        _("%(gpu)s: %(value)s GB/s") % {"gpu": where, "value": number(value)}
        for where, value in sorted(rows, key=lambda row: row[1])
        if value < params["gbps"]
    ]
    if low:
        return failed_result(measured, listing(low))
    if unable:
        return unable_result(listing(unable), measured)
    return passed_result(measured)
