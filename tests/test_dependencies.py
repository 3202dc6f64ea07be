"""Dependencies run one way: reports -> poc -> evaluations -> workbench. An app may import the
ones to its right, never one to its left (function-level imports included). The root URLconf
mounts each app by dotted name, so it imports none of them."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("workbench", "evaluations", "poc", "reports")  # each may use those before it


def imports_of(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def violations(root: Path = ROOT) -> list[str]:
    rank = {app: n for n, app in enumerate(LAYERS)}
    out = []
    for app in LAYERS:
        for path in sorted((root / app).rglob("*.py")):
            for line, module in imports_of(path):
                target = module.split(".")[0]
                if target in rank and rank[target] > rank[app]:
                    out.append(f"{path.relative_to(root)}:{line} imports {module}")
    return out


def test_no_app_imports_one_that_builds_on_it() -> None:
    assert violations() == []


def test_the_check_finds_an_upward_import(tmp_path: Path) -> None:
    # The walk itself: a poc module importing reports, even inside a function, is caught;
    # reports importing poc and evaluations is the allowed direction.
    for app in LAYERS:
        (tmp_path / app).mkdir()
    (tmp_path / "poc" / "x.py").write_text("def f():\n    from reports import api\n")
    (tmp_path / "reports" / "y.py").write_text("import poc.models\nfrom evaluations import x\n")
    assert violations(tmp_path) == ["poc/x.py:2 imports reports"]
