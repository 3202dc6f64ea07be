"""The decision document: what the people who sign need, computed from a frozen snapshot.

The sheet's body answers the decision (recommendation, the must-have gates, verdict counts,
cost, what is still open, whether the review was ready) and prints the exceptions, not every
result: failed and needs-integration results by group of business questions, must-haves first,
at most GROUP_LIMIT per group with the rest counted; not-covered actions the same way; passed
results as counts. The full record travels inside the same signed file as attachments
(reports.attachments), and "every result printed" remains a layout of its own.

Everything here reads the snapshot only, so a revision prints the same in any year.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from reports.exports import OUTCOME_ORDER
from reports.procurement.frozen import frozen_charts

GROUP_LIMIT = 25  # rows of one kind per group of questions before the rest is counted
# Integration needs nobody is named to deliver, named per candidate before the rest is counted
# (every one is in the attached results, with its empty "delivered by").
NOBODY_SHOWN = 10
RISKS_PER_KIND = 5  # failed must-haves per candidate in the risk register before a count
IMPORTANCE_RANK = {"must": 0, "should": 1, "could": 2}
EXCEPTIONS = ("failed", "needs_integration")


@dataclass
class Group:
    """One group of business questions (a requirement dimension) for one candidate."""

    name: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOME_ORDER, 0))
    must: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOME_ORDER, 0))
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    exceptions_more: dict[str, int] = field(default_factory=dict)
    not_covered: list[dict[str, Any]] = field(default_factory=list)
    not_covered_more: int = 0

    @property
    def must_total(self) -> int:
        return sum(self.must.values())


def _decimal(value: Any) -> Decimal:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return Decimal(0)


def _name(candidate: dict[str, Any]) -> str:
    return f"{candidate['solution']} {candidate['version']}".strip()


def _groups(snapshot: dict[str, Any], column: int, candidate: dict[str, Any]) -> list[Group]:
    """One candidate's scorecard and exceptions by group, in the suite's order."""
    matrix = snapshot["matrix"]
    causes = {f["action"]: f.get("cause", "") for f in candidate.get("failed", [])}
    needs = {i["action"]: i for i in candidate.get("needs_integration", [])}
    evidence: dict[str, int] = defaultdict(int)
    for item in snapshot.get("evidence", []):
        if item["candidate"] == candidate["slug"] and not item.get("superseded"):
            evidence[item["action"]] += 1
    groups: dict[str, Group] = {}
    found: dict[str, list[tuple[int, int, dict[str, Any]]]] = defaultdict(list)
    open_: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for position, (action, row) in enumerate(zip(matrix["actions"], matrix["rows"], strict=True)):
        outcome = row[column]
        name = action.get("dimension") or "—"
        group = groups.setdefault(name, Group(name))
        group.counts[outcome] = group.counts.get(outcome, 0) + 1
        importance = action.get("importance", "must")
        if importance == "must":
            group.must[outcome] = group.must.get(outcome, 0) + 1
        question = action.get("question") or action["key"]
        if outcome in EXCEPTIONS:
            need = needs.get(action["key"], {})
            found[name].append(
                (
                    IMPORTANCE_RANK.get(importance, 0),
                    position,
                    {
                        "key": action["key"],
                        "question": question,
                        "outcome": outcome,
                        "must": importance == "must",
                        "importance": importance,
                        "reason": causes.get(action["key"], "")
                        if outcome == "failed"
                        else need.get("what", ""),
                        "owner": need.get("owner_team") or action.get("owner_team", ""),
                        "effort": need.get("effort_days") if outcome == "needs_integration" else "",
                        "evidence": evidence.get(action["key"], 0),
                    },
                )
            )
        elif outcome == "not_covered":
            open_[name].append(
                {"key": action["key"], "question": question, "must": importance == "must"}
            )
    for name, group in groups.items():
        rows = [row for *_rank, row in sorted(found[name], key=lambda f: (f[0], f[1]))]
        group.exceptions = rows[:GROUP_LIMIT]
        rest = rows[GROUP_LIMIT:]
        group.exceptions_more = {
            outcome: sum(r["outcome"] == outcome for r in rest) for outcome in EXCEPTIONS
        }
        # Must-haves first among what nobody tried either.
        waiting = sorted(open_[name], key=lambda r: not r["must"])
        group.not_covered = waiting[:GROUP_LIMIT]
        group.not_covered_more = len(waiting) - len(group.not_covered)
    return list(groups.values())


def _costs_by_slug(snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
    costs = snapshot.get("costs") or {}
    return {c["slug"]: c for c in costs.get("candidates", [])}


def readiness(snapshot: dict[str, Any]) -> list[str]:
    """What the review still lacks at this revision, in words (empty when it is ready):
    actions with no result, a required kind of scenario untried, responsibility areas nobody
    holds, costs that are incomplete or absent or rest on lines still to be confirmed, open "to
    be confirmed" items."""
    gaps: list[str] = []
    for c in snapshot["candidates"]:
        untried = c.get("untried", 0)
        if untried:
            gaps.append(
                ngettext(
                    "%(name)s: %(n)s action has no result",
                    "%(name)s: %(n)s actions have no result",
                    untried,
                )
                % {"name": _name(c), "n": untried}
            )
    coverage = snapshot.get("scenario_coverage") or {}
    for row in coverage.get("candidates", []):
        missing = [
            label
            for label, cell in zip(coverage.get("scenarios", []), row["cells"], strict=False)
            if not cell["covered"]
        ]
        if missing:
            gaps.append(
                _("%(name)s: no result for %(kinds)s")
                % {"name": row["name"], "kinds": ", ".join(missing)}
            )
    for c in snapshot["candidates"]:
        if c.get("gaps"):
            gaps.append(
                ngettext(
                    "%(name)s: %(n)s responsibility area unassigned",
                    "%(name)s: %(n)s responsibility areas unassigned",
                    len(c["gaps"]),
                )
                % {"name": _name(c), "n": len(c["gaps"])}
            )
    costs = snapshot.get("costs")
    if "costs" in snapshot and costs is None:
        gaps.append(_("No cost model: the total cost of the candidates is unknown"))
    for c in (costs or {}).get("candidates", []):
        if c.get("missing"):
            gaps.append(
                _("%(name)s: cost incomplete (%(what)s)")
                % {"name": c["candidate"], "what": "; ".join(c["missing"])}
            )
        waiting = (c.get("unconfirmed") or [0])[0]
        if waiting:
            gaps.append(
                ngettext(
                    "%(name)s: %(n)s cost line still to be confirmed",
                    "%(name)s: %(n)s cost lines still to be confirmed",
                    waiting,
                )
                % {"name": c["candidate"], "n": waiting}
            )
    open_items = len(snapshot.get("to_confirm") or [])
    if open_items:
        gaps.append(
            ngettext(
                "%(n)s item still to be confirmed",
                "%(n)s items still to be confirmed",
                open_items,
            )
            % {"n": open_items}
        )
    return gaps


def decision_context(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The decision document's tables, from the frozen data."""
    costs = _costs_by_slug(snapshot)
    to_confirm = snapshot.get("to_confirm") or []
    columns = {slug: i for i, slug in enumerate(snapshot["matrix"]["columns"])}
    cards = []
    for c in snapshot["candidates"]:
        groups = _groups(snapshot, columns[c["slug"]], c) if c["slug"] in columns else []
        must = {o: sum(g.must.get(o, 0) for g in groups) for o in OUTCOME_ORDER}
        failed_musts = [e for g in groups for e in g.exceptions if e["must"]]
        failed_musts = [e for e in failed_musts if e["outcome"] == "failed"]
        cards.append(
            {
                "slug": c["slug"],
                "name": _name(c),
                "tier": c.get("tier_label", ""),
                "counts": c["counts"],
                "untried": c.get("untried", 0),
                "must": must,
                "must_total": sum(must.values()),
                "failed_musts": failed_musts,
                "groups": groups,
                "cost": costs.get(c["slug"]),
                "open_items": sum(_concerns(item, c) for item in to_confirm),
                "gaps": c.get("gaps", []),
                "integration_days": c.get("integration_total_days", "0"),
            }
        )
    # A candidate with a failed must-have reads first on the first page.
    gate_order = sorted(cards, key=lambda card: (card["must"].get("failed", 0) == 0,))
    return {
        "cards": cards,
        "stated_terms": stated_terms(snapshot),
        "open_items": open_items(snapshot),
        "gate_order": gate_order,
        "readiness_gaps": readiness(snapshot),
        "risks": risk_register(snapshot, cards),
        "group_limit": GROUP_LIMIT,
        "nobody_shown": NOBODY_SHOWN,
        "areas": _area_table(snapshot),
        "cost_charts": frozen_charts(snapshot.get("costs")),
    }


def stated_terms(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """Per candidate, the terms someone has stated (a value, or a basis other than "to be
    confirmed"); how many are not stated yet (those are in the open list)."""
    out = []
    for c in snapshot["candidates"]:
        groups, unstated = [], 0
        for group in c.get("terms") or []:
            rows = [r for r in group["rows"] if r.get("value") or r.get("basis") != "tbc"]
            unstated += len(group["rows"]) - len(rows)
            if rows:
                groups.append({"label": group["label"], "rows": rows})
        if groups or unstated:
            out.append({"name": _name(c), "terms": groups, "unstated": unstated})
    return out


def open_items(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The open "to be confirmed" list, short: items someone chases or has stated a value for
    as rows; per candidate, the names of the others (asked of nobody yet) in one line."""
    chased: list[dict[str, Any]] = []
    waiting: dict[str, list[str]] = {}
    for item in snapshot.get("to_confirm") or []:
        if item.get("owner") or item.get("due") or item.get("request") or item.get("value"):
            chased.append(item)
        else:
            waiting.setdefault(item["candidate"], []).append(item["term"])
    return {
        "chased": chased,
        "waiting": [{"candidate": name, "terms": terms} for name, terms in waiting.items()],
    }


def _concerns(item: dict[str, Any], candidate: dict[str, Any]) -> bool:
    """Whether a "to be confirmed" item is the candidate's (revisions frozen before items
    named their candidate's key name its product)."""
    if "slug" in item:
        return bool(item["slug"] == candidate["slug"])
    return bool(item["candidate"] == candidate["solution"])


def risk_register(snapshot: dict[str, Any], cards: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The open risks and conditions, each with who owns it: the recommendation's conditions,
    failed must-haves, integration work, responsibility areas nobody holds and terms still to
    be confirmed, for the recommended candidates (every candidate when none is recommended)."""
    recommended = set(snapshot.get("recommendation", {}).get("candidates") or [])
    shown = [c for c in cards if c["name"] in recommended] or cards
    risks: list[dict[str, str]] = []
    conditions = (snapshot.get("recommendation") or {}).get("conditions") or ""
    if conditions:
        risks.append(
            {
                "candidate": ", ".join(sorted(recommended)) or "—",
                "risk": _("Condition of the recommendation"),
                "detail": conditions,
                "owner": _("the project's admins"),
            }
        )
    for card in shown:
        for item in card["failed_musts"][:RISKS_PER_KIND]:
            risks.append(
                {
                    "candidate": card["name"],
                    "risk": _("Must-have failed"),
                    "detail": f"{item['question']}: {item['reason']}".strip(": "),
                    "owner": item["owner"],
                }
            )
        more = card["must"].get("failed", 0) - min(len(card["failed_musts"]), RISKS_PER_KIND)
        if more > 0:
            risks.append(
                {
                    "candidate": card["name"],
                    "risk": _("Must-have failed"),
                    "detail": ngettext(
                        "and %(n)s more failed must-have, listed under Exceptions",
                        "and %(n)s more failed must-haves, listed under Exceptions",
                        more,
                    )
                    % {"n": more},
                    "owner": "—",
                }
            )
        days = _decimal(card["integration_days"])
        if days:
            risks.append(
                {
                    "candidate": card["name"],
                    "risk": _("Integration work"),
                    "detail": _("%(days)s person-days of integration") % {"days": days},
                    "owner": ", ".join(_integration_owners(snapshot, card["slug"])) or "—",
                }
            )
        if card["gaps"]:
            risks.append(
                {
                    "candidate": card["name"],
                    "risk": _("Nobody is responsible"),
                    "detail": ", ".join(card["gaps"]),
                    "owner": _("unassigned"),
                }
            )
    by_slug = {c["slug"]: c for c in snapshot["candidates"]}
    for card in shown:
        items = [i for i in snapshot.get("to_confirm") or [] if _concerns(i, by_slug[card["slug"]])]
        if items:
            owners = sorted({i["owner"] for i in items if i.get("owner")})
            risks.append(
                {
                    "candidate": card["name"],
                    "risk": _("To be confirmed"),
                    "detail": ngettext(
                        "%(n)s term not confirmed: not part of the support promise or the cost",
                        "%(n)s terms not confirmed: not part of the support promise or the cost",
                        len(items),
                    )
                    % {"n": len(items)},
                    "owner": ", ".join(owners) or _("unassigned"),
                }
            )
    return risks


def _integration_owners(snapshot: dict[str, Any], slug: str) -> list[str]:
    for c in snapshot["candidates"]:
        if c["slug"] == slug:
            return sorted({e["team"] for e in c.get("effort_by_team", [])})
    return []


def _area_table(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Responsibility areas down, candidates across: who holds each, or a gap."""
    areas: list[str] = []
    cells: dict[tuple[str, str], str] = {}
    for c in snapshot["candidates"]:
        for r in c.get("responsibilities", []):
            if r["area"] not in areas:
                areas.append(r["area"])
            cells[(r["area"], c["slug"])] = " · ".join(p for p in (r["party"], r["person"]) if p)
        for gap in c.get("gaps", []):
            if gap not in areas:
                areas.append(gap)
    return {
        "candidates": [_name(c) for c in snapshot["candidates"]],
        "rows": [
            {"area": area, "cells": [cells.get((area, c["slug"])) for c in snapshot["candidates"]]}
            for area in areas
        ],
    }
