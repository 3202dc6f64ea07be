"""Hypothesis over the importers people and CI feed files to: the JUnit report reader and the
acceptance-suite readers (YAML, CSV). Garbage in gives a clear error out (JUnitError, or a
ParseResult that names its lines), never another exception."""

import string
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluations.suite_io import ParseResult, parse
from poc.junit import JUnitError, parse_testcases

FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="acceptance" tests="2" failures="1">
<testcase classname="quota" name="test_over_quota_is_refused">
  <properties><property name="action" value="quota-hit"/></properties>
</testcase>
<testcase classname="jobs" name="test_real_job"><failure message="stuck at step 40">trace</failure>
</testcase></testsuite></testsuites>
"""
SUITE_YAML = """requirements:
  - feature: Queue quotas
    dimension: scheduling
    owner_team: platform
    importance: must
    actions:
      - key: quota-hit
        scenario: resource_shortage
        question: Does a job over quota wait with a reason?
        steps: Submit a job asking for more GPUs than the quota
        expected_evidence: The pending reason
        pass_criterion: Pending with a readable reason within 60 s
"""
SUITE_CSV = (
    "feature,dimension,owner_team,importance,action_key,scenario,question,steps,"
    "expected_evidence,pass_criterion\n"
    "Queue quotas,scheduling,platform,must,quota-hit,resource_shortage,Does it wait?,"
    "Submit,The reason,Pending in 60 s\n"
)


def _junit(data: bytes) -> None:
    try:
        cases = parse_testcases(data)
    except JUnitError as exc:
        assert str(exc).strip()
        return
    assert isinstance(cases, list)
    for case in cases:
        assert case.status in ("passed", "failed", "skipped")


def _suite(text: str, filename: str) -> None:
    result = parse(text, filename)
    assert isinstance(result, ParseResult)
    for line, message in result.errors:
        assert isinstance(line, int) and line >= 1 and str(message).strip()
    if result.ok:
        for requirement in result.requirements:
            assert requirement.feature.strip()


@st.composite
def mutated(draw: Any, source: str | bytes) -> Any:
    """The source with a few characters replaced, inserted or cut out."""
    data = bytearray(source.encode() if isinstance(source, str) else source)
    alphabet = string.printable.encode() + "中\u00e9\ufeff".encode()
    for _ in range(draw(st.integers(1, 8))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        match draw(st.sampled_from(("replace", "insert", "cut"))):
            case "replace":
                data[at] = draw(st.sampled_from(alphabet))
            case "insert":
                data[at:at] = bytes([draw(st.sampled_from(alphabet))])
            case "cut":
                del data[at : at + draw(st.integers(1, 40))]
    raw = bytes(data)
    return raw if isinstance(source, bytes) else raw.decode("utf-8", "replace")


@FUZZ
@given(st.binary(max_size=2000))
def test_junit_random_bytes(data: bytes) -> None:
    _junit(data)


@FUZZ
@given(mutated(JUNIT))
def test_junit_mutated_reports(data: bytes) -> None:
    _junit(data)


def test_junit_reference_reads() -> None:
    cases = parse_testcases(JUNIT)
    assert [(c.status, c.action_key) for c in cases] == [("passed", "quota-hit"), ("failed", "")]


@FUZZ
@given(st.text(max_size=2000), st.sampled_from(("suite.yaml", "suite.csv")))
def test_suite_random_text(text: str, filename: str) -> None:
    _suite(text, filename)


@FUZZ
@given(mutated(SUITE_YAML))
def test_suite_mutated_yaml(text: str) -> None:
    _suite(text, "suite.yaml")


@FUZZ
@given(mutated(SUITE_CSV))
def test_suite_mutated_csv(text: str) -> None:
    _suite(text, "suite.csv")


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)


@FUZZ
@given(
    st.recursive(
        _SCALARS,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(["requirements", "feature", "actions", "key", "x"]),
                inner,
                max_size=4,
            )
        ),
        max_leaves=30,
    )
)
def test_suite_random_yaml_structures(data: Any) -> None:
    _suite(yaml.safe_dump({"requirements": data}, allow_unicode=True), "suite.yaml")


def test_suite_references_read() -> None:
    for text, name in ((SUITE_YAML, "suite.yaml"), (SUITE_CSV, "suite.csv")):
        result = parse(text, name)
        assert result.ok, result.errors
        assert [a.key for a in result.requirements[0].actions] == ["quota-hit"]


def test_what_the_fuzzing_found_stays_fixed() -> None:
    """Each of these escaped as an exception (a 500 from the upload or the API) before."""
    for text in ("requirements: !!int abc", "a: !!float", "- !!timestamp 2026-13-45"):
        result = parse(text, "suite.yaml")
        assert result.errors and "not valid YAML" in result.errors[0][1], (text, result.errors)
    result = parse("feature,dimension\r x\n", "suite.csv")
    assert result.errors and "not valid CSV" in result.errors[0][1]
    try:
        parse_testcases(b'<?xml version="1.0" encoding="atf-8"?><testsuites/>')
    except JUnitError as exc:
        assert "unreadable XML" in str(exc)
    else:
        raise AssertionError("an unknown encoding was accepted")
