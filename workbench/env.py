"""Typed readers for environment variables that fail loudly on a bad value.

Every setting of the workbench comes from the environment; a typo must stop start-up with a
message naming the variable, never fall back silently to a default.
"""

import os
from pathlib import Path

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


class ImproperEnvironment(Exception):
    """An environment variable holds a value the workbench cannot use."""


def env_str(name: str, default: str = "") -> str:
    """A string variable; `NAME_FILE` (a path) wins over `NAME`, for secrets kept in files."""
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperEnvironment(f"{name}_FILE={file_path!r} cannot be read: {exc}") from exc
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ImproperEnvironment(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperEnvironment(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperEnvironment(f"{name}={value} is below the minimum of {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).strip().lower()
    if value not in choices:
        raise ImproperEnvironment(f"{name}={value!r} must be one of: {', '.join(choices)}")
    return value


def variables_set(prefix: str) -> list[str]:
    """The variables whose name starts with `prefix` and whose value is not blank, sorted."""
    return sorted(
        name for name, value in os.environ.items() if name.startswith(prefix) and value.strip()
    )
