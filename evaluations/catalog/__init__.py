"""The bilingual catalog files shipped with the workbench, read and checked before loading."""

import re
from pathlib import Path
from typing import Any

import yaml

CATALOG_DIR = Path(__file__).resolve().parent
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LANGUAGES = ("en", "zh-hans")
# The texts of a catalog entry, each kept in English and Chinese (`*_en`, `*_zh` on the rows).
SOLUTION_TEXT_FIELDS = (
    "name",
    "summary",
    "scale",
    "integration_cost",
    "operations_owner",
    "not_suitable_when",
    "must_test",
)


# libyaml's loader where PyYAML was built with it (its wheels are): the same documents, about ten
# times faster to read than the pure-Python loader (templates.yaml: 104 ms -> 10 ms).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CatalogError(Exception):
    """A catalog file does not have the expected shape; the message names the entry."""


def read_yaml(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.load(handle, Loader=_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path.name}: {exc}") from exc


def _check_bilingual(where: str, field: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise CatalogError(f"{where}: {field} must map en and zh-hans to text")
    for language in LANGUAGES:
        text = value.get(language)
        if not text or not (isinstance(text, str | list)):
            raise CatalogError(f"{where}: {field} has no {language} text")


def load_solutions(path: Path | None = None) -> list[dict[str, Any]]:
    """The solution entries, checked: routes and products, every text in both languages."""
    path = path or CATALOG_DIR / "solutions.yaml"
    entries = read_yaml(path)
    if not isinstance(entries, list) or not entries:
        raise CatalogError(f"{path.name}: expected a list of solutions")
    keys = set()
    route_keys = {e.get("key") for e in entries if isinstance(e, dict) and e.get("kind") == "route"}
    for index, entry in enumerate(entries, start=1):
        where = f"{path.name} entry {index}"
        if not isinstance(entry, dict) or not entry.get("key"):
            raise CatalogError(f"{where}: needs a key")
        where = f"{where} ({entry['key']})"
        if entry["key"] in keys:
            raise CatalogError(f"{where}: duplicate key")
        if str(entry["key"]).startswith("team-"):
            raise CatalogError(f"{where}: keys starting 'team-' are for the teams' own entries")
        keys.add(entry["key"])
        if entry.get("kind") not in ("route", "product"):
            raise CatalogError(f"{where}: kind must be route or product")
        if entry["kind"] == "product" and entry.get("route") not in route_keys:
            raise CatalogError(f"{where}: route {entry.get('route')!r} is not a route key")
        for field in SOLUTION_TEXT_FIELDS:
            _check_bilingual(where, field, entry.get(field))
    return entries


TEMPLATE_SET_KINDS = (
    "worked-rewrite",
    "route-must-test",
    "controlled-failure",
    "integration",
    "gpu-evidence",
)


def load_templates(path: Path | None = None) -> list[dict[str, Any]]:
    """The acceptance-action template sets, checked: keys unique, enums known, both languages."""
    from evaluations.models import Dimension, Importance, Scenario, TeamRole

    path = path or CATALOG_DIR / "templates.yaml"
    data = read_yaml(path)
    sets = data.get("sets") if isinstance(data, dict) else None
    if not isinstance(sets, list) or not sets:
        raise CatalogError(f"{path.name}: expected a mapping with a list under 'sets'")
    seen: dict[str, set[str]] = {"set": set(), "requirement": set(), "action": set()}

    def unique(where: str, key: Any, kind: str) -> None:
        if not isinstance(key, str) or not SLUG_RE.match(key):
            raise CatalogError(f"{where}: key {key!r} is not a lowercase slug")
        if key in seen[kind]:
            raise CatalogError(f"{where}: {kind} key {key!r} is used twice")
        seen[kind].add(key)

    def choice(where: str, field: str, value: Any, allowed: list[str]) -> None:
        if value not in allowed:
            raise CatalogError(f"{where}: {field} {value!r} is not one of {', '.join(allowed)}")

    for s_index, template_set in enumerate(sets, start=1):
        where = f"{path.name} set {s_index}"
        unique(where, template_set.get("key"), "set")
        where = f"{where} ({template_set['key']})"
        choice(where, "kind", template_set.get("kind"), list(TEMPLATE_SET_KINDS))
        for field in ("name", "description"):
            _check_bilingual(where, field, template_set.get(field))
        for r_index, requirement in enumerate(template_set.get("requirements") or [], start=1):
            r_where = f"{where} requirement {r_index}"
            unique(r_where, requirement.get("key"), "requirement")
            _check_bilingual(r_where, "feature", requirement.get("feature"))
            choice(r_where, "dimension", requirement.get("dimension"), Dimension.values)
            owners = [v for v in TeamRole.values if v != TeamRole.OBSERVER]
            choice(r_where, "owner_team", requirement.get("owner_team"), owners)
            choice(r_where, "importance", requirement.get("importance"), Importance.values)
            for a_index, action in enumerate(requirement.get("actions") or [], start=1):
                a_where = f"{r_where} action {a_index}"
                unique(a_where, action.get("key"), "action")
                choice(a_where, "scenario", action.get("scenario"), Scenario.values)
                for field in ("question", "steps", "evidence", "pass_criterion"):
                    _check_bilingual(a_where, field, action.get(field))
                _check_probe_check(a_where, action.get("probe_check"))
    return sets


def _check_probe_check(where: str, value: Any) -> None:
    """A template's default probe check has a shape only here: which checks exist and which
    parameters they take is the PoC app's catalogue, and its tests read this file."""
    if value is None:
        return
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("check"), str)
        or not isinstance(value.get("params", {}), dict)
        or set(value) - {"check", "params"}
    ):
        raise CatalogError(f"{where}: probe_check must be {{check: KEY, params: {{...}}}}")
