"""Checks of the GPUs' health: the health verdicts, Xid events, NVLink links,
DCGM diagnostics."""

from collections import Counter
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import NodeFacts
from poc.probes.rules import health
from poc.probes.rules import xid as xid_catalogue
from poc.probes.rules.checks.base import (
    Result,
    each_gpu,
    failed_result,
    gpu_name,
    listing,
    no_gpus,
    node_name,
    passed_result,
    unable_result,
)


def all_gpus_healthy(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    if not nodes:
        return unable_result(_("The probe run holds no node."))
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
                    node_name(nodes[position], position)
                    if problem["gpu_index"] is None
                    else gpu_name(nodes, position, problem["gpu_index"])
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
        return failed_result(measured, listing(bad))
    if sum(assessment.conclusive for assessment in assessments) == 0:
        return unable_result(
            _("None of the facts the health rules read was reported, so nothing was checked."),
            measured,
        )
    return passed_result(measured)


def no_actionable_xid(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    if not nodes:
        return unable_result(_("The probe run holds no node."))
    actionable: Counter[tuple[int, int | None, int]] = Counter()
    events = 0
    unread: list[str] = []
    for position, node in enumerate(nodes):
        if not health.kernel_log_read(node):
            unread.append(node_name(node, position))
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
                gpu_name(nodes, position, gpu_index)
                if gpu_index is not None
                else node_name(nodes[position], position)
            )
            info = xid_catalogue.xid_info(code)
            what = (
                _("Xid %(code)s (%(description)s)")
                % {"code": code, "description": info.description}
                if info is not None
                else _("Xid %(code)s (not in the catalogue, needs review)") % {"code": code}
            )
            found.append(f"{what} ×{count}, {where}")
        return failed_result(measured, listing(found))
    if unread:
        return unable_result(
            _("The kernel log was not read on %(nodes)s.") % {"nodes": listing(unread)},
            measured,
        )
    return passed_result(measured)


def nvlink_all_active(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    gpus = list(each_gpu(nodes))
    if not gpus:
        return no_gpus(nodes)
    short: list[str] = []
    unknown: list[str] = []
    fewest: int | None = None
    status_known = [health.nvlink_status_known(node) for node in nodes]
    for position, gpu in gpus:
        links = gpu["nvlink_links"]
        where = gpu_name(nodes, position, gpu["index"])
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
        return failed_result(measured, listing(short))
    if unknown:
        return unable_result(
            _("No NVLink link status was reported for %(gpus)s (not read, or no NVLink).")
            % {"gpus": listing(unknown)},
            measured,
        )
    return passed_result(measured)


def dcgm_diag_passed(params: dict[str, Any], nodes: list[NodeFacts]) -> Result:
    if not nodes:
        return unable_result(_("The probe run holds no node."))
    results: Counter[str] = Counter()
    bad: list[str] = []
    not_run: list[str] = []
    for position, node in enumerate(nodes):
        if not node["dcgm"]:
            not_run.append(node_name(node, position))
        for test in node["dcgm"]:
            result = test["result"].strip().lower()
            results[result] += 1
            if result == "fail" or (result == "warn" and not params["allow_warn"]):
                where = (
                    gpu_name(nodes, position, test["gpu_index"])
                    if test["gpu_index"] is not None
                    else node_name(node, position)
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
        return failed_result(measured, listing(bad))
    if not_run:
        return unable_result(
            _("DCGM diagnostics were not run on %(nodes)s.") % {"nodes": listing(not_run)},
            measured,
        )
    if results["pass"] + results["warn"] == 0:
        return unable_result(_("DCGM ran no test: every test was skipped or not run."), measured)
    return passed_result(measured)
