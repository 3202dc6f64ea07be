"""Reading the shipped catalog files: libyaml's loader (what `evaluations.catalog` uses where
PyYAML has it) side by side with PyYAML's pure-Python loader, on the same files.

The catalog is read when the database is seeded (`manage.py serve --prepare`, `seed_catalog`,
the demo) and by every test that seeds it (about a thousand in `make test`). Target: the
checked read of both files (`load_solutions` and `load_templates`) at least 5x faster than the
pure-Python loader's parse alone. No database needed.
"""

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup  # noqa: E402, F401 (settings)

BEST_OF = 7
TARGET_RATIO = 5.0


def best_ms(call: Callable[[], object]) -> float:
    samples = []
    for _ in range(BEST_OF):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return min(samples) * 1000


def main() -> None:
    import django

    django.setup()
    import yaml

    from evaluations import catalog

    files = [catalog.CATALOG_DIR / "solutions.yaml", catalog.CATALOG_DIR / "templates.yaml"]
    pure_total = ours_total = 0.0
    for path in files:
        text = path.read_text(encoding="utf-8")
        pure = best_ms(lambda text=text: yaml.load(text, Loader=yaml.SafeLoader))  # noqa: S506
        ours = best_ms(lambda path=path: catalog.read_yaml(path))
        same = yaml.load(text, Loader=yaml.SafeLoader) == catalog.read_yaml(path)  # noqa: S506
        pure_total, ours_total = pure_total + pure, ours_total + ours
        print(
            f"{path.name:16} {len(text):7,} chars  pure Python {pure:7.1f} ms  "
            f"read_yaml {ours:6.1f} ms  ratio {pure / ours:5.1f}x  same documents: {same}"
        )
    checked = best_ms(lambda: (catalog.load_solutions(), catalog.load_templates()))
    ratio = pure_total / checked
    print(
        f"load_solutions + load_templates (read and checked) {checked:.1f} ms; "
        f"pure-Python parse alone {pure_total:.1f} ms: {ratio:.1f}x "
        f"(target >= {TARGET_RATIO:.0f}x: {'met' if ratio >= TARGET_RATIO else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
