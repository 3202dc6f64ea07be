"""What changed between two frozen revisions: the list signers read before deciding on a new
revision ("what is different from the one we rejected?")."""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from poc.models import (
    Outcome,
)
from reports.procurement.models import Support
from reports.procurement.terms import FORMER_FIELDS

# Shown at most; a revision rebuilt from scratch can differ in thousands of cells.
LIMIT = 200
Named = Callable[[str], str]  # a candidate's key to the name the sheet gives it

FRAMING = {
    "name": gettext_lazy("Name"),
    "description": gettext_lazy("Description"),
    "workloads": gettext_lazy("Dominant workloads"),
    "existing_base": gettext_lazy("What already runs"),
    "layer_needed": gettext_lazy("Layer needed"),
    "supplier_needs": gettext_lazy("Needed from a supplier"),
}
SHORTLIST = {
    "version": gettext_lazy("Version"),
    "tier_label": gettext_lazy("Tier"),
    "step": gettext_lazy("Decided at step"),
    "reason": gettext_lazy("Reason"),
}
# The free-text fields a revision frozen before terms holds.
BOUNDARY = {
    "license_model": gettext_lazy("License model"),
    "support_terms": gettext_lazy("Support terms"),
    "upgrade_cadence": gettext_lazy("Upgrade cadence"),
    "exit_plan": gettext_lazy("Exit plan"),
}


@dataclass(frozen=True)
class Change:
    section: str
    subject: str
    before: str
    after: str


@dataclass(frozen=True)
class Changes:
    shown: list[Change]
    total: int

    @property
    def more(self) -> int:
        return self.total - len(self.shown)


def snapshot_changes(old: dict[str, Any], new: dict[str, Any]) -> Changes:
    changes: list[Change] = []
    # Candidates are named by product and version, as the sheet names them, never by key.
    names = {
        c["slug"]: f"{c['solution']} {c['version']}".strip() or c["slug"]
        for c in [*old["shortlist"], *new["shortlist"]]
    }

    def named(slug: str) -> str:
        return names.get(slug, slug)

    _framing(old["project"], new["project"], changes)
    _shortlist(old["shortlist"], new["shortlist"], changes, named)
    _matrix(old["matrix"], new["matrix"], changes, named)
    _candidates(old["candidates"], new["candidates"], changes, named)
    _evidence(old["evidence"], new["evidence"], changes, named)
    _costs(old.get("costs"), new.get("costs"), changes, named)
    _cost_inputs(old.get("costs"), new.get("costs"), changes)
    _cost_lines(old.get("costs"), new.get("costs"), changes)
    _compatibility(old.get("compatibility"), new.get("compatibility"), changes, named)
    return Changes(shown=changes[:LIMIT], total=len(changes))


def _text(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def _framing(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    for field, label in FRAMING.items():
        if old.get(field) != new.get(field):
            out.append(
                Change(_("Framing"), str(label), _text(old.get(field)), _text(new.get(field)))
            )


def _shortlist(old: list[dict], new: list[dict], out: list[Change], named: Named) -> None:
    before, after = {c["slug"]: c for c in old}, {c["slug"]: c for c in new}
    section = _("Shortlist")
    for slug in after.keys() - before.keys():
        out.append(
            Change(
                section,
                named(slug),
                "—",
                _("added: %(tier)s") % {"tier": after[slug]["tier_label"]},
            )
        )
    for slug in before.keys() - after.keys():
        out.append(Change(section, named(slug), before[slug]["tier_label"], _("removed")))
    for slug in sorted(before.keys() & after.keys()):
        for field, label in SHORTLIST.items():
            if before[slug].get(field) != after[slug].get(field):
                out.append(
                    Change(
                        section,
                        f"{named(slug)}: {label}",
                        _text(before[slug].get(field)),
                        _text(after[slug].get(field)),
                    )
                )


def _cells(matrix: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {
        (action["key"], column): outcome
        for action, row in zip(matrix["actions"], matrix["rows"], strict=True)
        for column, outcome in zip(matrix["columns"], row, strict=True)
    }


def _matrix(old: dict[str, Any], new: dict[str, Any], out: list[Change], named: Named) -> None:
    section = _("Acceptance actions")
    old_keys = [a["key"] for a in old["actions"]]
    new_keys = [a["key"] for a in new["actions"]]
    for key in new_keys:
        if key not in old_keys:
            out.append(Change(section, key, "—", _("added")))
    for key in old_keys:
        if key not in new_keys:
            out.append(Change(section, key, _("present"), _("removed")))
    before, after = _cells(old), _cells(new)
    labels = dict(Outcome.choices)
    for key in new_keys:
        for column in new["columns"]:
            was, now = before.get((key, column)), after[(key, column)]
            if was is not None and was != now:
                out.append(
                    Change(
                        _("Results"),
                        f"{named(column)} × {key}",
                        str(labels[was]),
                        str(labels[now]),
                    )
                )


def _candidates(old: list[dict], new: list[dict], out: list[Change], named: Named) -> None:
    before = {c["slug"]: c for c in old}
    for candidate in new:
        slug = candidate["slug"]
        name = named(slug)
        was = before.get(slug)
        if was is None:
            continue  # a candidate new to the sheet shows up in the shortlist and results
        causes = {f["action"]: f["cause"] for f in was["failed"]}
        for failure in candidate["failed"]:
            if failure["action"] in causes and causes[failure["action"]] != failure["cause"]:
                out.append(
                    Change(
                        _("Failure causes"),
                        f"{name} × {failure['action']}",
                        causes[failure["action"]],
                        failure["cause"],
                    )
                )
        if Decimal(was["integration_total_days"]) != Decimal(candidate["integration_total_days"]):
            out.append(
                Change(
                    _("Integration effort (person-days)"),
                    name,
                    was["integration_total_days"],
                    candidate["integration_total_days"],
                )
            )
        assigned = {r["area"]: r for r in was["responsibilities"]}
        for area in sorted({r["area"] for r in candidate["responsibilities"]} | set(assigned)):
            now = next((r for r in candidate["responsibilities"] if r["area"] == area), None)
            then = assigned.get(area)
            if now != then:
                out.append(Change(_("Responsibilities"), f"{name}: {area}", _who(then), _who(now)))
        _terms(name, was, candidate, out)


def _term_rows(candidate: dict) -> dict[str, dict]:
    """A candidate's terms by key; a revision frozen before terms had the four boundary texts,
    compared as the notes they became."""
    if "terms" in candidate:
        return {row["key"]: row for group in candidate["terms"] for row in group["rows"]}
    return {
        key: {"key": key, "label": str(BOUNDARY[field]), "value": text, "basis_label": ""}
        for field, key in FORMER_FIELDS.items()
        if (text := candidate.get("boundary", {}).get(field))
    }


def _term_text(row: dict | None) -> str:
    if row is None:
        return "—"
    said = " · ".join(
        part
        for part in (row.get("basis_label"), row.get("reference"), row.get("valid_until"))
        if part
    )
    return f"{_text(row.get('value'))} ({said})" if said else _text(row.get("value"))


def _terms(name: str, was: dict, candidate: dict, out: list[Change]) -> None:
    before, after = _term_rows(was), _term_rows(candidate)
    for key in sorted(before.keys() | after.keys()):
        then, now = before.get(key), after.get(key)
        if _term_text(then) != _term_text(now):
            label = (now or then or {}).get("label", key)
            out.append(Change(_("Terms"), f"{name}: {label}", _term_text(then), _term_text(now)))


def _who(row: dict[str, str] | None) -> str:
    if row is None:
        return _("unassigned")
    return " · ".join(part for part in (row["party"], row["person"], row["escalation"]) if part)


def _costs(old: dict | None, new: dict | None, out: list[Change], named: Named) -> None:
    """Each candidate's total over the horizon (expected, low – high, currency)."""

    def totals(frozen: dict | None) -> dict[str, str]:
        if not frozen:
            return {}
        return {
            c["slug"]: f"{c['total'][1]} ({c['total'][0]} – {c['total'][2]}) {frozen['currency']}"
            + (" · " + "; ".join(c["missing"]) if c["missing"] else "")
            for c in frozen["candidates"]
        }

    before, after = totals(old), totals(new)
    total = _("total")
    for slug in sorted(before.keys() | after.keys()):
        if before.get(slug) != after.get(slug):
            out.append(
                Change(
                    _("Costs"),
                    f"{named(slug)}: {total}",
                    before.get(slug, "—"),
                    after.get(slug, "—"),
                )
            )


def _cost_inputs(old: dict | None, new: dict | None, out: list[Change]) -> None:
    """Each input of the cost model the figures rest on (revisions frozen before inputs were
    frozen compare none)."""
    if not old or not new or "inputs" not in old or "inputs" not in new:
        return
    before, after = dict(old["inputs"]), dict(new["inputs"])
    section = _("Cost model")
    for label in [*after, *(label for label in before if label not in after)]:
        if before.get(label) != after.get(label):
            out.append(Change(section, label, before.get(label, "—"), after.get(label, "—")))


def _line_text(line: dict | None) -> str:
    if line is None:
        return "—"
    return f"{line['figures']} ({line['how']}; {line['basis']})"


def _frozen_lines(frozen: dict) -> dict[tuple[str, str, str, int], tuple[str, dict]] | None:
    """Every frozen cost line by (owner, category, label, place among lines of that name), with
    its owner's name; None for a revision frozen before lines were."""
    owners = [*frozen["candidates"], *([frozen["baseline"]] if frozen.get("baseline") else [])]
    if not all("lines" in owner for owner in owners):
        return None
    found: dict[tuple[str, str, str, int], tuple[str, dict]] = {}
    for owner in owners:
        slug = owner.get("slug", "")
        name = owner.get("candidate") or owner.get("label") or _("baseline")
        seen: dict[tuple[str, str], int] = defaultdict(int)
        for line in owner["lines"]:
            seen[(line["category"], line["label"])] += 1
            place = seen[(line["category"], line["label"])]
            found[(slug, line["category"], line["label"], place)] = (name, line)
    return found


def _cost_lines(old: dict | None, new: dict | None, out: list[Change]) -> None:
    """Each cost line added, removed or changed, per candidate and for the baseline."""
    if not old or not new:
        return
    before, after = _frozen_lines(old), _frozen_lines(new)
    if before is None or after is None:
        return
    section = _("Cost lines")
    for key in [*after, *(key for key in before if key not in after)]:
        then, now = before.get(key), after.get(key)
        was = then[1] if then else None
        is_ = now[1] if now else None
        if was != is_:
            name = now[0] if now else then[0]  # type: ignore[index]
            out.append(Change(section, f"{name}: {key[2]}", _line_text(was), _line_text(is_)))


def _compatibility(old: list | None, new: list | None, out: list[Change], named: Named) -> None:
    """Each combination's strongest status (a new claim that changes nothing is not listed)."""

    def statuses(frozen: list | None) -> dict[tuple[str, str], str]:
        found = {}
        for m in frozen or []:
            for row in m["rows"]:
                parts = " · ".join(
                    row[name]
                    for name in ("gpu_model", "driver", "cuda", "runtime", "platform", "scheduler")
                    if row.get(name)
                )
                found[(m["slug"], parts)] = row["status"]
        return found

    def word(status: str | None) -> str:
        return str(Support(status).label) if status in Support.values else "—"

    before, after = statuses(old), statuses(new)
    for slug, parts in sorted(before.keys() | after.keys()):
        if before.get((slug, parts)) != after.get((slug, parts)):
            out.append(
                Change(
                    _("Support and compatibility"),
                    f"{named(slug)}: {parts}",
                    word(before.get((slug, parts))),
                    word(after.get((slug, parts))),
                )
            )


def _evidence(old: list[dict], new: list[dict], out: list[Change], named: Named) -> None:
    def key(e: dict) -> tuple[str, str, str, str]:
        return (e["candidate"], e["action"], e["name"], e["sha256"] or e["url"])

    before, after = {key(e): e for e in old}, {key(e): e for e in new}
    section = _("Evidence")
    for k in sorted(after.keys() - before.keys()):
        out.append(Change(section, f"{named(k[0])} × {k[1]}", "—", k[2]))
    for k in sorted(before.keys() - after.keys()):
        out.append(Change(section, f"{named(k[0])} × {k[1]}", k[2], _("removed")))
    for k in sorted(before.keys() & after.keys()):
        if bool(before[k].get("superseded")) != bool(after[k].get("superseded")):
            was, now = (
                (k[2], _("superseded")) if after[k].get("superseded") else (_("superseded"), k[2])
            )
            out.append(Change(section, f"{named(k[0])} × {k[1]}", was, now))
