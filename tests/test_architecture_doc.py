"""docs/architecture.md is the newcomer's map: every file, folder and module it names exists, so
that any behaviour is one hop from it."""

import importlib
import re
from pathlib import Path

from django.apps import apps

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
TOP = ("workbench", "evaluations", "poc", "reports", "tests", "docs", "bench", "deploy", "static")
_CODE = re.compile(r"`([^`\s]+)`")


def named_paths(text: str) -> list[str]:
    return sorted(
        {
            name.rstrip(",.;:")
            for name in _CODE.findall(text)
            if "/" in name and name.split("/", 1)[0] in TOP and "*" not in name and "<" not in name
        }
    )


def named_modules(text: str) -> list[str]:
    """Dotted names that start with an app: modules, or a module's attribute."""
    return sorted(
        {
            name.split("(", 1)[0].rstrip(",.;:")
            for name in _CODE.findall(text)
            if re.fullmatch(r"(workbench|evaluations|poc|reports)(\.\w+)+(\(\))?", name)
        }
    )


def resolves(dotted: str) -> bool:
    """A module, a module's attribute, a model label (`poc.Result`), a migration (`poc.0007`)
    or a system check id (`evaluations.E104`, which the app's checks must register)."""
    parts = dotted.split(".")
    if len(parts) == 2 and re.fullmatch(r"[A-Z][A-Za-z]+", parts[1]):
        return any(
            model.__name__ == parts[1] for model in apps.get_app_config(parts[0]).get_models()
        )
    if len(parts) == 2 and re.fullmatch(r"\d{4}", parts[1]):
        return any((ROOT / parts[0] / "migrations").glob(f"{parts[1]}_*.py"))
    if len(parts) == 2 and re.fullmatch(r"[EW]\d{3}", parts[1]):
        return any(dotted in path.read_text() for path in (ROOT / parts[0]).rglob("*.py"))
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_every_path_the_map_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    paths = named_paths(text)
    assert len(paths) > 20
    assert [p for p in paths if not (ROOT / p.split("::")[0]).exists()] == []


def test_every_module_the_map_names_imports() -> None:
    text = DOC.read_text(encoding="utf-8")
    modules = named_modules(text)
    assert len(modules) > 20
    assert [m for m in modules if not resolves(m)] == []


def test_the_map_check_finds_a_missing_name() -> None:
    text = "See `poc/nowhere.py`, `poc/probes/services/clusters/` and `poc.selectors.nothing_here`."
    assert named_paths(text) == ["poc/nowhere.py", "poc/probes/services/clusters/"]
    assert not (ROOT / "poc/nowhere.py").exists()
    assert not resolves("poc.selectors.nothing_here")
    assert resolves("poc.selectors.matrix.MATRIX_ROWS_PER_PAGE")
    assert resolves("poc.ResultCell") and not resolves("poc.ResultRow")
    assert resolves("poc.0007") and not resolves("poc.0999")
    assert resolves("evaluations.E104") and not resolves("evaluations.E999")
