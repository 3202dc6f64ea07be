"""Validating a binding's parameters, describing a check, and running one on a
probe run's nodes."""

import math
from typing import Any

from django.utils.translation import gettext as _

from poc.probes.facts import NodeFacts
from poc.probes.rules.checks.base import (
    DEVICE_ID_RE,
    MIG_PROFILE_RE,
    VERSION_RE,
    Check,
    CheckOutcome,
    CheckParamsError,
    Param,
)
from poc.probes.rules.checks.catalogue import CHECKS_BY_KEY
from poc.probes.rules.checks.inventory import mig_profile


def kind_text(param: Param) -> str:
    texts = {
        "int": _("a whole number"),
        "float": _("a number"),
        "bool": _("true or false"),
        "str_list": _("a non-empty list of names"),
        "version": _("a version such as 12.2 or 535.104.05"),
        "mig_profile": _("a MIG profile such as 1g.10gb"),
        "choice": _("one of: %(choices)s") % {"choices": ", ".join(param.choices)},
    }
    return texts[param.kind]


def _wrong_type(param: Param) -> CheckParamsError:
    return CheckParamsError(
        _("Parameter %(name)s must be %(kind)s.") % {"name": param.name, "kind": kind_text(param)},
        param.name,
    )


def _in_bounds(param: Param, value: float) -> None:
    values = {"name": param.name, "minimum": param.minimum, "maximum": param.maximum}
    if param.minimum is not None:
        if param.exclusive_minimum and value <= param.minimum:
            raise CheckParamsError(
                _("Parameter %(name)s must be greater than %(minimum)s.") % values, param.name
            )
        if value < param.minimum:
            raise CheckParamsError(
                _("Parameter %(name)s must be at least %(minimum)s.") % values, param.name
            )
    if param.maximum is not None and value > param.maximum:
        raise CheckParamsError(
            _("Parameter %(name)s must be at most %(maximum)s.") % values, param.name
        )


def _clean(param: Param, value: Any) -> Any:
    if param.kind == "bool":
        if not isinstance(value, bool):
            raise _wrong_type(param)
        return value
    if param.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _wrong_type(param)
        _in_bounds(param, value)
        return value
    if param.kind == "float":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise _wrong_type(param)
        _in_bounds(param, value)
        return float(value)
    if param.kind == "str_list":
        if not isinstance(value, list) or not value or len(value) > param.max_items:
            raise _wrong_type(param)
        cleaned = []
        for item in value:
            if not isinstance(item, str) or not item.strip() or len(item) > 100:
                raise _wrong_type(param)
            item = item.strip()
            cleaned.append(item.lower() if DEVICE_ID_RE.fullmatch(item.lower()) else item)
        return cleaned
    if not isinstance(value, str):
        raise _wrong_type(param)
    text = value.strip().lower()
    if param.kind == "version" and VERSION_RE.fullmatch(text) and len(text) <= 32:
        return text
    if param.kind == "mig_profile" and MIG_PROFILE_RE.fullmatch(mig_profile(text)):
        return mig_profile(text)
    if param.kind == "choice" and text in param.choices:
        return text
    raise _wrong_type(param)


def _check(key: str) -> Check:
    check = CHECKS_BY_KEY.get(key) if isinstance(key, str) else None
    if check is None:
        raise CheckParamsError(_("Unknown check %(key)s.") % {"key": key})
    return check


def validate_params(key: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The parameters of check `key`, cleaned (defaults filled in, versions and profiles in
    lower case, numbers as numbers); CheckParamsError naming the parameter at fault otherwise."""
    check = _check(key)
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise CheckParamsError(_("The parameters must be a mapping of names to values."))
    known = {param.name for param in check.params}
    for name in params:
        if name not in known:
            raise CheckParamsError(
                _("Unknown parameter %(name)s for check %(key)s.") % {"name": name, "key": key},
                str(name),
            )
    cleaned: dict[str, Any] = {}
    for param in check.params:
        if param.name not in params:
            if param.required:
                raise CheckParamsError(
                    _("Missing parameter %(name)s.") % {"name": param.name}, param.name
                )
            cleaned[param.name] = param.default
        else:
            cleaned[param.name] = _clean(param, params[param.name])
    return cleaned


def describe(key: str, params: dict[str, Any] | None) -> str:
    """The check as a statement with its parameters ("GPU count ≥ 8"), for pages. A stored
    binding that no longer validates (the catalogue changed) is described with the reason
    instead of raising; validate_params is the function that refuses."""
    try:
        return _check(key).statement(validate_params(key, params))
    except CheckParamsError as exc:
        return _stale(key, exc)


def _stale(key: str, exc: CheckParamsError) -> str:
    check = CHECKS_BY_KEY.get(key) if isinstance(key, str) else None
    return _("%(check)s (not valid: %(reason)s)") % {
        "check": str(check.label) if check else str(key),
        "reason": exc,
    }


def run_check(
    key: str,
    params: dict[str, Any] | None,
    nodes: list[NodeFacts],
    *,
    cluster: dict[str, Any] | None = None,
) -> CheckOutcome:
    """Run a check on all the nodes of one probe run. A binding whose check or parameters are no
    longer valid (the catalogue changed) is "unable", with the reason, rather than an error: one
    stale binding must not stop a probe run from being recorded."""
    try:
        cleaned = validate_params(key, params)
    except CheckParamsError as exc:
        return {"status": "unable", "measured": "", "detail": str(exc), "check": _stale(key, exc)}
    check = CHECKS_BY_KEY[key]
    if check.evaluate_cluster is not None and cluster:
        result = check.evaluate_cluster(cleaned, nodes, cluster)
    else:
        result = check.evaluate(cleaned, nodes)
    return {
        "status": result.status,
        "measured": result.measured,
        "detail": result.detail,
        "check": check.statement(cleaned),
    }
