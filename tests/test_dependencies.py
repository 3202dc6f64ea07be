"""Dependencies run one way: reports -> reports.procurement -> poc -> poc.probes -> evaluations ->
workbench. An app may import the ones to its right, never one to its left (function-level imports
included): GPU evidence (poc.probes, an app nested in poc's folder) knows nothing of the results
built on it, and procurement (nested in reports' folder) nothing of the sheet that prints it.
The root URLconf mounts each app by dotted name, so it imports none of them."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = (
    "workbench",
    "evaluations",
    "poc.probes",
    "poc",
    "reports",
)  # each may use those before it


def app_of(dotted: str) -> str | None:
    """The app a dotted module belongs to: the longest layer that is it or holds it."""
    found = [app for app in LAYERS if dotted == app or dotted.startswith(app + ".")]
    return max(found, key=len) if found else None


def files_of(root: Path, app: str) -> list[Path]:
    """The app's files, without those of an app nested in its folder."""
    return [
        path
        for path in sorted((root / app.replace(".", "/")).rglob("*.py"))
        if app_of(".".join(path.relative_to(root).with_suffix("").parts)) == app
    ]


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
        for path in files_of(root, app):
            for line, module in imports_of(path):
                target = app_of(module)
                if target in rank and rank[target] > rank[app]:
                    out.append(f"{path.relative_to(root)}:{line} imports {module}")
    return out


def test_no_app_imports_one_that_builds_on_it() -> None:
    assert violations() == []


def test_the_check_finds_an_upward_import(tmp_path: Path) -> None:
    # The walk itself: a poc module importing reports, even inside a function, is caught;
    # reports importing poc and evaluations is the allowed direction.
    for app in LAYERS:
        (tmp_path / app.replace(".", "/")).mkdir(parents=True, exist_ok=True)
    (tmp_path / "poc" / "x.py").write_text("def f():\n    from reports import api\n")
    (tmp_path / "reports" / "y.py").write_text("import poc.models\nfrom evaluations import x\n")
    # GPU evidence may not use the results side that builds on it; poc may use GPU evidence.
    (tmp_path / "poc" / "probes" / "z.py").write_text("from poc.services import ingest\n")
    (tmp_path / "poc" / "w.py").write_text("from poc.probes import recording\n")
    assert violations(tmp_path) == [
        "poc/probes/z.py:1 imports poc.services",
        "poc/x.py:2 imports reports",
    ]


# --- module cycles -------------------------------------------------------------------------


def app_modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the apps but their migrations."""
    modules = {}
    for app in LAYERS:
        for path in files_of(root, app):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The app modules `name` imports, at module level or inside a function. `from package
    import submodule` is an import of the submodule; importing a package's submodule is not an
    import of the package's __init__ (Python runs it, but that is no dependency of the code)."""

    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {known(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else known(base))
    return {module for module in found if module and module != name}


def module_cycles(root: Path = ROOT) -> list[list[str]]:
    """Groups of app modules that import each other, directly or around a loop (Tarjan's
    strongly connected components, iteratively)."""
    modules = app_modules(root)
    graph = {name: sorted(imported_modules(name, path, modules)) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in graph:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, edge = work.pop()
            if edge == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if edge < len(graph[node]):
                work.append((node, edge + 1))
                target = graph[node][edge]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(cycles)


def test_no_module_cycle_even_through_imports_inside_functions() -> None:
    assert module_cycles() == []


def test_the_check_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    for app in LAYERS:
        (tmp_path / app.replace(".", "/")).mkdir(parents=True, exist_ok=True)
        (tmp_path / app.replace(".", "/") / "__init__.py").write_text("")
    (tmp_path / "reports" / "services.py").write_text("from reports.models import Sheet\n")
    (tmp_path / "reports" / "models.py").write_text("def f():\n    from . import tasks\n")
    (tmp_path / "reports" / "tasks.py").write_text("from reports import services\n")
    (tmp_path / "reports" / "selectors.py").write_text("from reports.models import Sheet\n")
    # A package importing its own submodules is no cycle.
    (tmp_path / "poc" / "parsers").mkdir()
    (tmp_path / "poc" / "parsers" / "__init__.py").write_text("from poc.parsers.a import x\n")
    (tmp_path / "poc" / "parsers" / "a.py").write_text("from poc.parsers.b import y\n")
    (tmp_path / "poc" / "parsers" / "b.py").write_text("import os\n")
    assert module_cycles(tmp_path) == [["reports.models", "reports.services", "reports.tasks"]]


def private_imports(root: Path = ROOT) -> list[str]:
    """`from module import _name` between the apps' modules: what another module uses is part
    of the module's interface and carries a public name (relative imports included)."""
    modules = app_modules(root)
    out = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            if app_of(base) is None:
                continue  # a library's private name is the library's business
            out += [
                f"{path.relative_to(root)}:{node.lineno} imports {alias.name} from {base}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    return out


def test_no_module_imports_another_ones_private_name() -> None:
    assert private_imports() == []


def test_the_check_finds_a_private_import(tmp_path: Path) -> None:
    for app in LAYERS:
        (tmp_path / app.replace(".", "/")).mkdir(parents=True, exist_ok=True)
        (tmp_path / app.replace(".", "/") / "__init__.py").write_text("")
    (tmp_path / "poc" / "rules.py").write_text("def _helper():\n    pass\n")
    (tmp_path / "poc" / "checks.py").write_text(
        "from django.utils.functional import _StrPromise\n"
        "from poc.rules import _helper\n"
        "def f():\n    from .rules import _helper\n"
    )
    assert private_imports(tmp_path) == [
        "poc/checks.py:2 imports _helper from poc.rules",
        "poc/checks.py:4 imports _helper from poc.rules",
    ]
