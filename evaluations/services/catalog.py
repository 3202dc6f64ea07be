"""Loading the bundled catalog into the database, and the teams' own catalog entries."""

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from evaluations.catalog import SOLUTION_TEXT_FIELDS
from evaluations.models import (
    Solution,
    SolutionKind,
    TemplateAction,
    TemplateRequirement,
    TemplateSet,
)
from workbench.text import first_free
from workbench.typing import JSON, JSONObject

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SeedReport:
    created: int
    updated: int
    unchanged: int


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
    for name in SOLUTION_TEXT_FIELDS:
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


TEAM_ENTRY_POSITION = 10_000  # after the shipped entries


def _team_entry_values(
    *, kind: str, route: Solution | None, vendor: str, texts: dict[str, str]
) -> dict[str, object]:
    problems: dict[str, str] = {}
    if kind not in SolutionKind.values:
        problems["kind"] = _("Choose a route or a product.")
    if kind == SolutionKind.PRODUCT and route is None:
        problems["route"] = _("A product belongs to a route: choose one.")
    if kind == SolutionKind.ROUTE and route is not None:
        problems["route"] = _("A route belongs to no other route.")
    if route is not None and route.kind != SolutionKind.ROUTE:
        problems["route"] = _("Choose a route.")
    values: dict[str, object] = {"kind": kind, "route": route, "vendor": vendor.strip()}
    for name in SOLUTION_TEXT_FIELDS:
        english = texts.get(f"{name}_en", "").strip()
        chinese = texts.get(f"{name}_zh", "").strip()
        # Both languages or neither: every reader sees the entry in their own.
        if bool(english) != bool(chinese) or (name == "name" and not english):
            missing = f"{name}_zh" if english else f"{name}_en"
            problems[missing] = _("Give this text in both English and Chinese.")
        values[f"{name}_en"], values[f"{name}_zh"] = english, chinese
    if problems:
        raise ValidationError(problems)
    return values


@transaction.atomic
def team_solution_add(
    *, kind: str, route: Solution | None, vendor: str, texts: dict[str, str], actor: User
) -> Solution:
    """A team's own catalog entry (a route, or a product on a route), in both languages. Its
    key is `team-` and its English name, made unique."""
    values = _team_entry_values(kind=kind, route=route, vendor=vendor, texts=texts)
    base = Solution.TEAM_KEY_PREFIX + (slugify(str(values["name_en"]))[:50] or "entry")
    taken = set(Solution.objects.filter(key__startswith=base).values_list("key", flat=True))
    solution = Solution(
        key=first_free(base, taken),
        position=TEAM_ENTRY_POSITION,
        added_by=actor,
        added_at=timezone.now(),
        **values,
    )
    solution.full_clean()
    solution.save()
    log.info("catalog: %s added %s", actor.get_username(), solution.key)
    return solution


@transaction.atomic
def team_solution_update(
    *, solution: Solution, route: Solution | None, vendor: str, texts: dict[str, str], actor: User
) -> Solution:
    """Change a team's entry: its author or staff only; the shipped entries change only through
    the catalog files."""
    solution = Solution.objects.select_for_update().get(pk=solution.pk)
    if not solution.is_team_entry:
        raise PermissionDenied(_("The shipped catalog changes only with the product."))
    if not (actor.is_staff or solution.added_by_id == actor.pk):
        raise PermissionDenied(_("Only whoever added this entry, or staff, may change it."))
    values = _team_entry_values(kind=solution.kind, route=route, vendor=vendor, texts=texts)
    for name, value in values.items():
        setattr(solution, name, value)
    solution.full_clean()
    solution.save()
    log.info("catalog: %s changed %s", actor.get_username(), solution.key)
    return solution
