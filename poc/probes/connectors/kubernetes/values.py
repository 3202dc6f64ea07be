"""Reading values out of API objects: nested keys, Kubernetes quantities, booleans, one-line
texts; the GPU resource names."""

import re
from decimal import Decimal, InvalidOperation
from typing import Any

GPU = "nvidia.com/gpu"
DEFAULT_OPERATOR_NAMESPACE = "gpu-operator"


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


_QUANTITY = re.compile(
    r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][-+]?\d{1,3})|([a-zA-Z]{0,2}))\s*"
)
_SUFFIXES: dict[str, Decimal] = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}


def as_int(value: Any) -> int | None:
    """A whole number from a label or a Kubernetes quantity ("2", "2k", "1Ki", "1000m", "1e3");
    None when it is not one (a fraction such as "500m" included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or len(value) > 64:
        return None
    match = _QUANTITY.fullmatch(value)
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    factor = _SUFFIXES.get(suffix or "")
    if factor is None:
        return None
    try:
        amount = Decimal(number + (exponent or "")) * factor
    except (InvalidOperation, ValueError):
        return None
    if amount != amount.to_integral_value() or abs(amount) > 2**63:
        return None
    return int(amount)


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None
