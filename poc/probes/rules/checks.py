"""The check catalogue: fixed, parameterized checks that an acceptance action can be bound to.

A check reads the facts of every node of one probe run and answers "passed", "failed" or
"unable" (it could not run: the facts it needs were not reported, there was no benchmark, the
GPU has no published peak...). It never guesses: a fact that was not reported makes a check
unable unless a definite failure was already found elsewhere in the run. There are no free-form
expressions: a binding names a check of `CHECKS` and gives its parameters, which
`validate_params` checks against the check's schema.

    validate_params(key, params) -> dict        # cleaned params, or CheckParamsError
    run_check(key, params, nodes) -> CheckOutcome
    describe(key, params) -> str                # "GPU count ≥ 8"

    CheckOutcome = {"status": "passed" | "failed" | "unable",
                    "measured": str,   # what was measured, human-readable
                    "detail": str,     # why it failed, or why it could not run
                    "check": str}      # the check as a statement with its parameters

Each check's semantics are documented under "Probe rules" in docs/probes.md.
"""

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypedDict

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from poc.probes.facts import Benchmark, GpuFacts, NodeFacts
from poc.probes.peaks import Peak, normalize_device_id, peak_for, percent_of_peak
from poc.probes.rules import health
from poc.probes.rules import xid as xid_catalogue

Status = Literal["passed", "failed", "unable"]
ParamKind = Literal["int", "float", "bool", "str_list", "version", "choice", "mig_profile"]

VERSION_RE = re.compile(r"\d+(\.\d+){0,3}")
MIG_PROFILE_RE = re.compile(r"[1-9]g\.\d+gb(\+[a-z0-9]+)*")
DEVICE_ID_RE = re.compile(r"0x[0-9a-f]{4}")
MATMUL_DTYPES = ("bf16", "fp16", "tf32")

# How many items a failure's detail names before "and N more".
DETAIL_ITEMS = 5


class CheckParamsError(ValueError):
    """A check key or its parameters are not acceptable; `param` names the parameter at fault
    (None: the key, or the parameters as a whole)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class CheckOutcome(TypedDict):
    status: Status
    measured: str
    detail: str
    check: str


class _Missing:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Missing()


@dataclass(frozen=True)
class Param:
    """One parameter of a check: its type, bounds and default (REQUIRED: none)."""

    name: str
    kind: ParamKind
    label: str | Promise
    default: Any = REQUIRED
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False  # the value must be greater than `minimum`
    choices: tuple[str, ...] = ()
    max_items: int = 20  # str_list

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def as_json(self) -> dict[str, Any]:
        """The parameter's schema, for forms and the API."""
        schema: dict[str, Any] = {"name": self.name, "kind": self.kind, "label": str(self.label)}
        schema["required"] = self.required
        if not self.required:
            schema["default"] = self.default
        if self.minimum is not None:
            schema["minimum"] = self.minimum
            schema["exclusive_minimum"] = self.exclusive_minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        if self.choices:
            schema["choices"] = list(self.choices)
        if self.kind == "str_list":
            schema["max_items"] = self.max_items
        return schema


class _Result(NamedTuple):
    status: Status
    measured: str
    detail: str


def _passed(measured: str, detail: str = "") -> _Result:
    return _Result("passed", measured, detail)


def _failed(measured: str, detail: str) -> _Result:
    return _Result("failed", measured, detail)


def _unable(detail: str, measured: str = "") -> _Result:
    return _Result("unable", measured, detail)


Evaluate = Callable[[dict[str, Any], list[NodeFacts]], _Result]
ClusterEvaluate = Callable[[dict[str, Any], list[NodeFacts], dict[str, Any]], _Result]
Statement = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class Check:
    """A check of the catalogue."""

    key: str
    label: str | Promise
    description: str | Promise
    params: tuple[Param, ...]
    statement: Statement  # the check as a sentence, from cleaned params
    evaluate: Evaluate
    # Checks of what a cluster connector read beyond GPU nodes (queues, controlled failures):
    # given the run's cluster facts; unable where the run has none (an upload, the agent).
    evaluate_cluster: "ClusterEvaluate | None" = None

    def as_json(self) -> dict[str, Any]:
        """The check's key, label, description and parameter schema, for forms and the API."""
        return {
            "key": self.key,
            "label": str(self.label),
            "description": str(self.description),
            "params": [param.as_json() for param in self.params],
        }


# --- naming nodes and GPUs in messages --------------------------------------------------------


def _node_name(node: NodeFacts, position: int) -> str:
    return node["host"] or _("node %(number)s") % {"number": position + 1}


def _gpu_name(nodes: list[NodeFacts], position: int, gpu_index: int | None) -> str:
    gpu = (
        _("GPU %(index)s") % {"index": gpu_index}
        if gpu_index is not None
        else _("a GPU of unknown index")
    )
    if len(nodes) == 1:
        return gpu
    return _("%(gpu)s on %(node)s") % {"gpu": gpu, "node": _node_name(nodes[position], position)}


def _listing(items: list[str]) -> str:
    """The first few items, then how many more."""
    shown = "; ".join(items[:DETAIL_ITEMS])
    rest = len(items) - DETAIL_ITEMS
    if rest > 0:
        shown += "; " + ngettext("and %(count)s more", "and %(count)s more", rest) % {"count": rest}
    return shown


def _gpus(nodes: list[NodeFacts]) -> Iterable[tuple[int, GpuFacts]]:
    for position, node in enumerate(nodes):
        for gpu in node["gpus"]:
            yield position, gpu


def _number(value: float) -> str:
    """A measured figure as people write it: 778.6, 312, 4.19."""
    return f"{value:.3g}" if value < 10 else f"{value:.1f}".removesuffix(".0")


def _published(value: float | None) -> str:
    """A published figure as the datasheet prints it: 989.5, 362.05, 1.555."""
    return f"{value or 0.0:g}"


# --- the checks ---------------------------------------------------------------------------------


def _gpu_count_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    if not nodes:
        return _unable(_("The probe run holds no node."))
    total = sum(len(node["gpus"]) for node in nodes)
    measured = ngettext("%(count)s GPU", "%(count)s GPUs", total) % {"count": total}
    if total >= params["count"]:
        return _passed(measured)
    return _failed(
        measured,
        _("%(count)s found, at least %(wanted)s wanted.")
        % {"count": total, "wanted": params["count"]},
    )


def _gpus_per_node_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    if not nodes:
        return _unable(_("The probe run holds no node."))
    counts = [
        (len(node["gpus"]), _node_name(node, position)) for position, node in enumerate(nodes)
    ]
    fewest = min(count for count, _name in counts)
    if len(nodes) == 1:
        measured = ngettext("%(count)s GPU", "%(count)s GPUs", fewest) % {"count": fewest}
    else:
        measured = ngettext(
            "fewest %(count)s GPU per node, over %(nodes)s nodes",
            "fewest %(count)s GPUs per node, over %(nodes)s nodes",
            fewest,
        ) % {"count": fewest, "nodes": len(nodes)}
    short = [f"{name}: {count}" for count, name in counts if count < params["count"]]
    if not short:
        return _passed(measured)
    return _failed(measured, _("Nodes with fewer GPUs: %(nodes)s.") % {"nodes": _listing(short)})


def _all_gpus_healthy(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    if not nodes:
        return _unable(_("The probe run holds no node."))
    assessments = [health.assess_node(node) for node in nodes]
    verdicts: Counter[str] = Counter()
    bad: list[str] = []
    not_checked: set[str] = set()
    worst: list[str] = []
    for position, assessment in enumerate(assessments):
        judged = assessment.health
        worst.append(judged["verdict"])
        for gpu in judged["gpus"]:
            verdicts[gpu["verdict"]] += 1
        not_checked.update(item["code"] for item in judged["could_not_check"])
        not_checked.update(
            item["code"] for gpu in judged["gpus"] for item in gpu["could_not_check"]
        )
        for problem in health.all_problems(judged):
            if problem["severity"] == "failed" or not params["allow_degraded"]:
                where = (
                    _node_name(nodes[position], position)
                    if problem["gpu_index"] is None
                    else _gpu_name(nodes, position, problem["gpu_index"])
                )
                bad.append(f"{where}: {problem['message']}")
    total = sum(verdicts.values())
    measured = _(
        "verdict %(verdict)s; %(gpus)s: %(healthy)s healthy, %(degraded)s degraded, "
        "%(failed)s failed"
    ) % {
        "verdict": health.worst(worst),
        "gpus": ngettext("%(count)s GPU", "%(count)s GPUs", total) % {"count": total},
        "healthy": verdicts["healthy"],
        "degraded": verdicts["degraded"],
        "failed": verdicts["failed"],
    }
    if not_checked:
        measured += "; " + _("not checked: %(codes)s") % {"codes": ", ".join(sorted(not_checked))}
    if bad:
        return _failed(measured, _listing(bad))
    if sum(assessment.conclusive for assessment in assessments) == 0:
        return _unable(
            _("None of the facts the health rules read was reported, so nothing was checked."),
            measured,
        )
    return _passed(measured)


def _model_matches(gpu: GpuFacts, models: list[str]) -> bool | None:
    """True or False, or None when the GPU's name or device id needed to tell is not known."""
    name = (gpu["name"] or "").lower()
    device_id = normalize_device_id(gpu["pci_device_id"])
    undecided = False
    for model in models:
        if DEVICE_ID_RE.fullmatch(model):
            if device_id is None:
                undecided = True
            elif device_id == model:
                return True
        elif not name:
            undecided = True
        elif model.lower() in name:
            return True
    return None if undecided else False


def _gpu_model(gpu: GpuFacts) -> str:
    name = gpu["name"] or _("unknown model")
    device_id = normalize_device_id(gpu["pci_device_id"])
    return f"{name} ({device_id})" if device_id else name


def _gpu_model_in(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    gpus = list(_gpus(nodes))
    if not gpus:
        return _unable(_("No GPU was found in this run."))
    models = Counter(_gpu_model(gpu) for _position, gpu in gpus)
    measured = ", ".join(f"{count} × {model}" for model, count in models.most_common())
    wrong: list[str] = []
    unknown: list[str] = []
    for position, gpu in gpus:
        match = _model_matches(gpu, params["models"])
        where = _gpu_name(nodes, position, gpu["index"])
        if match is False:
            wrong.append(f"{where}: {_gpu_model(gpu)}")
        elif match is None:
            unknown.append(where)
    if wrong:
        return _failed(measured, _("Other models: %(gpus)s.") % {"gpus": _listing(wrong)})
    if unknown:
        return _unable(
            _("The model (name or PCI device id) was not reported for %(gpus)s.")
            % {"gpus": _listing(unknown)},
            measured,
        )
    return _passed(measured)


def _version_tuple(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    found = VERSION_RE.match(text.strip())
    return tuple(int(part) for part in found.group(0).split(".")) if found else None


def _version_at_least(have: tuple[int, ...], wanted: tuple[int, ...]) -> bool:
    width = max(len(have), len(wanted))
    return have + (0,) * (width - len(have)) >= wanted + (0,) * (width - len(wanted))


def _versions_at_least(
    field: Literal["driver_version", "cuda_version"], params: dict[str, Any], nodes: list[NodeFacts]
) -> _Result:
    if not nodes:
        return _unable(_("The probe run holds no node."))
    wanted = _version_tuple(params["version"])
    assert wanted is not None  # validated
    versions = Counter(version for node in nodes if (version := node[field]))
    measured = ", ".join(version for version, _count in versions.most_common())
    older: list[str] = []
    unknown: list[str] = []
    for position, node in enumerate(nodes):
        have = _version_tuple(node[field])
        if have is None:
            unknown.append(_node_name(node, position))
        elif not _version_at_least(have, wanted):
            older.append(f"{_node_name(node, position)}: {node[field]}")
    if older:
        return _failed(measured, _("Older on %(nodes)s.") % {"nodes": _listing(older)})
    if unknown:
        return _unable(
            _("The version was not reported on %(nodes)s.") % {"nodes": _listing(unknown)},
            measured,
        )
    return _passed(measured)


def _driver_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    return _versions_at_least("driver_version", params, nodes)


def _cuda_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    return _versions_at_least("cuda_version", params, nodes)


GpuFlag = Literal["mig_mode_current", "ecc_mode_current", "persistence_mode"]


def _every_gpu(field: GpuFlag, nodes: list[NodeFacts]) -> _Result:
    gpus = list(_gpus(nodes))
    if not gpus:
        return _unable(_("No GPU was found in this run."))
    on = sum(1 for _position, gpu in gpus if gpu[field] is True)
    measured = _("on for %(on)s of %(total)s GPUs") % {"on": on, "total": len(gpus)}
    off = [_gpu_name(nodes, p, gpu["index"]) for p, gpu in gpus if gpu[field] is False]
    unknown = [_gpu_name(nodes, p, gpu["index"]) for p, gpu in gpus if gpu[field] is None]
    if off:
        return _failed(measured, _("Off on %(gpus)s.") % {"gpus": _listing(off)})
    if unknown:
        return _unable(
            _("Not reported for %(gpus)s.") % {"gpus": _listing(unknown)},
            measured,
        )
    return _passed(measured)


def _mig_enabled(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    return _every_gpu("mig_mode_current", nodes)


def _ecc_enabled(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    return _every_gpu("ecc_mode_current", nodes)


def _persistence_mode_enabled(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    return _every_gpu("persistence_mode", nodes)


def _mig_profile(value: str | None) -> str:
    return (value or "").strip().lower().removeprefix("mig").strip()


def _mig_profile_count_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    gpus = list(_gpus(nodes))
    if not gpus:
        return _unable(_("No GPU was found in this run."))
    profile = params["profile"]
    found = sum(
        1
        for _position, gpu in gpus
        for device in gpu["mig_devices"]
        if _mig_profile(device["profile"]) == profile
    )
    measured = ngettext(
        "%(count)s MIG device of profile %(profile)s",
        "%(count)s MIG devices of profile %(profile)s",
        found,
    ) % {"count": found, "profile": profile}
    if found >= params["count"]:
        return _passed(measured)
    if all(gpu["mig_mode_current"] is None for _position, gpu in gpus) and not any(
        gpu["mig_devices"] for _position, gpu in gpus
    ):
        return _unable(_("Neither MIG mode nor MIG devices were reported."), measured)
    enabled = sum(1 for _position, gpu in gpus if gpu["mig_mode_current"])
    return _failed(
        measured,
        _(
            "%(found)s found, at least %(wanted)s wanted; MIG is enabled on %(enabled)s of "
            "%(total)s GPUs."
        )
        % {"found": found, "wanted": params["count"], "enabled": enabled, "total": len(gpus)},
    )


def _no_actionable_xid(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    if not nodes:
        return _unable(_("The probe run holds no node."))
    actionable: Counter[tuple[int, int | None, int]] = Counter()
    events = 0
    unread: list[str] = []
    for position, node in enumerate(nodes):
        if not health.kernel_log_read(node):
            unread.append(_node_name(node, position))
            continue
        for event, severity in xid_catalogue.current_events(node["xid_events"]):
            events += 1
            if severity is not None:
                actionable[(position, event["gpu_index"], event["code"])] += 1
    total = sum(actionable.values())
    measured = ngettext(
        "%(events)s Xid event, %(actionable)s actionable",
        "%(events)s Xid events, %(actionable)s actionable",
        events,
    ) % {"events": events, "actionable": total}
    if actionable:
        found = []
        for (position, gpu_index, code), count in sorted(
            actionable.items(), key=lambda item: (item[0][0], item[0][1] or -1, item[0][2])
        ):
            where = (
                _gpu_name(nodes, position, gpu_index)
                if gpu_index is not None
                else _node_name(nodes[position], position)
            )
            info = xid_catalogue.xid_info(code)
            what = (
                _("Xid %(code)s (%(description)s)")
                % {"code": code, "description": info.description}
                if info is not None
                else _("Xid %(code)s (not in the catalogue, needs review)") % {"code": code}
            )
            found.append(f"{what} ×{count}, {where}")
        return _failed(measured, _listing(found))
    if unread:
        return _unable(
            _("The kernel log was not read on %(nodes)s.") % {"nodes": _listing(unread)},
            measured,
        )
    return _passed(measured)


def _nvlink_all_active(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    gpus = list(_gpus(nodes))
    if not gpus:
        return _unable(_("No GPU was found in this run."))
    short: list[str] = []
    unknown: list[str] = []
    fewest: int | None = None
    status_known = [health.nvlink_status_known(node) for node in nodes]
    for position, gpu in gpus:
        links = gpu["nvlink_links"]
        where = _gpu_name(nodes, position, gpu["index"])
        if not links or not status_known[position]:
            unknown.append(where)
            continue
        active = sum(1 for link in links if link["active"])
        fewest = active if fewest is None else min(fewest, active)
        if active < len(links) or active < params["min_links"]:
            short.append(
                _("%(gpu)s: %(active)s of %(total)s active")
                % {"gpu": where, "active": active, "total": len(links)}
            )
    measured = (
        ngettext(
            "fewest active NVLink links on a GPU: %(count)s",
            "fewest active NVLink links on a GPU: %(count)s",
            fewest,
        )
        % {"count": fewest}
        if fewest is not None
        else ""
    )
    if short:
        return _failed(measured, _listing(short))
    if unknown:
        return _unable(
            _("No NVLink link status was reported for %(gpus)s (not read, or no NVLink).")
            % {"gpus": _listing(unknown)},
            measured,
        )
    return _passed(measured)


def _dcgm_diag_passed(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    if not nodes:
        return _unable(_("The probe run holds no node."))
    results: Counter[str] = Counter()
    bad: list[str] = []
    not_run: list[str] = []
    for position, node in enumerate(nodes):
        if not node["dcgm"]:
            not_run.append(_node_name(node, position))
        for test in node["dcgm"]:
            result = test["result"].strip().lower()
            results[result] += 1
            if result == "fail" or (result == "warn" and not params["allow_warn"]):
                where = (
                    _gpu_name(nodes, position, test["gpu_index"])
                    if test["gpu_index"] is not None
                    else _node_name(node, position)
                )
                bad.append(f"{test['name']} {test['result']} ({where}): {test['info']}")
    measured = _(
        "%(passed)s passed, %(failed)s failed, %(warned)s warned, %(other)s skipped or not run"
    ) % {
        "passed": results["pass"],
        "failed": results["fail"],
        "warned": results["warn"],
        "other": sum(results.values()) - results["pass"] - results["fail"] - results["warn"],
    }
    if bad:
        return _failed(measured, _listing(bad))
    if not_run:
        return _unable(
            _("DCGM diagnostics were not run on %(nodes)s.") % {"nodes": _listing(not_run)},
            measured,
        )
    if results["pass"] + results["warn"] == 0:
        return _unable(_("DCGM ran no test: every test was skipped or not run."), measured)
    return _passed(measured)


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
            yield _gpu_name(nodes, position, gpu_index), bench, peak_for(device_id, name), model


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
) -> _Result:
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
        return _unable(_("No benchmark in this run (the agent runs them with --benchmark)."))
    measured = _of_many(show(_lowest(rows)), len(rows)) if rows else ""
    low = [
        f"{row.where}: {show(row)}"
        for row in sorted(rows, key=lambda row: row.percent or 0.0)
        if row.percent is not None and row.percent < params["percent"]
    ]
    if low:
        return _failed(measured, _listing(low))
    if unable:
        return _unable(_listing(unable), measured)
    return _passed(measured)


def _matmul_percent_of_peak(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    dtype = params["dtype"]

    def show(row: _BenchmarkRow) -> str:
        return _("%(value)s TFLOP/s = %(percent)s %% of %(peak)s TFLOP/s (%(dtype)s)") % {
            "value": _number(row.value),
            "percent": f"{row.percent:.1f}",
            "peak": _published(row.peak),
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


def _copy_bandwidth_percent_of_peak(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    def show(row: _BenchmarkRow) -> str:
        return _("%(value)s TB/s = %(percent)s %% of %(peak)s TB/s") % {
            "value": _number(row.value),
            "percent": f"{row.percent:.1f}",
            "peak": _published(row.peak),
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


def _host_to_device_gbps_at_least(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
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
        return _unable(_("No benchmark in this run (the agent runs them with --benchmark)."))
    lowest = min(rows, key=lambda row: row[1]) if rows else None
    measured = (
        _of_many(_("%(value)s GB/s") % {"value": _number(lowest[1])}, len(rows)) if lowest else ""
    )
    low = [
        _("%(gpu)s: %(value)s GB/s") % {"gpu": where, "value": _number(value)}
        for where, value in sorted(rows, key=lambda row: row[1])
        if value < params["gbps"]
    ]
    if low:
        return _failed(measured, _listing(low))
    if unable:
        return _unable(_listing(unable), measured)
    return _passed(measured)


# --- cluster facts ---------------------------------------------------------------------------


def _no_cluster(params: dict[str, Any], nodes: list[NodeFacts]) -> _Result:
    return _unable(_("this probe read no cluster (an upload or the push agent)"))


FAILURE_SCENARIOS = ("more_gpus_than_any_node", "over_resource_quota")


def _controlled_failure_clean(
    params: dict[str, Any], nodes: list[NodeFacts], cluster: dict[str, Any]
) -> _Result:
    failures = cluster.get("controlled_failures")
    if not isinstance(failures, dict):
        return _unable(_("the run did not include controlled failures"))
    wanted = params["scenario"]
    scenarios = [s for s in failures.get("scenarios") or [] if isinstance(s, dict)]
    found = [s for s in scenarios if s.get("name", s.get("scenario")) == wanted]
    if not found:
        reason = failures.get("error") or _("the scenario did not run on this cluster")
        return _unable(str(reason))
    scenario = found[0]
    state = str(scenario.get("state") or "")
    reason = str(scenario.get("reason") or "")
    seconds = scenario.get("seconds")
    measured = _("%(state)s: %(reason)s") % {"state": state or "?", "reason": reason or "—"}
    if isinstance(seconds, int | float):
        measured += _(" (after %(s)s s)") % {"s": _number(round(seconds, 1))}
    if scenario.get("clean"):
        return _passed(measured)
    if state == "error":
        # The scenario could not be put to the scheduler (the probe lacked a permission, the
        # site refused the form of the request): nothing was learnt about the shortage.
        return _unable(reason or _("the scenario did not run on this cluster"))
    return _failed(
        measured,
        _("the request was not refused or left pending with a reason in time (%(state)s)")
        % {"state": state or "?"},
    )


def _queue_names(cluster: dict[str, Any]) -> tuple[list[str], str]:
    """The scheduler queues (or Slurm partitions) a cluster probe found, and which kind."""
    if cluster.get("format", "").startswith("workbench-slurm-facts"):
        return [str(p.get("name")) for p in cluster.get("partitions") or []], "partition"
    names = [str(q.get("name")) for q in (cluster.get("volcano") or {}).get("queues") or []]
    names += [str(q.get("name")) for q in (cluster.get("kai") or {}).get("queues") or []]
    return names, "queue"


def _queues_present(
    params: dict[str, Any], nodes: list[NodeFacts], cluster: dict[str, Any]
) -> _Result:
    names, _kind = _queue_names(cluster)
    missing = [n for n in params["names"] if n not in names]
    measured = ", ".join(names[:DETAIL_ITEMS]) or _("none")
    if not missing:
        return _passed(measured)
    blocked = [
        c
        for c in cluster.get("could_not_check") or []
        if "queue" in str(c.get("what", "")).lower()
        or "partition" in str(c.get("what", "")).lower()
    ]
    if blocked and not names:
        return _unable(str(blocked[0].get("reason") or ""), measured)
    return _failed(measured, _("missing: %(names)s") % {"names": _listing(missing)})


def _product_present(
    params: dict[str, Any], nodes: list[NodeFacts], cluster: dict[str, Any]
) -> _Result:
    wanted = params["product"]
    products = [p for p in cluster.get("products") or [] if p.get("key") == wanted]
    if not products:
        return _unable(_("this kind of cluster does not report %(p)s") % {"p": wanted})
    product = products[0]
    state = str(product.get("state") or "")
    measured = f"{product.get('name') or wanted}: {state or '—'}"
    if product.get("present") is None:
        return _unable(str(product.get("detail") or _("could not check")), measured)
    if not product.get("present"):
        return _failed(measured, _("not installed"))
    if params["ready"] and state.lower() not in ("ready", "open", "up", ""):
        return _failed(measured, str(product.get("detail") or state))
    return _passed(measured)


# --- the catalogue --------------------------------------------------------------------------


def _count_param(maximum: int, label: str | Promise) -> Param:
    return Param("count", "int", label, minimum=1, maximum=maximum)


def _percent_param() -> Param:
    return Param(
        "percent", "float", gettext_lazy("Minimum percentage of the peak"), minimum=1, maximum=100
    )


CHECKS: tuple[Check, ...] = (
    Check(
        key="gpu_count_at_least",
        label=gettext_lazy("GPU count"),
        description=gettext_lazy("The run found at least this many GPUs, over all its nodes."),
        params=(_count_param(1_000_000, gettext_lazy("Minimum number of GPUs")),),
        statement=lambda p: _("GPU count ≥ %(count)s") % p,
        evaluate=_gpu_count_at_least,
    ),
    Check(
        key="gpus_per_node_at_least",
        label=gettext_lazy("GPUs per node"),
        description=gettext_lazy("Every node of the run has at least this many GPUs."),
        params=(_count_param(1024, gettext_lazy("Minimum number of GPUs per node")),),
        statement=lambda p: _("GPUs per node ≥ %(count)s") % p,
        evaluate=_gpus_per_node_at_least,
    ),
    Check(
        key="gpu_model_in",
        label=gettext_lazy("GPU model"),
        description=gettext_lazy(
            "Every GPU is one of the given models: a name contained in the GPU's name (any case, "
            '"H200" matches "NVIDIA H200") or an exact PCI device id ("0x2335").'
        ),
        params=(Param("models", "str_list", gettext_lazy("Models (names or PCI device ids)")),),
        statement=lambda p: (
            _("GPU model is one of: %(models)s") % {"models": ", ".join(p["models"])}
        ),
        evaluate=_gpu_model_in,
    ),
    Check(
        key="all_gpus_healthy",
        label=gettext_lazy("GPU health"),
        description=gettext_lazy(
            "The health rules find no problem on any node (ECC, remapped rows, PCIe link, clock "
            "slowdowns, fabric, NVLink, Xid errors, NVSwitch errors, GPUs the driver could not "
            "initialise, DCGM, GPU count). Checks that could not be made are listed in the "
            "measured value; unable when none could."
        ),
        params=(
            Param("allow_degraded", "bool", gettext_lazy("Accept degraded GPUs"), default=False),
        ),
        statement=lambda p: (
            _("All GPUs healthy or degraded") if p["allow_degraded"] else _("All GPUs healthy")
        ),
        evaluate=_all_gpus_healthy,
    ),
    Check(
        key="no_actionable_xid",
        label=gettext_lazy("No actionable Xid"),
        description=gettext_lazy(
            "The kernel log of every node holds no Xid error that the health rules count as a "
            "problem (per NVIDIA's Xid catalogue; unknown codes count; Xid 154 by the recovery "
            "action it names). Unable where no kernel log was read."
        ),
        params=(),
        statement=lambda p: _("No actionable Xid error in the kernel log"),
        evaluate=_no_actionable_xid,
    ),
    Check(
        key="dcgm_diag_passed",
        label=gettext_lazy("DCGM diagnostics"),
        description=gettext_lazy(
            "Every node ran DCGM diagnostics (dcgmi diag) and no test failed; warnings fail the "
            "check only when they are not allowed."
        ),
        params=(Param("allow_warn", "bool", gettext_lazy("Accept warnings"), default=True),),
        statement=lambda p: (
            _("DCGM diagnostics passed (warnings allowed)")
            if p["allow_warn"]
            else _("DCGM diagnostics passed without warnings")
        ),
        evaluate=_dcgm_diag_passed,
    ),
    Check(
        key="ecc_enabled",
        label=gettext_lazy("ECC enabled"),
        description=gettext_lazy("ECC is enabled on every GPU."),
        params=(),
        statement=lambda p: _("ECC enabled on every GPU"),
        evaluate=_ecc_enabled,
    ),
    Check(
        key="persistence_mode_enabled",
        label=gettext_lazy("Persistence mode"),
        description=gettext_lazy("Persistence mode is enabled on every GPU."),
        params=(),
        statement=lambda p: _("Persistence mode enabled on every GPU"),
        evaluate=_persistence_mode_enabled,
    ),
    Check(
        key="mig_enabled",
        label=gettext_lazy("MIG enabled"),
        description=gettext_lazy("MIG mode is currently enabled on every GPU."),
        params=(),
        statement=lambda p: _("MIG enabled on every GPU"),
        evaluate=_mig_enabled,
    ),
    Check(
        key="mig_profile_count_at_least",
        label=gettext_lazy("MIG devices of a profile"),
        description=gettext_lazy(
            "The run has at least this many MIG devices of the given GPU instance profile, over "
            "all its GPUs."
        ),
        params=(
            Param("profile", "mig_profile", gettext_lazy("Profile, such as 1g.10gb")),
            _count_param(10_000, gettext_lazy("Minimum number of MIG devices")),
        ),
        statement=lambda p: _("MIG devices of profile %(profile)s ≥ %(count)s") % p,
        evaluate=_mig_profile_count_at_least,
    ),
    Check(
        key="nvlink_all_active",
        label=gettext_lazy("NVLink links active"),
        description=gettext_lazy(
            "Every GPU reports NVLink links, all of them active, and at least the given number."
        ),
        params=(
            Param(
                "min_links",
                "int",
                gettext_lazy("Minimum active links per GPU"),
                default=1,
                minimum=1,
                maximum=64,
            ),
        ),
        statement=lambda p: _("All NVLink links active, at least %(min_links)s per GPU") % p,
        evaluate=_nvlink_all_active,
    ),
    Check(
        key="driver_at_least",
        label=gettext_lazy("Driver version"),
        description=gettext_lazy(
            "The NVIDIA driver of every node is at least this version (compared number by number)."
        ),
        params=(Param("version", "version", gettext_lazy("Minimum version, such as 535.104.05")),),
        statement=lambda p: _("Driver version ≥ %(version)s") % p,
        evaluate=_driver_at_least,
    ),
    Check(
        key="cuda_at_least",
        label=gettext_lazy("CUDA version"),
        description=gettext_lazy(
            "The CUDA version the driver of every node supports is at least this version."
        ),
        params=(Param("version", "version", gettext_lazy("Minimum version, such as 12.2")),),
        statement=lambda p: _("CUDA version ≥ %(version)s") % p,
        evaluate=_cuda_at_least,
    ),
    Check(
        key="matmul_percent_of_peak",
        label=gettext_lazy("Matrix product vs. published peak"),
        description=gettext_lazy(
            "Every benchmarked GPU reaches at least this percentage of its published dense peak "
            "(no sparsity) in a large matrix product of the given type. Unable without a benchmark "
            "or for a GPU model without a published peak."
        ),
        params=(
            Param("dtype", "choice", gettext_lazy("Data type"), choices=MATMUL_DTYPES),
            _percent_param(),
        ),
        statement=lambda p: (
            _("%(dtype)s matrix product ≥ %(percent)s %% of published peak")
            % {"dtype": p["dtype"], "percent": _number(p["percent"])}
        ),
        evaluate=_matmul_percent_of_peak,
    ),
    Check(
        key="copy_bandwidth_percent_of_peak",
        label=gettext_lazy("Memory bandwidth vs. published peak"),
        description=gettext_lazy(
            "Every benchmarked GPU copies device memory (bytes read plus written per second) at "
            "at least this percentage of its published memory bandwidth."
        ),
        params=(_percent_param(),),
        statement=lambda p: (
            _("Device memory copy ≥ %(percent)s %% of published bandwidth")
            % {"percent": _number(p["percent"])}
        ),
        evaluate=_copy_bandwidth_percent_of_peak,
    ),
    Check(
        key="host_to_device_gbps_at_least",
        label=gettext_lazy("Host-to-device bandwidth"),
        description=gettext_lazy(
            "Every benchmarked GPU receives pinned host memory at least this fast (GB/s)."
        ),
        params=(
            Param(
                "gbps",
                "float",
                gettext_lazy("Minimum GB/s"),
                minimum=0,
                exclusive_minimum=True,
                maximum=10_000,
            ),
        ),
        statement=lambda p: (
            _("Host-to-device bandwidth ≥ %(gbps)s GB/s") % {"gbps": _number(p["gbps"])}
        ),
        evaluate=_host_to_device_gbps_at_least,
    ),
)

CHECKS = (
    *CHECKS,
    Check(
        key="controlled_failure_clean",
        label=gettext_lazy("Controlled failure fails cleanly"),
        description=gettext_lazy(
            "A run with controlled failures asked the cluster's scheduler for more than it may "
            "give (more GPUs than any node has, or more than a GPU quota allows); it passes "
            "when the request was refused, or left pending with a reason a user can read, in "
            "time. Unable when the run had no controlled failures."
        ),
        params=(
            Param(
                "scenario",
                "choice",
                gettext_lazy("Scenario"),
                default="more_gpus_than_any_node",
                choices=FAILURE_SCENARIOS,
            ),
        ),
        statement=lambda p: _("Controlled failure %(scenario)s refused with a reason") % p,
        evaluate=_no_cluster,
        evaluate_cluster=_controlled_failure_clean,
    ),
    Check(
        key="scheduler_queues_present",
        label=gettext_lazy("Scheduler queues exist"),
        description=gettext_lazy(
            "The cluster's scheduler has every named queue (Volcano or KAI / Run:ai queues on "
            "Kubernetes, partitions on Slurm)."
        ),
        params=(Param("names", "str_list", gettext_lazy("Queue or partition names")),),
        statement=lambda p: (
            _("Scheduler queues exist: %(names)s") % {"names": ", ".join(p["names"])}
        ),
        evaluate=_no_cluster,
        evaluate_cluster=_queues_present,
    ),
    Check(
        key="product_present",
        label=gettext_lazy("Product installed"),
        description=gettext_lazy(
            "The cluster runs the product (GPU Operator, Volcano, KAI / Run:ai, OpenShift AI), "
            "and, when asked, reports it ready."
        ),
        params=(
            Param(
                "product",
                "choice",
                gettext_lazy("Product"),
                choices=("kubernetes-gpu-operator", "volcano", "kai", "runai", "openshift-ai"),
            ),
            Param("ready", "bool", gettext_lazy("Must be ready"), default=True),
        ),
        statement=lambda p: (
            (_("%(product)s installed and ready") if p["ready"] else _("%(product)s installed")) % p
        ),
        evaluate=_no_cluster,
        evaluate_cluster=_product_present,
    ),
)

CHECKS_BY_KEY: dict[str, Check] = {check.key: check for check in CHECKS}


# --- parameters -------------------------------------------------------------------------------


def kind_text(param: Param) -> str:
    texts = {
        "int": _("a whole number"),
        "float": _("a number"),
        "bool": _("true or false"),
        "str_list": _("a non-empty list of names"),
        "version": _("a version such as 12.2 or 535.104.05"),
        "mig_profile": _("a MIG profile such as 1g.10gb"),
        "choice": _("one of: %(choices)s") % {"choices": ", ".join(param.choices)},
    }
    return texts[param.kind]


def _wrong_type(param: Param) -> CheckParamsError:
    return CheckParamsError(
        _("Parameter %(name)s must be %(kind)s.") % {"name": param.name, "kind": kind_text(param)},
        param.name,
    )


def _in_bounds(param: Param, value: float) -> None:
    values = {"name": param.name, "minimum": param.minimum, "maximum": param.maximum}
    if param.minimum is not None:
        if param.exclusive_minimum and value <= param.minimum:
            raise CheckParamsError(
                _("Parameter %(name)s must be greater than %(minimum)s.") % values, param.name
            )
        if value < param.minimum:
            raise CheckParamsError(
                _("Parameter %(name)s must be at least %(minimum)s.") % values, param.name
            )
    if param.maximum is not None and value > param.maximum:
        raise CheckParamsError(
            _("Parameter %(name)s must be at most %(maximum)s.") % values, param.name
        )


def _clean(param: Param, value: Any) -> Any:
    if param.kind == "bool":
        if not isinstance(value, bool):
            raise _wrong_type(param)
        return value
    if param.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _wrong_type(param)
        _in_bounds(param, value)
        return value
    if param.kind == "float":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise _wrong_type(param)
        _in_bounds(param, value)
        return float(value)
    if param.kind == "str_list":
        if not isinstance(value, list) or not value or len(value) > param.max_items:
            raise _wrong_type(param)
        cleaned = []
        for item in value:
            if not isinstance(item, str) or not item.strip() or len(item) > 100:
                raise _wrong_type(param)
            item = item.strip()
            cleaned.append(item.lower() if DEVICE_ID_RE.fullmatch(item.lower()) else item)
        return cleaned
    if not isinstance(value, str):
        raise _wrong_type(param)
    text = value.strip().lower()
    if param.kind == "version" and VERSION_RE.fullmatch(text) and len(text) <= 32:
        return text
    if param.kind == "mig_profile" and MIG_PROFILE_RE.fullmatch(_mig_profile(text)):
        return _mig_profile(text)
    if param.kind == "choice" and text in param.choices:
        return text
    raise _wrong_type(param)


def _check(key: str) -> Check:
    check = CHECKS_BY_KEY.get(key) if isinstance(key, str) else None
    if check is None:
        raise CheckParamsError(_("Unknown check %(key)s.") % {"key": key})
    return check


def validate_params(key: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The parameters of check `key`, cleaned (defaults filled in, versions and profiles in
    lower case, numbers as numbers); CheckParamsError naming the parameter at fault otherwise."""
    check = _check(key)
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise CheckParamsError(_("The parameters must be a mapping of names to values."))
    known = {param.name for param in check.params}
    for name in params:
        if name not in known:
            raise CheckParamsError(
                _("Unknown parameter %(name)s for check %(key)s.") % {"name": name, "key": key},
                str(name),
            )
    cleaned: dict[str, Any] = {}
    for param in check.params:
        if param.name not in params:
            if param.required:
                raise CheckParamsError(
                    _("Missing parameter %(name)s.") % {"name": param.name}, param.name
                )
            cleaned[param.name] = param.default
        else:
            cleaned[param.name] = _clean(param, params[param.name])
    return cleaned


def describe(key: str, params: dict[str, Any] | None) -> str:
    """The check as a statement with its parameters ("GPU count ≥ 8"), for pages. A stored
    binding that no longer validates (the catalogue changed) is described with the reason
    instead of raising; validate_params is the function that refuses."""
    try:
        return _check(key).statement(validate_params(key, params))
    except CheckParamsError as exc:
        return _stale(key, exc)


def _stale(key: str, exc: CheckParamsError) -> str:
    check = CHECKS_BY_KEY.get(key) if isinstance(key, str) else None
    return _("%(check)s (not valid: %(reason)s)") % {
        "check": str(check.label) if check else str(key),
        "reason": exc,
    }


def run_check(
    key: str,
    params: dict[str, Any] | None,
    nodes: list[NodeFacts],
    *,
    cluster: dict[str, Any] | None = None,
) -> CheckOutcome:
    """Run a check on all the nodes of one probe run. A binding whose check or parameters are no
    longer valid (the catalogue changed) is "unable", with the reason, rather than an error: one
    stale binding must not stop a probe run from being recorded."""
    try:
        cleaned = validate_params(key, params)
    except CheckParamsError as exc:
        return {"status": "unable", "measured": "", "detail": str(exc), "check": _stale(key, exc)}
    check = CHECKS_BY_KEY[key]
    if check.evaluate_cluster is not None and cluster:
        result = check.evaluate_cluster(cleaned, nodes, cluster)
    else:
        result = check.evaluate(cleaned, nodes)
    return {
        "status": result.status,
        "measured": result.measured,
        "detail": result.detail,
        "check": check.statement(cleaned),
    }
