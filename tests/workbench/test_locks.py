"""Every dependency declared in pyproject.toml is pinned in the lock files that installs use."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _pins(lock: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / lock).read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def _declared(requirements: list[str]) -> dict[str, str]:
    out = {}
    for requirement in requirements:
        name, version = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(.+)$", requirement).groups()
        out[name.lower().replace("_", "-")] = version
    return out


def test_runtime_lock_pins_every_declared_dependency() -> None:
    pins = _pins("requirements.lock")
    for name, version in _declared(PYPROJECT["project"]["dependencies"]).items():
        assert pins.get(name) == version, f"{name}=={version} is not in requirements.lock"


def test_dev_lock_pins_runtime_and_dev_dependencies() -> None:
    pins = _pins("requirements-dev.lock")
    declared = {
        **_declared(PYPROJECT["project"]["dependencies"]),
        **_declared(PYPROJECT["project"]["optional-dependencies"]["dev"]),
    }
    for name, version in declared.items():
        assert pins.get(name) == version, f"{name}=={version} is not in requirements-dev.lock"


def test_each_extra_has_a_lock_pinning_it_beside_the_default_lock() -> None:
    runtime = _pins("requirements.lock")
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        if extra == "dev":
            continue
        pins = _pins(f"requirements-{extra}.lock")
        for name, version in _declared(requirements).items():
            assert pins.get(name) == version, f"{name}=={version} not in requirements-{extra}.lock"
            # What `make run` installs leaves the extra out.
            assert name not in runtime and name not in _pins("requirements-dev.lock")
        # The same versions of everything else, so that an extra installs over the default.
        assert {n: v for n, v in pins.items() if n in runtime} == runtime
