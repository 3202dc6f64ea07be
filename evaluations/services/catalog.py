"""Loading the bundled catalog into the database."""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from evaluations.models import (
    Solution,
    TemplateAction,
    TemplateRequirement,
    TemplateSet,
)
from workbench.typing import JSON, JSONObject


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


# The loaders (evaluations.catalog) checked the files' shapes; these read them typed.


def _str(entry: JSONObject, key: str) -> str:
    value = entry.get(key)
    return value if isinstance(value, str) else ""


def _object(entry: JSONObject, key: str) -> JSONObject:
    value = entry.get(key)
    return value if isinstance(value, dict) else {}


def _objects(entry: JSONObject, key: str) -> list[JSONObject]:
    value = entry.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _lines(value: JSON) -> str:
    """A text, or a list of lines joined."""
    if isinstance(value, list):
        return "\n".join(str(line) for line in value)
    return value if isinstance(value, str) else ""


def _solution_values(entry: JSONObject, position: int) -> dict[str, object]:
    values: dict[str, object] = {
        "kind": _str(entry, "kind"),
        "vendor": _str(entry, "vendor"),
        "position": position,
    }
    for name in CATALOG_TEXT_FIELDS:
        texts = _object(entry, name)
        for language, suffix in (("en", "en"), ("zh-hans", "zh")):
            values[f"{name}_{suffix}"] = _lines(texts.get(language))
    return values


@transaction.atomic
def catalog_seed(*, entries: Iterable[JSONObject]) -> SeedReport:
    """Create or update catalog solutions by key; running it twice changes nothing."""
    created = updated = unchanged = 0
    entries = list(entries)
    by_key: dict[str, Solution] = {s.key: s for s in Solution.objects.all()}
    # Routes first so products can point at them.
    ordered = sorted(entries, key=lambda e: 0 if e.get("kind") == "route" else 1)
    for position, entry in enumerate(ordered):
        values = _solution_values(entry, position)
        route_key = _str(entry, "route")
        values["route"] = by_key[route_key] if route_key else None
        solution = by_key.get(_str(entry, "key"))
        if solution is None:
            solution = Solution(key=_str(entry, "key"), **values)
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


def _bilingual(values: dict[str, object], name: str, texts: JSONObject) -> None:
    values[f"{name}_en"] = _lines(texts.get("en")).strip()
    values[f"{name}_zh"] = _lines(texts.get("zh-hans")).strip()


def _upsert[Row: (TemplateSet, TemplateRequirement, TemplateAction)](
    model: type[Row], existing: dict[str, Row], key: str, values: dict[str, object]
) -> tuple[Row, str]:
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
def template_catalog_seed(*, sets: Iterable[JSONObject]) -> SeedReport:
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
        values: dict[str, object] = {
            "kind": _str(entry, "kind"),
            "route": routes.get(_str(entry, "route")),
            "position": s_pos,
        }
        _bilingual(values, "name", _object(entry, "name"))
        _bilingual(values, "description", _object(entry, "description"))
        set_row, outcome = _upsert(TemplateSet, set_rows, _str(entry, "key"), values)
        counts[outcome] += 1
        seen["set"].add(set_row.key)
        for r_pos, requirement in enumerate(_objects(entry, "requirements")):
            values = {
                "template_set": set_row,
                "dimension": _str(requirement, "dimension"),
                "owner_team": _str(requirement, "owner_team"),
                "importance": _str(requirement, "importance"),
                "position": r_pos,
            }
            _bilingual(values, "feature", _object(requirement, "feature"))
            requirement_row, outcome = _upsert(
                TemplateRequirement, requirement_rows, _str(requirement, "key"), values
            )
            counts[outcome] += 1
            seen["requirement"].add(requirement_row.key)
            for a_pos, action in enumerate(_objects(requirement, "actions")):
                values = {
                    "requirement": requirement_row,
                    "scenario": _str(action, "scenario"),
                    "probe_check": _object(action, "probe_check"),
                    "position": a_pos,
                }
                for name in ("question", "steps", "evidence", "pass_criterion"):
                    _bilingual(values, name, _object(action, name))
                action_row, outcome = _upsert(
                    TemplateAction, action_rows, _str(action, "key"), values
                )
                counts[outcome] += 1
                seen["action"].add(action_row.key)
    TemplateAction.objects.exclude(key__in=seen["action"]).delete()
    TemplateRequirement.objects.exclude(key__in=seen["requirement"]).delete()
    TemplateSet.objects.exclude(key__in=seen["set"]).delete()
    return SeedReport(**counts)
