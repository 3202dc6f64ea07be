"""Loading the bundled catalog into the database."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from evaluations.models import (
    Solution,
    TemplateAction,
    TemplateRequirement,
    TemplateSet,
)


@dataclass(frozen=True)
class SeedReport:
    created: int
    updated: int
    unchanged: int


CATALOG_TEXT_FIELDS = (
    "name",
    "summary",
    "scale",
    "integration_cost",
    "operations_owner",
    "not_suitable_when",
    "must_test",
)


def _solution_values(entry: dict[str, Any], position: int) -> dict[str, Any]:
    values: dict[str, Any] = {
        "kind": entry["kind"],
        "vendor": entry.get("vendor") or "",
        "position": position,
    }
    for name in CATALOG_TEXT_FIELDS:
        texts = entry[name]
        for language, suffix in (("en", "en"), ("zh-hans", "zh")):
            text = texts[language]
            values[f"{name}_{suffix}"] = "\n".join(text) if isinstance(text, list) else text
    return values


@transaction.atomic
def catalog_seed(*, entries: Iterable[dict[str, Any]]) -> SeedReport:
    """Create or update catalog solutions by key; running it twice changes nothing."""
    created = updated = unchanged = 0
    entries = list(entries)
    by_key: dict[str, Solution] = {s.key: s for s in Solution.objects.all()}
    # Routes first so products can point at them.
    ordered = sorted(entries, key=lambda e: 0 if e["kind"] == "route" else 1)
    for position, entry in enumerate(ordered):
        values = _solution_values(entry, position)
        route_key = entry.get("route")
        values["route"] = by_key[route_key] if route_key else None
        solution = by_key.get(entry["key"])
        if solution is None:
            solution = Solution(key=entry["key"], **values)
            solution.full_clean()
            solution.save()
            by_key[solution.key] = solution
            created += 1
            continue
        changed = [k for k, v in values.items() if getattr(solution, k) != v]
        if not changed:
            unchanged += 1
            continue
        for key in changed:
            setattr(solution, key, values[key])
        solution.full_clean()
        solution.save()
        updated += 1
    return SeedReport(created=created, updated=updated, unchanged=unchanged)


def _bilingual(values: dict[str, Any], name: str, texts: dict[str, str], column: str = "") -> None:
    column = column or name
    values[f"{column}_en"] = texts["en"].strip()
    values[f"{column}_zh"] = texts["zh-hans"].strip()


def _upsert(
    model: Any, existing: dict[str, Any], key: str, values: dict[str, Any]
) -> tuple[Any, str]:
    row = existing.get(key)
    if row is None:
        row = model(key=key, **values)
        row.full_clean()
        row.save()
        return row, "created"
    changed = [name for name, value in values.items() if getattr(row, name) != value]
    if not changed:
        return row, "unchanged"
    for name in changed:
        setattr(row, name, values[name])
    row.full_clean()
    row.save()
    return row, "updated"


@transaction.atomic
def template_catalog_seed(*, sets: Iterable[dict[str, Any]]) -> SeedReport:
    """Create or update the acceptance-action template library by key (idempotent).

    Template rows that left the file are removed; projects keep the copies they applied.
    """
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    routes = {s.key: s for s in Solution.objects.filter(kind="route")}
    set_rows = {s.key: s for s in TemplateSet.objects.all()}
    requirement_rows = {r.key: r for r in TemplateRequirement.objects.all()}
    action_rows = {a.key: a for a in TemplateAction.objects.all()}
    seen: dict[str, set[str]] = {"set": set(), "requirement": set(), "action": set()}
    for s_pos, entry in enumerate(sets):
        values: dict[str, Any] = {
            "kind": entry["kind"],
            "route": routes.get(entry.get("route") or ""),
            "position": s_pos,
        }
        _bilingual(values, "name", entry["name"])
        _bilingual(values, "description", entry["description"])
        set_row, outcome = _upsert(TemplateSet, set_rows, entry["key"], values)
        counts[outcome] += 1
        seen["set"].add(set_row.key)
        for r_pos, requirement in enumerate(entry.get("requirements") or []):
            values = {
                "template_set": set_row,
                "dimension": requirement["dimension"],
                "owner_team": requirement["owner_team"],
                "importance": requirement["importance"],
                "position": r_pos,
            }
            _bilingual(values, "feature", requirement["feature"])
            requirement_row, outcome = _upsert(
                TemplateRequirement, requirement_rows, requirement["key"], values
            )
            counts[outcome] += 1
            seen["requirement"].add(requirement_row.key)
            for a_pos, action in enumerate(requirement.get("actions") or []):
                values = {
                    "requirement": requirement_row,
                    "scenario": action["scenario"],
                    "probe_check": action.get("probe_check") or {},
                    "position": a_pos,
                }
                for name in ("question", "steps", "evidence", "pass_criterion"):
                    _bilingual(values, name, action[name])
                action_row, outcome = _upsert(TemplateAction, action_rows, action["key"], values)
                counts[outcome] += 1
                seen["action"].add(action_row.key)
    TemplateAction.objects.exclude(key__in=seen["action"]).delete()
    TemplateRequirement.objects.exclude(key__in=seen["requirement"]).delete()
    TemplateSet.objects.exclude(key__in=seen["set"]).delete()
    return SeedReport(**counts)
