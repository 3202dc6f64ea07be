"""Modules a newcomer can read: no app module over 600 lines (migrations and the node agent, a
standard-library file people copy to a node, excepted) and no view over 40 lines."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("workbench", "evaluations", "poc", "reports")
MODULE_LINES = 600
VIEW_LINES = 40
EXEMPT = {"poc/probes/node/agent.py"}


def app_modules(root: Path = ROOT) -> list[Path]:
    return [
        path
        for app in APPS
        for path in sorted((root / app).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def is_view_module(relative: Path) -> bool:
    """Views and API endpoints: modules named views, or inside a views or api package."""
    return relative.stem == "views" or bool({"views", "api"} & set(relative.parts[:-1]))


def module_sizes(root: Path = ROOT) -> dict[str, int]:
    sizes = {}
    for path in app_modules(root):
        name = path.relative_to(root).as_posix()
        if name not in EXEMPT:
            sizes[name] = len(path.read_text(encoding="utf-8").splitlines())
    return sizes


def view_sizes(root: Path = ROOT) -> dict[str, int]:
    """Every function and method of the view modules, decorators included."""
    sizes = {}
    for path in app_modules(root):
        relative = path.relative_to(root)
        if not is_view_module(relative):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                sizes[f"{relative.as_posix()}:{node.name}"] = node.end_lineno - first + 1
    return sizes


def over_the_limit(sizes: dict[str, int], limit: int) -> list[str]:
    return [
        f"{name}: {size} lines, over {limit}"
        for name, size in sorted(sizes.items())
        if size > limit
    ]


def test_no_app_module_is_over_600_lines() -> None:
    assert over_the_limit(module_sizes(), MODULE_LINES) == []


def test_no_view_is_over_40_lines() -> None:
    assert over_the_limit(view_sizes(), VIEW_LINES) == []


def test_the_limits_find_what_they_should(tmp_path: Path) -> None:
    for app in APPS:
        (tmp_path / app).mkdir()
    (tmp_path / "poc" / "big.py").write_text("x = 1\n" * 601)
    (tmp_path / "poc" / "migrations").mkdir()
    (tmp_path / "poc" / "migrations" / "0001_initial.py").write_text("x = 1\n" * 900)
    (tmp_path / "poc" / "api").mkdir()
    long_view = "@decorated\ndef long_view(request):\n" + "    x = 1\n" * 39
    (tmp_path / "poc" / "api" / "things.py").write_text(long_view)
    (tmp_path / "reports" / "views.py").write_text("def short(request):\n    return 1\n")
    (tmp_path / "reports" / "services.py").write_text(long_view)  # not a view module
    assert over_the_limit(module_sizes(tmp_path), MODULE_LINES) == [
        "poc/big.py: 601 lines, over 600"
    ]
    assert over_the_limit(view_sizes(tmp_path), VIEW_LINES) == [
        "poc/api/things.py:long_view: 41 lines, over 40"
    ]
