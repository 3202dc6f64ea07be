"""`dcgmi diag -r N -j`: DCGM diagnostic results as JSON.

The shape changed between DCGM releases; all of these are read:

* DCGM 1.x-3.x: {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment",
  "tests": [{"name": "...", "results": [{"gpu_ids": "0", "status": "Pass", "warnings": [...],
  "info": [...]}]}]}], "version": "..."}}. `gpu_ids` is a string, for node-wide tests a list
  ("0,1,2,3"); some releases write `gpu_id`.
* DCGM 4.x: {"DCGM Diagnostic": {"test_categories": [...]}, "entity_groups": [...],
  "metadata": {"Driver Version Detected": "...", "version": "..."}}, results naming
  `entity_group` / `entity_id`, warnings as objects ({"warning": "...", "error_id": ...}) and a
  per-test "test_summary".
* "tests" directly under the diagnostic (or at the top level), without categories.
* DCGM 3.x level-one (Deployment) results: warning objects holding their text under
  "warnings" ({"warnings": "...", "error_id": 43}) and an integer "gpu_id"; the CPU EUD test's
  results naming a "cpu_id".
* `dcgmi diag -j --iterations N` (DCGM 3.x-4.x): {"iterations": [<one document per run>],
  "Overall Result": "Pass" | "Fail", "Warning": "..."}. dcgmi stops at the first run that fails,
  so the last run holds the failure if there was one; it is read, and an overall result other
  than Pass is kept as a node-wide "Overall Result" test.

dcgmi may print a line of text before the JSON ("Successfully ran diagnostic for group."); it
is skipped. Statuses are normalised to Pass, Fail, Warn, Skip and Not Run; a status word
outside those is kept as written, never read as a pass.

The registry's `dcgm-json` entry (formats.py) says how this output is recognised and
which commands make it.
"""

import json
from typing import Any

from poc.probes.facts import DcgmTest, NodeFacts, new_node

from . import values as v
from .values import ParseError

SOURCE = "dcgmi diag"

_STATUSES = {
    "pass": "Pass",
    "passed": "Pass",
    "fail": "Fail",
    "failed": "Fail",
    "warn": "Warn",
    "warning": "Warn",
    "skip": "Skip",
    "skipped": "Skip",
    "not run": "Not Run",
    "notrun": "Not Run",
    "not_run": "Not Run",
}
_SECTIONS = ("DCGM GPU Diagnostic", "DCGM Diagnostic")
# Where a warning or info object holds its text: "warning" (DCGM 3.x-4.x per-GPU results),
# "warnings" (DCGM 3.x level-one results), "message" or "info"; the first that holds text.
_MESSAGE_KEYS = ("warning", "warnings", "message", "msg", "info")
_MAX_TEXT = 2000


def load_json(text: str, what: str) -> Any:
    """The first JSON value in `text`, skipping any text before its opening brace."""
    start = text.find("{")
    if start < 0:
        first = next((line.strip() for line in text.split("\n") if line.strip()), "")
        raise ParseError(f"not {what} JSON: {first[:120]}")
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not valid {what} JSON: {str(exc)[:200]}") from None
    return value


def _status(raw: object) -> str | None:
    """A status normalised; "Pass - All" or "Skip - GPU: 1" (dcgmi's table wording, which some
    results carry) by the word before the dash."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    word = " ".join(raw.strip().split())
    known = _STATUSES.get(word.lower())
    if known is None and " - " in word:
        known = _STATUSES.get(word.split(" - ", 1)[0].lower())
    return known or word[:40]


def _messages(raw: object) -> list[str]:
    """Info or warning text, given as a string, a list of strings or a list of objects."""
    items = raw if isinstance(raw, list) else [raw]
    messages: list[str] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            messages.append(item.strip())
        elif isinstance(item, dict):
            text = next(
                (
                    value
                    for value in (item.get(key) for key in _MESSAGE_KEYS)
                    if isinstance(value, str) and value.strip()
                ),
                None,
            )
            if text is not None:
                messages.append(text.strip())
    return messages


def _gpu_index(result: dict[str, Any]) -> tuple[int | None, str]:
    """The GPU a result is for (None: the whole node), and a label for other entities."""
    group = result.get("entity_group")
    raw = result.get("gpu_id", result.get("gpu_ids", result.get("entity_id")))
    cpu = result.get("cpu_id")
    if group is None and raw is None and isinstance(cpu, int | str) and not isinstance(cpu, bool):
        return None, f"CPU {cpu}: "
    if isinstance(group, str) and group.strip().upper() not in ("GPU", ""):
        return None, f"{group.strip()} {raw}: " if isinstance(raw, int | str) else ""
    if isinstance(raw, bool):
        return None, ""
    if isinstance(raw, int):
        return (raw if raw >= 0 else None), ""
    if isinstance(raw, str):
        ids = [part.strip() for part in raw.split(",") if part.strip()]
        if len(ids) == 1:
            return v.to_int(ids[0]), ""
    return None, ""


def _tests(category: str | None, tests: object) -> list[DcgmTest]:
    found: list[DcgmTest] = []
    if not isinstance(tests, list):
        return found
    for test in tests:
        if not isinstance(test, dict):
            continue
        name = test.get("name")
        if not isinstance(name, str) or not name.strip():
            continue
        results = test.get("results")
        summary = test.get("test_summary")
        # What the summary says beyond the per-GPU results (DCGM 4 writes node-wide notes
        # there, such as a skipped SRAM threshold check) is kept with each of them.
        noted = (
            _messages(summary.get("warnings")) + _messages(summary.get("info"))
            if isinstance(summary, dict)
            else []
        )
        for result in results if isinstance(results, list) else []:
            if not isinstance(result, dict):
                continue
            status = _status(result.get("status"))
            if status is None:
                continue
            index, label = _gpu_index(result)
            messages = _messages(result.get("warnings")) + _messages(result.get("info"))
            messages += [f"test summary: {m}" for m in noted if m not in messages]
            found.append(
                {
                    "name": name.strip(),
                    "category": category,
                    "result": status,
                    "gpu_index": index,
                    "info": (label + "; ".join(messages))[:_MAX_TEXT],
                }
            )
        if not isinstance(results, list) or not results:
            # No per-GPU results: the summary speaks for the node.
            status = _status(summary.get("status")) if isinstance(summary, dict) else None
            if status is not None and isinstance(summary, dict):
                messages = _messages(summary.get("warnings")) + _messages(summary.get("info"))
                found.append(
                    {
                        "name": name.strip(),
                        "category": category,
                        "result": status,
                        "gpu_index": None,
                        "info": "; ".join(messages)[:_MAX_TEXT],
                    }
                )
    return found


def _driver(document: dict[str, Any], section: dict[str, Any]) -> str | None:
    for holder in (document.get("metadata"), section, document):
        if not isinstance(holder, dict):
            continue
        for key in ("Driver Version Detected", "driver_version_detected", "driver_version"):
            value = holder.get(key)
            if isinstance(value, str):
                return v.to_text(value)
    return None


def _iterations(document: dict[str, Any]) -> tuple[dict[str, Any], list[DcgmTest]]:
    """The run to read of `--iterations N` output (the last that holds a document) and the
    overall result when it is not a pass; the document itself when it holds no runs."""
    runs = document.get("iterations")
    if not isinstance(runs, list):
        return document, []
    documents = [run for run in runs if isinstance(run, dict) and run]
    overall = _status(document.get("Overall Result", document.get("Result")))
    extra: list[DcgmTest] = []
    if overall is not None and overall != "Pass":
        reason = _messages(document.get("Warning", document.get("warning")))
        extra.append(
            {
                "name": "Overall Result",
                "category": None,
                "result": overall,
                "gpu_index": None,
                "info": "; ".join([f"{len(runs)} iterations", *reason])[:_MAX_TEXT],
            }
        )
    return (documents[-1] if documents else {}), extra


def parse_dcgm(text: str) -> NodeFacts:
    """DCGM test results (one per test and GPU) from `dcgmi diag -j` output."""
    document = load_json(text, "dcgmi diag")
    if not isinstance(document, dict):
        raise ParseError("not dcgmi diag output: the JSON is not an object")
    document, overall = _iterations(document)
    section: Any = next(
        (document[key] for key in _SECTIONS if isinstance(document.get(key), dict)), document
    )
    tests: list[DcgmTest] = []
    categories = section.get("test_categories")
    if isinstance(categories, list):
        for category in categories:
            if isinstance(category, dict):
                label = category.get("category")
                tests += _tests(
                    label.strip() if isinstance(label, str) else None, category.get("tests")
                )
    tests += _tests(None, section.get("tests"))
    if section is not document:
        tests += _tests(None, document.get("tests"))
    tests += overall
    if not tests:
        # A diagnostic that could not run says why in "runtime_error" (DCGM 2.x-4.x), beside
        # the version and the driver it detected.
        for holder in (section, document):
            reason = holder.get("runtime_error")
            if isinstance(reason, str) and reason.strip():
                text = " ".join(reason.split())
                raise ParseError(f"dcgmi diag did not run: {text}"[:500])
        raise ParseError("dcgmi diag output holds no test results")
    return new_node(
        driver_version=_driver(document, section),
        dcgm=tests,
        sources=[SOURCE],
        gpus_listed=False,  # results per test and GPU index, not the node's GPUs
    )
