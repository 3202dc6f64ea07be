"""The bilingual catalog files shipped with the workbench, read and checked before loading."""

from pathlib import Path
from typing import Any

import yaml

CATALOG_DIR = Path(__file__).resolve().parent
LANGUAGES = ("en", "zh-hans")
SOLUTION_TEXT_FIELDS = (
    "name",
    "summary",
    "scale",
    "integration_cost",
    "operations_owner",
    "not_suitable_when",
    "must_test",
)


class CatalogError(Exception):
    """A catalog file does not have the expected shape; the message names the entry."""


def read_yaml(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.safe_load(handle)
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
        keys.add(entry["key"])
        if entry.get("kind") not in ("route", "product"):
            raise CatalogError(f"{where}: kind must be route or product")
        if entry["kind"] == "product" and entry.get("route") not in route_keys:
            raise CatalogError(f"{where}: route {entry.get('route')!r} is not a route key")
        for field in SOLUTION_TEXT_FIELDS:
            _check_bilingual(where, field, entry.get(field))
    return entries
