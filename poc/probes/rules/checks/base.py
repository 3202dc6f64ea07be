"""What every check is made of: its parameters and their schema, its outcome, and
how nodes and GPUs are named in what it says."""

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypedDict

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import GpuFacts, NodeFacts

Status = Literal["passed", "failed", "unable"]
ParamKind = Literal["int", "float", "bool", "str_list", "version", "choice", "mig_profile"]

VERSION_RE = re.compile(r"\d+(\.\d+){0,3}")
# A GPU instance profile ("3g.40gb", "1g.10gb+me") or a compute instance profile in one
# ("1c.3g.40gb").
MIG_PROFILE_RE = re.compile(r"([1-9]c\.)?[1-9]g\.\d+gb(\+[a-z0-9]+)*")
DEVICE_ID_RE = re.compile(r"0x[0-9a-f]{4}")

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


class Result(NamedTuple):
    status: Status
    measured: str
    detail: str


def passed_result(measured: str, detail: str = "") -> Result:
    return Result("passed", measured, detail)


def failed_result(measured: str, detail: str) -> Result:
    return Result("failed", measured, detail)


def unable_result(detail: str, measured: str = "") -> Result:
    return Result("unable", measured, detail)


Evaluate = Callable[[dict[str, Any], list[NodeFacts]], Result]
ClusterEvaluate = Callable[[dict[str, Any], list[NodeFacts], dict[str, Any]], Result]
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


def node_name(node: NodeFacts, position: int) -> str:
    return node["host"] or _("node %(number)s") % {"number": position + 1}


def gpu_name(nodes: list[NodeFacts], position: int, gpu_index: int | None) -> str:
    gpu = (
        _("GPU %(index)s") % {"index": gpu_index}
        if gpu_index is not None
        else _("a GPU of unknown index")
    )
    if len(nodes) == 1:
        return gpu
    return _("%(gpu)s on %(node)s") % {"gpu": gpu, "node": node_name(nodes[position], position)}


def listing(items: list[str]) -> str:
    """The first few items, then how many more."""
    shown = "; ".join(items[:DETAIL_ITEMS])
    rest = len(items) - DETAIL_ITEMS
    if rest > 0:
        shown += "; " + ngettext("and %(count)s more", "and %(count)s more", rest) % {"count": rest}
    return shown


def each_gpu(nodes: list[NodeFacts]) -> Iterable[tuple[int, GpuFacts]]:
    for position, node in enumerate(nodes):
        for gpu in node["gpus"]:
            yield position, gpu


def unlisted_nodes(nodes: list[NodeFacts]) -> list[str]:
    """The nodes whose inventory is unknown: no output read lists their GPUs (a kernel log
    alone, a -q fragment); see NodeFacts.gpus_listed."""
    return [
        node_name(node, position)
        for position, node in enumerate(nodes)
        if not node.get("gpus_listed", True)
    ]


def no_gpus(nodes: list[NodeFacts]) -> Result:
    """A check on GPUs when the run holds none: none was found, or (where some node's
    inventory is unknown) none was listed."""
    unlisted = unlisted_nodes(nodes)
    if unlisted:
        return unable_result(
            _("The GPUs were not listed on %(nodes)s (only a kernel log or fragments were read).")
            % {"nodes": listing(unlisted)}
        )
    return unable_result(_("No GPU was found in this run."))


def number(value: float) -> str:
    """A measured figure as people write it: 778.6, 312, 4.19."""
    return f"{value:.3g}" if value < 10 else f"{value:.1f}".removesuffix(".0")


def published_figure(value: float | None) -> str:
    """A published figure as the datasheet prints it: 989.5, 362.05, 1.555."""
    return f"{value or 0.0:g}"
