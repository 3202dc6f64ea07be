"""Facts and health as pages and sheets show them: short texts per GPU, bars against peak."""

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext

from poc.probes import peaks
from poc.probes.facts import GpuFacts, NodeFacts, mig_levels
from poc.probes.rules import checks

BAR_SCALE = 300  # SVG units for 100 % of peak


def _unknown(value: object) -> bool:
    return value is None


def memory_text(mib: int | None) -> str:
    if mib is None:
        return "—"
    return f"{mib / 1024:.1f} GiB" if mib >= 1024 else f"{mib} MiB"


def _on_off(value: bool | None) -> str:
    if value is None:
        return _("unknown")
    return _("on") if value else _("off")


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{n}× {p}" for p, n in sorted(counts.items()))


def _mig_layout(gpu: GpuFacts) -> str:
    """ ": 2× 1c.3g.71gb (GPU instances: 1× 3g.71gb)": each MIG device is a compute instance,
    named by its own profile; the GPU instances holding them only where the input identifies
    them (and differ from the devices). "" when no device is known."""
    levels = mig_levels(gpu)
    count = levels["compute_instances"]
    if not count:
        return ""
    devices = levels["compute_profiles"]
    if set(devices) == {"?"}:
        text = ngettext("%(count)s MIG device", "%(count)s MIG devices", count) % {"count": count}
    else:
        text = _counted(devices)
    instances = levels["gpu_instances"]
    if instances is None:
        return f": {text}"
    by_profile: dict[str, int] = {}
    for instance in instances:
        name = instance["profile"] or "?"
        by_profile[name] = by_profile.get(name, 0) + 1
    if set(by_profile) == {"?"}:
        held = ngettext(
            "in %(count)s GPU instance", "in %(count)s GPU instances", len(instances)
        ) % {"count": len(instances)}
        return f": {text} {held}" if len(instances) != count else f": {text}"
    if by_profile == devices:
        return f": {text}"
    return f": {text} " + _("(GPU instances: %(layout)s)") % {"layout": _counted(by_profile)}


def mig_text(gpu: GpuFacts) -> str:
    if gpu["mig_mode_current"] is None:
        return _("unknown")
    text = _("on") + _mig_layout(gpu) if gpu["mig_mode_current"] else _("off")
    if gpu["mig_mode_pending"] is not None and gpu["mig_mode_pending"] != gpu["mig_mode_current"]:
        text += " " + _("(%(state)s after reset)") % {"state": _on_off(gpu["mig_mode_pending"])}
    return text


def ecc_text(gpu: GpuFacts) -> str:
    if gpu["ecc_mode_current"] is False:
        return _("off")
    volatile, aggregate = gpu["ecc_volatile_uncorrected"], gpu["ecc_aggregate_uncorrected"]
    if volatile is None and aggregate is None:
        return _("on") if gpu["ecc_mode_current"] else _("unknown")
    return _("%(v)s uncorrected (%(a)s lifetime)") % {
        "v": "—" if volatile is None else volatile,
        "a": "—" if aggregate is None else aggregate,
    }


def remap_text(gpu: GpuFacts) -> str:
    if gpu["remapped_rows_pending"] is None and gpu["remapped_rows_failure"] is None:
        retired = gpu["retired_pages_double_bit"]
        if retired is not None:
            return _("%(n)s pages retired (double-bit)") % {"n": retired}
        return "—"
    parts = [
        _("%(c)s / %(u)s rows")
        % {
            "c": "—"
            if gpu["remapped_rows_correctable"] is None
            else gpu["remapped_rows_correctable"],
            "u": "—"
            if gpu["remapped_rows_uncorrectable"] is None
            else gpu["remapped_rows_uncorrectable"],
        }
    ]
    if gpu["remapped_rows_pending"]:
        parts.append(_("pending"))
    if gpu["remapped_rows_failure"]:
        parts.append(_("failure"))
    return ", ".join(parts)


def pcie_text(gpu: GpuFacts) -> str:
    def link(gen: int | None, width: int | None) -> str:
        return f"Gen{gen if gen is not None else '?'} x{width if width is not None else '?'}"

    current = link(gpu["pcie_gen_current"], gpu["pcie_width_current"])
    if gpu["pcie_gen_max"] is None and gpu["pcie_width_max"] is None:
        return current
    return f"{current} / {link(gpu['pcie_gen_max'], gpu['pcie_width_max'])}"


def power_text(gpu: GpuFacts) -> str:
    draw, limit = gpu["power_draw_w"], gpu["power_limit_w"]
    if draw is None and limit is None:
        return "—"
    return f"{'—' if draw is None else round(draw)} / {'—' if limit is None else round(limit)} W"


def gpu_rows(facts: NodeFacts, judged: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per GPU for the page: the facts as short texts and the GPU's own health."""
    by_position = judged.get("gpus", [])
    rows = []
    for position, gpu in enumerate(facts["gpus"]):
        gpu_health = by_position[position] if position < len(by_position) else {}
        rows.append(
            {
                "index": gpu["index"],
                "name": gpu["name"],
                "pci_bus_id": gpu["pci_bus_id"],
                "pci_device_id": gpu["pci_device_id"],
                "memory": memory_text(gpu["memory_total_mib"]),
                "mig": mig_text(gpu),
                "ecc": ecc_text(gpu),
                "remap": remap_text(gpu),
                "pcie": pcie_text(gpu),
                "power": power_text(gpu),
                "temperature": "—"
                if gpu["temperature_c"] is None
                else f"{round(gpu['temperature_c'])} °C",
                "verdict": gpu_health.get("verdict", ""),
                "problems": gpu_health.get("problems", []),
                "could_not_check": [c["reason"] for c in gpu_health.get("could_not_check", [])],
            }
        )
    return rows


BENCH_FIGURES = (
    # (label, benchmark field, dtype in matmul_tflops or None, peak attribute, unit)
    ("bf16 matmul", "matmul_tflops", "bf16", "bf16_tflops", "TFLOP/s"),
    ("fp16 matmul", "matmul_tflops", "fp16", "fp16_tflops", "TFLOP/s"),
    ("tf32 matmul", "matmul_tflops", "tf32", "tf32_tflops", "TFLOP/s"),
    ("device copy", "device_copy_tbps", None, "memory_bandwidth_tbps", "TB/s"),
)


def benchmark_figures(facts: NodeFacts) -> list[dict[str, Any]]:
    """Each benchmarked GPU's figures with their percentage of the published peak."""
    gpus = {g["index"]: g for g in facts["gpus"]}
    out = []
    for bench in facts["benchmarks"]:
        index = bench.get("gpu_index")
        gpu = gpus.get(index)
        peak = peaks.peak_for(
            gpu["pci_device_id"] if gpu else None,
            (gpu["name"] if gpu else None) or bench.get("device_name"),
        )
        figures = []
        for label, field, dtype, peak_field, unit in BENCH_FIGURES:
            raw = bench.get(field)
            measured = raw.get(dtype) if isinstance(raw, dict) and dtype else raw
            if not isinstance(measured, int | float):
                continue
            reference = getattr(peak, peak_field, None) if peak else None
            percent = peaks.percent_of_peak(measured, reference)
            figures.append(
                {
                    "label": label,
                    "measured": measured,
                    "unit": unit,
                    "peak": reference,
                    "percent": percent,
                }
            )
        for label, field in (
            ("host → device", "host_to_device_gbps"),
            ("device → host", "device_to_host_gbps"),
        ):
            measured = bench.get(field)
            if isinstance(measured, int | float):
                figures.append(
                    {
                        "label": label,
                        "measured": measured,
                        "unit": "GB/s",
                        "peak": None,
                        "percent": None,
                    }
                )
        out.append(
            {
                "index": index,
                "name": bench.get("device_name") or (gpu["name"] if gpu else None) or "",
                "framework": bench.get("framework", ""),
                "error": bench.get("error", ""),
                "peak_source": getattr(peak, "source", "") if peak else "",
                "figures": figures,
            }
        )
    return out


def benchmark_bars(facts: NodeFacts) -> list[dict[str, Any]]:
    """benchmark_figures laid out for the page's SVG: one 20-unit row per figure."""
    out = []
    for gpu in benchmark_figures(facts):
        bars = []
        for row, figure in enumerate(gpu["figures"]):
            percent = figure["percent"]
            text = f"{figure['measured']:.1f} {figure['unit']}"
            if percent is not None:
                text += f" · {percent:.1f} % " + _("of %(peak)s") % {"peak": figure["peak"]}
            bars.append(
                {
                    "y": row * 22,
                    "label": figure["label"],
                    "percent": percent,
                    "width": round(min(percent, 100.0) * BAR_SCALE / 100, 1)
                    if percent is not None
                    else 0,
                    "text": text,
                }
            )
        out.append({**gpu, "bars": bars, "height": max(len(bars) * 22, 22)})
    return out


def output_filename(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    safe = "_".join(part for part in safe.split("_") if part)[:120] or "output"
    return safe if safe.endswith((".json", ".txt", ".xml", ".log")) else f"{safe}.txt"


def current_binding(
    explicit: Any, template_check: dict[str, Any] | None
) -> tuple[str, dict[str, Any], str]:
    """(check key, params, origin) of an action: "explicit", "template", or "" (none)."""
    if explicit is not None:
        return explicit.check_key, explicit.params, "explicit"
    if template_check:
        return template_check["check"], template_check.get("params", {}), "template"
    return "", {}, ""


def sheet_probe_facts(run: Any) -> dict[str, Any]:
    """What a procurement sheet freezes of a candidate's latest probe run: a compact GPU
    inventory and health per node, and the benchmark's percentages of peak. Health messages
    are judged again in the active language, so the sheet reads in its own language."""
    from poc.probes.rules import health

    nodes = []
    for node in run.nodes.all():
        facts = node.facts
        if node.error:  # a node a cluster probe could not read: its reason, nothing judged
            nodes.append(
                {
                    "host": node.host,
                    "verdict": "",
                    "driver": "",
                    "cuda": "",
                    "gpus": "",
                    "gpu_count": 0,
                    "expected": None,
                    "problems": [node.error],
                    "not_checked": 0,
                    "benchmarks": [],
                }
            )
            continue
        judged = health.judge_node(facts)
        models: dict[str, int] = {}
        for gpu in facts["gpus"]:
            name = gpu["name"] or "?"
            models[name] = models.get(name, 0) + 1
        problems = [p["message"] for p in judged["problems"]]
        for gpu in judged["gpus"]:
            problems.extend(f"GPU {gpu['index']}: {p['message']}" for p in gpu["problems"])
        benchmarks = []
        for bench in benchmark_figures(facts):
            by_label = {f["label"]: f for f in bench["figures"]}
            benchmarks.append(
                {
                    "gpu": bench["index"],
                    "bf16_tflops": _figure(by_label, "bf16 matmul", "measured"),
                    "bf16_percent": _figure(by_label, "bf16 matmul", "percent"),
                    "copy_tbps": _figure(by_label, "device copy", "measured"),
                    "copy_percent": _figure(by_label, "device copy", "percent"),
                    "error": bench["error"],
                }
            )
        nodes.append(
            {
                "host": node.host,
                "verdict": node.verdict,
                "driver": facts.get("driver_version") or "",
                "cuda": facts.get("cuda_version") or "",
                "gpus": ", ".join(f"{n} × {m}" for m, n in sorted(models.items())),
                "gpu_count": len(facts["gpus"]),
                "expected": facts.get("expected_gpu_count"),
                "problems": problems,
                "not_checked": sum(len(g["could_not_check"]) for g in judged["gpus"])
                + len(judged["could_not_check"]),
                "benchmarks": benchmarks,
            }
        )
    return {
        "candidate": run.candidate.slug,
        "run": run.pk,
        "recorded_at": run.created_at.isoformat(),
        "verdict": run.verdict,
        "node_count": run.node_count,
        "gpu_count": run.gpu_count,
        "nodes": nodes,
    }


def _figure(by_label: dict[str, dict[str, Any]], label: str, field: str) -> float | None:
    value = by_label.get(label, {}).get(field)
    return round(value, 1) if isinstance(value, int | float) else None


_EXAMPLE_VALUES: dict[str, Any] = {
    "int": 8,
    "float": 70,
    "bool": False,
    "str_list": ["H200", "0x2330"],
    "version": "12.2",
    "mig_profile": "1g.18gb",
}


def _example_value(param: checks.Param) -> Any:
    if not param.required:
        return param.default
    if param.kind == "choice":
        return param.choices[0]
    if param.kind == "version" and "driver" in str(param.label).lower():
        return "535.104.05"
    if param.minimum is not None and param.kind == "float" and param.maximum is not None:
        return min(max(_EXAMPLE_VALUES["float"], param.minimum), param.maximum)
    return _EXAMPLE_VALUES[param.kind]


def catalogue() -> list[dict[str, Any]]:
    """The check catalogue as pages list it: label, key, what it measures, each parameter with
    its kind and default, and an example of the parameters as JSON (one that validates)."""
    import json

    out = []
    for check in checks.CHECKS:
        example = {param.name: _example_value(param) for param in check.params}
        out.append(
            {
                "key": check.key,
                "label": str(check.label),
                "description": str(check.description),
                "params": [
                    {
                        "name": param.name,
                        "kind": checks.kind_text(param),
                        "default": None if param.required else json.dumps(param.default),
                        "help": str(param.label),
                    }
                    for param in check.params
                ],
                "example": json.dumps(checks.validate_params(check.key, example)),
            }
        )
    return out


# --- what a cluster said (a Kubernetes or Slurm run's cluster facts) --------------------------

_SCENARIO_LABELS = {
    "more_gpus_than_any_node": gettext_noop("A job asking for more GPUs than any node has"),
    "over_resource_quota": gettext_noop(
        "A pod asking for more GPUs than the namespace's quota leaves"
    ),
}


def _items(value: object) -> list[Mapping[str, Any]]:
    """The mappings of a stored list (facts stored by any earlier version may lack a key)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _counts_text(counts: Mapping[str, int]) -> str:
    """ "Resources 4 · Priority 2": the most frequent first."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    return " · ".join(f"{name} {count}" for name, count in ordered)


def _node_states(nodes: list[Mapping[str, Any]]) -> str:
    """ "idle 3 · down 1 · mixed 1" with the flags counted after ("DRAIN 1")."""
    states: dict[str, int] = {}
    flags: dict[str, int] = {}
    for node in nodes:
        state = str(node.get("state") or _("unknown"))
        states[state] = states.get(state, 0) + 1
        for flag in node.get("state_flags") or []:
            flags[str(flag)] = flags.get(str(flag), 0) + 1
    text = _counts_text(states)
    return f"{text} ({_counts_text(flags)})" if flags else text


def _found(present: object) -> str:
    if present is True:
        return "yes"
    return "no" if present is False else "unknown"


def _gpu_figure(value: object) -> str:
    return "—" if value is None else str(value)


def cluster_summary(facts: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What a cluster run read about the cluster itself, as the run page shows it: the version,
    the products found (Kubernetes), partitions, node states and pending reasons (Slurm), GPU
    quotas, the controlled failures and what could not be checked. None without such facts
    (an SSH run, or a run that ended before it read the cluster)."""
    if not facts:
        return None
    version = facts.get("server_version") or facts.get("slurm_version")
    products = [
        {
            "name": str(p.get("name") or p.get("key") or "?"),
            "found": _found(p.get("present")),
            "state": str(p.get("state") or ""),
            "detail": str(p.get("detail") or ""),
        }
        for p in _items(facts.get("products"))
    ]
    partitions = [
        {
            "name": str(p.get("name") or "?"),
            "state": str(p.get("state") or "—"),
            "nodes": str(p.get("nodes") or "—"),
            "gpus": _gpu_figure(p.get("gpus_total")),
            "default": p.get("default"),
        }
        for p in _items(facts.get("partitions"))
    ]
    quotas = []
    for quota in _items(facts.get("quotas")):
        hard = _mapping(quota.get("hard"))
        used = _mapping(quota.get("used"))
        for resource, limit in hard.items():
            quotas.append(
                {
                    "namespace": str(quota.get("namespace") or "—"),
                    "name": str(quota.get("name") or "?"),
                    "resource": str(resource),
                    "hard": _gpu_figure(limit),
                    "used": _gpu_figure(used.get(resource)),
                }
            )
    failures = facts.get("controlled_failures")
    scenarios = []
    failure_error = ""
    if isinstance(failures, Mapping):
        failure_error = str(failures.get("error") or "")
        for scenario in _items(failures.get("scenarios")):
            name = str(scenario.get("name") or scenario.get("scenario") or "?")
            label = _SCENARIO_LABELS.get(name)
            seconds = scenario.get("seconds")
            scenarios.append(
                {
                    "name": name,
                    "label": _(label) if label else name,
                    "clean": scenario.get("clean") is True,
                    "state": str(scenario.get("state") or "—"),
                    "reason": str(scenario.get("reason") or ""),
                    "note": str(scenario.get("note") or ""),
                    "seconds": seconds if isinstance(seconds, int | float) else None,
                    "gpus": scenario.get("gpus_requested"),
                }
            )
    nodes = _items(facts.get("nodes"))
    pending = facts.get("jobs_pending_reasons")
    return {
        "kind": "slurm" if "slurm_version" in facts else "kubernetes",
        "version": str(version) if version else "",
        "api_version": str(facts.get("api_version") or ""),
        "products": products,
        "partitions": partitions,
        "node_states": _node_states(nodes) if "slurm_version" in facts and nodes else "",
        "pending": _counts_text(pending) if isinstance(pending, Mapping) and pending else "",
        "quotas": quotas,
        "failures": isinstance(failures, Mapping),
        "failure_error": failure_error,
        "scenarios": scenarios,
        "could_not_check": [
            {"what": str(c.get("what") or ""), "reason": str(c.get("reason") or "")}
            for c in _items(facts.get("could_not_check"))
        ],
        # What the cluster's own facts warn of (nodes on another Slurm version, MIG counts
        # that disagree): in the connector's plain English, as node warnings are.
        "warnings": [str(w) for w in facts.get("warnings") or [] if w],
    }


# What is stored of a secret besides its ciphertext (Cluster.secret_summary): that it is set
# (never its length), or for a private key its algorithm and fingerprint.
SECRET_SET = "set"
SECRET_SET_ENCRYPTED_KEY = "set (encrypted key)"


def secret_summary_shown(summary: str) -> str:
    """A stored secret's summary in the reader's language."""
    words = {SECRET_SET: _("set"), SECRET_SET_ENCRYPTED_KEY: _("set (encrypted key)")}
    return words.get(summary, summary)
