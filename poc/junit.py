"""JUnit XML reports (pytest, Maven Surefire, Go's junit reporters, nested testsuites) turned
into PoC outcomes per acceptance action. Parsed with defusedxml: DTDs, external entities and
entity expansion are refused."""

from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

ACTION_PROPERTIES = ("action", "test_id")
MAX_MESSAGE = 2000


class JUnitError(Exception):
    """The report cannot be read; the message says why."""


@dataclass
class TestCase:
    name: str
    classname: str
    status: str  # passed | failed | skipped
    message: str = ""
    action_key: str = ""


@dataclass
class ActionOutcome:
    key: str
    outcome: str
    failure_cause: str = ""
    testcases: list[str] = field(default_factory=list)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _message(element: Element) -> str:
    text = element.get("message") or (element.text or "").strip()
    first = text.strip().splitlines()[0] if text.strip() else _local(element.tag)
    return first[:MAX_MESSAGE]


def parse_testcases(data: bytes) -> list[TestCase]:
    if not data.strip():
        raise JUnitError("the report is empty")
    try:
        root = fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise JUnitError(
            f"refused: {type(exc).__name__} (DTDs and entities are not allowed)"
        ) from exc
    except ParseError as exc:
        raise JUnitError(f"not well-formed XML: {exc}") from exc
    except (LookupError, ValueError) as exc:  # an encoding the declaration names but none knows
        raise JUnitError(f"unreadable XML: {exc}") from exc
    if _local(root.tag) not in ("testsuites", "testsuite"):
        raise JUnitError(f"expected <testsuites> or <testsuite>, found <{_local(root.tag)}>")
    cases = []
    for element in root.iter():
        if _local(element.tag) != "testcase":
            continue
        status, message = "passed", ""
        for child in element:
            tag = _local(child.tag)
            if tag in ("failure", "error"):
                status, message = "failed", _message(child)
                break
            if tag == "skipped":
                status, message = "skipped", child.get("message") or ""
        key = ""
        for prop in element.iter():
            if _local(prop.tag) == "property" and prop.get("name") in ACTION_PROPERTIES:
                key = (prop.get("value") or "").strip()
                break
        cases.append(
            TestCase(
                name=element.get("name") or "",
                classname=element.get("classname") or "",
                status=status,
                message=message,
                action_key=key,
            )
        )
    return cases


def outcomes_by_action(
    cases: list[TestCase], known_keys: set[str]
) -> tuple[list[ActionOutcome], list[dict[str, str]]]:
    """Group testcases by the action they prove: by property, else by a name that is a key.
    An action fails if any of its testcases failed, passes if any passed, else is not covered.
    Testcases that map to no known action are returned, never dropped."""
    grouped: dict[str, list[TestCase]] = {}
    unmapped = []
    for case in cases:
        key = case.action_key or (case.name if case.name in known_keys else "")
        if not key or key not in known_keys:
            unmapped.append(
                {
                    "name": case.name,
                    "classname": case.classname,
                    **({"action": case.action_key} if case.action_key else {}),
                }
            )
            continue
        grouped.setdefault(key, []).append(case)
    outcomes = []
    for key, group in grouped.items():
        failures = [c for c in group if c.status == "failed"]
        if failures:
            cause = "; ".join(f"{c.name}: {c.message}" for c in failures)[:MAX_MESSAGE]
            outcomes.append(ActionOutcome(key, "failed", cause, [c.name for c in group]))
        elif any(c.status == "passed" for c in group):
            outcomes.append(ActionOutcome(key, "passed", "", [c.name for c in group]))
        else:
            outcomes.append(ActionOutcome(key, "not_covered", "", [c.name for c in group]))
    return outcomes, unmapped
