"""A DCGM exporter sample, read through the API server's service proxy (Prometheus
text), merged into the GPU nodes' facts."""

import math
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from poc.probes.connectors.kubernetes.api import Api
from poc.probes.connectors.kubernetes.discovery import cannot
from poc.probes.connectors.kubernetes.values import DEFAULT_OPERATOR_NAMESPACE, as_int, dig
from poc.probes.facts import NodeFacts, XidEvent

DCGM_SOURCE = "kubernetes: dcgm-exporter metrics (service proxy)"

DCGM_PORT = 9400
# The exporter's per-code Xid counters (label xid="<code>", the value how many times it came):
# DCGM_EXP_XID_ERRORS_COUNT within a window (label window_size_in_ms, the xid-count-window-size
# setting), DCGM_EXP_XID_ERRORS_TOTAL since the exporter started. DCGM_FI_DEV_XID_ERRORS beside
# them holds the last code only.
_DCGM_XID_COUNTS = ("DCGM_EXP_XID_ERRORS_COUNT", "DCGM_EXP_XID_ERRORS_TOTAL")
_DCGM_TO_GPU = {  # exporter field -> GpuFacts field, where the exporter's Hostname is the node
    "DCGM_FI_DEV_GPU_TEMP": "temperature_c",
    "DCGM_FI_DEV_GPU_UTIL": "utilization_gpu_pct",
    "DCGM_FI_DEV_POWER_USAGE": "power_draw_w",
}
# dcgm-exporter 1.x (the GPU Operator's 1.x releases) wrote lower-case names with a "uuid"
# label; read as the field names of the later exporters.
_DCGM_V1_NAMES = {
    "dcgm_gpu_temp": "DCGM_FI_DEV_GPU_TEMP",
    "dcgm_gpu_utilization": "DCGM_FI_DEV_GPU_UTIL",
    "dcgm_power_usage": "DCGM_FI_DEV_POWER_USAGE",
    "dcgm_fb_used": "DCGM_FI_DEV_FB_USED",
    "dcgm_fb_free": "DCGM_FI_DEV_FB_FREE",
    "dcgm_sm_clock": "DCGM_FI_DEV_SM_CLOCK",
    "dcgm_mem_clock": "DCGM_FI_DEV_MEM_CLOCK",
    "dcgm_memory_temp": "DCGM_FI_DEV_MEMORY_TEMP",
    "dcgm_xid_errors": "DCGM_FI_DEV_XID_ERRORS",
}
_METRIC_LINE = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+\S+)?\s*$")
_METRIC_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_LABEL_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def parse_prometheus(text: str) -> tuple[list[tuple[str, dict[str, str], float]], int]:
    """Samples (name, labels, value) of a Prometheus text exposition, and how many lines were
    skipped as unreadable. Comments, blank lines and timestamps are ignored."""
    samples: list[tuple[str, dict[str, str], float]] = []
    skipped = 0
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _METRIC_LINE.match(line)
        if not match:
            skipped += 1
            continue
        name, label_text, value_text = match.groups()
        labels: dict[str, str] = {}
        if label_text:
            inner, pos = label_text[1:-1], 0
            while pos < len(inner):
                label_match = _METRIC_LABEL.match(inner, pos)
                if not label_match or label_match.end() == pos:
                    break
                labels[label_match.group(1)] = _unescape_label(label_match.group(2))
                pos = label_match.end()
            if inner[pos:].strip():
                skipped += 1
                continue
        try:
            value = float(value_text)
        except ValueError:
            skipped += 1
            continue
        samples.append((name, labels, value))
    return samples, skipped


_LABEL_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


def _unescape_label(raw: str) -> str:
    """A label value of the text format with its escapes undone in one left-to-right pass:
    `\\\\` is a backslash, `\\"` a quote, `\\n` a newline (so `\\\\n` is a backslash and an
    "n"). Any other backslash is kept as written."""
    return _LABEL_ESCAPE.sub(lambda m: _LABEL_ESCAPES.get(m.group(1), m.group(0)), raw)


def _dcgm_no_value(value: float) -> bool:
    """DCGM's markers for a field without a value, which exporters before the filtering of
    mid-2020 printed as numbers: the int64 blanks from 0x7ffffffffffffff0 (read as a float,
    9.223372036854776e18) and the float64 blanks from 2**47 (140737488355328.0 .. +3); also
    NaN and infinities."""
    if not math.isfinite(value):
        return True
    return value >= float(0x7FFFFFFFFFFFFFF0) or 2.0**47 <= value <= 2.0**47 + 3


def _dcgm_gpus(text: str) -> tuple[list[dict[str, Any]], int]:
    """One entry per GPU (or MIG instance) of an exporter sample; a field DCGM had no value
    for is named in the entry's `no_value`, not kept as a reading. The per-code Xid counters
    go to `xid_counts` ({metric, code, count, window_ms}), one entry per code."""
    samples, skipped = parse_prometheus(text)
    gpus: dict[tuple[str, ...], dict[str, Any]] = {}
    for name, labels, value in samples:
        if name.startswith("dcgm_"):
            name = _DCGM_V1_NAMES.get(name, name)
        if not name.upper().startswith("DCGM_"):
            continue
        uuid = labels.get("UUID") or labels.get("uuid")
        key = (
            labels.get("Hostname", ""),
            labels.get("gpu", ""),
            uuid or "",
            labels.get("GPU_I_ID", ""),
        )
        entry = gpus.get(key)
        if entry is None:
            entry = gpus[key] = {
                "hostname": labels.get("Hostname"),
                "gpu": as_int(labels.get("gpu")),
                "uuid": uuid,
                "model": labels.get("modelName"),
                "device": labels.get("device"),
                "driver_version": labels.get("DCGM_FI_DRIVER_VERSION"),
                "mig_instance": labels.get("GPU_I_ID"),
                "mig_profile": labels.get("GPU_I_PROFILE"),
                "metrics": {},
                "no_value": [],
                "xid_counts": [],
            }
        if _dcgm_no_value(value):
            entry["no_value"].append(name)
        elif name in _DCGM_XID_COUNTS:
            # One sample per Xid code (label xid): kept apart, as the codes share the name.
            code = as_int(labels.get("xid"))
            if code is not None:
                entry["xid_counts"].append(
                    {
                        "metric": name,
                        "code": code,
                        "count": int(value),
                        "window_ms": as_int(labels.get("window_size_in_ms")),
                    }
                )
        else:
            entry["metrics"][name] = value
    return list(gpus.values()), skipped


def read_dcgm(api: Api, result: dict[str, Any]) -> None:
    dcgm: dict[str, Any] = {"present": None, "service": None, "gpus": []}
    result["dcgm"] = dcgm
    namespace = (result["gpu_operator"] or {}).get("namespace") or DEFAULT_OPERATOR_NAMESPACE
    ns = quote(namespace, safe="")
    listing = api.list(f"/api/v1/namespaces/{ns}/services")
    found = _dcgm_service(listing.items)
    if found is None and listing.state != "failed":
        listing = api.list("/api/v1/services")
        found = _dcgm_service(listing.items)
    if found is None:
        if listing.state == "failed":
            cannot(result, "DCGM exporter Service", listing.reason)
        else:
            dcgm["present"] = False
            dcgm["detail"] = f"no Service named *dcgm-exporter* or on port {DCGM_PORT}"
        return
    svc_ns, svc_name, port = found
    path = (
        f"/api/v1/namespaces/{quote(svc_ns, safe='')}/services/"
        f"{quote(svc_name, safe='')}:{quote(port, safe='')}/proxy/metrics"
    )
    dcgm.update(present=True, service=f"{svc_ns}/{svc_name}:{port}", path=path)
    reply = api.request("GET", path, accept="text/plain, */*", json_expected=False, fatal=False)
    if not reply.ok:
        cannot(result, f"DCGM exporter metrics (GET {path})", reply.error)
        return
    gpus, skipped = _dcgm_gpus(reply.text)
    if not gpus:
        cannot(result, f"DCGM exporter metrics (GET {path})", "no DCGM_* sample in the answer")
        return
    dcgm["gpus"] = gpus
    dcgm["skipped_lines"] = skipped
    dcgm["note"] = "one exporter pod's sample: the service proxy reaches one endpoint"
    _merge_dcgm(result["gpu_nodes"], gpus)


def _dcgm_service(items: Iterable[dict[str, Any]]) -> tuple[str, str, str] | None:
    for item in items:
        name = str(dig(item, "metadata", "name") or "")
        ports = [p for p in dig(item, "spec", "ports") or [] if isinstance(p, dict)]
        on_port = next((p for p in ports if as_int(p.get("port")) == DCGM_PORT), None)
        if on_port is None and "dcgm-exporter" in name and ports:
            on_port = ports[0]
        if on_port is not None and name:
            port = str(on_port.get("name") or on_port.get("port"))
            return str(dig(item, "metadata", "namespace") or "default"), name, port
    return None


def _merge_dcgm(nodes: list[NodeFacts], gpus: list[dict[str, Any]]) -> None:
    """Readings of the exporters whose Hostname label is a node's name (older exporters label
    the exporter pod's name instead: those stay in `dcgm` only)."""
    by_host = {node["host"]: node for node in nodes}
    for sample in gpus:
        node = by_host.get(sample["hostname"])
        if node is None or sample["gpu"] is None or sample["mig_instance"]:
            continue
        gpu = next((g for g in node["gpus"] if g["index"] == sample["gpu"]), None)
        if gpu is None:
            continue
        metrics = sample["metrics"]
        gpu["uuid"] = gpu["uuid"] or sample["uuid"]
        if node["driver_version"] is None and sample.get("driver_version"):
            node["driver_version"] = str(sample["driver_version"])
        for metric, key in _DCGM_TO_GPU.items():
            if metric in metrics:
                gpu[key] = float(metrics[metric])  # type: ignore[literal-required]
        if "DCGM_FI_DEV_FB_USED" in metrics:
            gpu["memory_used_mib"] = int(metrics["DCGM_FI_DEV_FB_USED"])
        if "DCGM_FI_DEV_SM_CLOCK" in metrics:
            gpu["sm_clock_mhz"] = int(metrics["DCGM_FI_DEV_SM_CLOCK"])
        counted: set[int] = set()
        for entry in sample.get("xid_counts") or []:
            if entry["count"] <= 0 or entry["code"] <= 0 or entry["code"] in counted:
                continue
            counted.add(entry["code"])
            node["xid_events"].append(
                XidEvent(
                    code=entry["code"],
                    pci_bus_id=None,
                    gpu_index=sample["gpu"],
                    message=_xid_count_message(entry),
                    timestamp=None,
                )
            )
        xid = int(metrics.get("DCGM_FI_DEV_XID_ERRORS", 0))
        if xid > 0 and xid not in counted:
            node["xid_events"].append(
                XidEvent(
                    code=xid,
                    pci_bus_id=None,
                    gpu_index=sample["gpu"],
                    message="last Xid reported by the DCGM exporter (DCGM_FI_DEV_XID_ERRORS)",
                    timestamp=None,
                )
            )
        if DCGM_SOURCE not in node["sources"]:
            node["sources"].append(DCGM_SOURCE)


def _xid_count_message(entry: dict[str, Any]) -> str:
    times = "once" if entry["count"] == 1 else f"{entry['count']} times"
    if entry["metric"] == "DCGM_EXP_XID_ERRORS_TOTAL":
        when = "since the exporter started"
    elif entry["window_ms"]:
        when = f"within its last {entry['window_ms'] / 1000:g} s"
    else:
        when = "within its counting window"
    return f"Xid reported by the DCGM exporter {times} {when} ({entry['metric']})"
