"""Checks of what a cluster run read about the cluster: controlled failures
refused cleanly, scheduler queues and products present."""

from typing import Any

from django.utils.translation import gettext as _

from poc.probes.facts import NodeFacts
from poc.probes.rules.checks.base import (
    DETAIL_ITEMS,
    Result,
    failed_result,
    listing,
    number,
    passed_result,
    unable_result,
)


def no_cluster(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    return unable_result(_("this probe read no cluster (an upload or the push agent)"))


FAILURE_SCENARIOS = ("more_gpus_than_any_node", "over_resource_quota")


def controlled_failure_clean(
    params: dict[str, Any], nodes: list[NodeFacts], cluster: dict[str, Any]
) -> Result:
    failures = cluster.get("controlled_failures")
    if not isinstance(failures, dict):
        return unable_result(_("the run did not include controlled failures"))
    wanted = params["scenario"]
    scenarios = [s for s in failures.get("scenarios") or [] if isinstance(s, dict)]
    found = [s for s in scenarios if s.get("name", s.get("scenario")) == wanted]
    if not found:
        reason = failures.get("error") or _("the scenario did not run on this cluster")
        return unable_result(str(reason))
    scenario = found[0]
    state = str(scenario.get("state") or "")
    reason = str(scenario.get("reason") or "")
    seconds = scenario.get("seconds")
    measured = _("%(state)s: %(reason)s") % {"state": state or "?", "reason": reason or "—"}
    if isinstance(seconds, int | float):
        measured += _(" (after %(s)s s)") % {"s": number(round(seconds, 1))}
    if scenario.get("clean"):
        return passed_result(measured)
    if state == "error":
        # The scenario could not be put to the scheduler (the probe lacked a permission, the
        # site refused the form of the request): nothing was learnt about the shortage.
        return unable_result(reason or _("the scenario did not run on this cluster"))
    return failed_result(
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


def queues_present(
    params: dict[str, Any], nodes: list[NodeFacts], cluster: dict[str, Any]
) -> Result:
    names, _kind = _queue_names(cluster)
    missing = [n for n in params["names"] if n not in names]
    measured = ", ".join(names[:DETAIL_ITEMS]) or _("none")
    if not missing:
        return passed_result(measured)
    blocked = [
        c
        for c in cluster.get("could_not_check") or []
        if "queue" in str(c.get("what", "")).lower()
        or "partition" in str(c.get("what", "")).lower()
    ]
    if blocked and not names:
        return unable_result(str(blocked[0].get("reason") or ""), measured)
    return failed_result(measured, _("missing: %(names)s") % {"names": listing(missing)})


def product_present(
    params: dict[str, Any], nodes: list[NodeFacts], cluster: dict[str, Any]
) -> Result:
    wanted = params["product"]
    products = [p for p in cluster.get("products") or [] if p.get("key") == wanted]
    if not products:
        return unable_result(_("this kind of cluster does not report %(p)s") % {"p": wanted})
    product = products[0]
    state = str(product.get("state") or "")
    measured = f"{product.get('name') or wanted}: {state or '—'}"
    if product.get("present") is None:
        return unable_result(str(product.get("detail") or _("could not check")), measured)
    if not product.get("present"):
        return failed_result(measured, _("not installed"))
    if params["ready"] and state.lower() not in ("ready", "open", "up", ""):
        return failed_result(measured, str(product.get("detail") or state))
    return passed_result(measured)
