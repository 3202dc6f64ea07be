"""JUnit reports: real reports written by pytest itself, nested suites, and XML attacks."""

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from poc.junit import JUnitError, outcomes_by_action, parse_testcases
from poc.models import (
    Result,
    Run,
    RunImport,
)
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db

POC_SUITE = """
import pytest

def test_quota(record_property):
    record_property("action", "quota-hit")
    assert True

def test_real_job(record_property):
    record_property("test_id", "real-job")
    assert 1 + 1 == 3, "job stalled at step 40"

def test_tenant_isolation(record_property):
    record_property("action", "cross-tenant")
    pytest.skip("needs a second tenant")

def test_not_an_action():
    assert True

@pytest.fixture
def broken(record_property):
    record_property("action", "quota-hit")
    raise RuntimeError("cluster unreachable")

def test_erroring(broken):
    pass
"""


def pytest_report(tmp_path: Path, family: str) -> bytes:
    """Run a small PoC suite with pytest and return the JUnit XML it wrote."""
    (tmp_path / "test_poc_suite.py").write_text(textwrap.dedent(POC_SUITE))
    report = tmp_path / "report.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:django",
            "-o",
            f"junit_family={family}",
            f"--junitxml={report}",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return report.read_bytes()


def _post(client, body: bytes, candidate: str = "volcano", run: str = "junit-1", **headers):
    return client.post(
        f"/api/v1/projects/alpha/junit/?candidate={candidate}&run={run}",
        body,
        content_type="application/xml",
        headers=headers,
    )


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_pytest_report_maps_testcases_to_actions(suite, tmp_path, family) -> None:
    report = pytest_report(tmp_path, family)
    cases = parse_testcases(report)
    assert {c.name for c in cases} >= {"test_quota", "test_real_job", "test_not_an_action"}
    client, _, _ = token_client(suite["alpha"])
    response = _post(client, report)
    assert response.status_code == 201, response.content
    data = response.json()
    outcomes = {r.action.key: r for r in Result.objects.select_related("action")}
    # quota-hit passed in one testcase but errored in another: the action failed.
    assert outcomes["quota-hit"].outcome == "failed"
    assert "cluster unreachable" in outcomes["quota-hit"].failure_cause
    assert outcomes["real-job"].outcome == "failed"
    assert "job stalled at step 40" in outcomes["real-job"].failure_cause
    assert outcomes["cross-tenant"].outcome == "not_covered"
    assert [u["name"] for u in data["unmapped"]] == ["test_not_an_action"]
    assert RunImport.objects.get().unmapped == data["unmapped"]
    assert Run.objects.get().candidate.slug == "volcano"


def test_nested_testsuites_and_names_as_keys(suite, tmp_path) -> None:
    report = pytest_report(tmp_path, "xunit1")
    root = ET.fromstring(report)
    inner = root.find("testsuite")
    outer = ET.Element("testsuites")
    wrapper = ET.SubElement(outer, "testsuite", name="poc")
    wrapper.append(inner)  # Surefire-style: a suite inside a suite
    named = ET.SubElement(inner, "testcase", name="quota-hit", classname="poc.Named")
    assert named is not None
    cases = parse_testcases(ET.tostring(outer))
    assert any(c.name == "quota-hit" for c in cases)
    outcomes, unmapped = outcomes_by_action(cases, {"quota-hit", "real-job", "cross-tenant"})
    assert {o.key for o in outcomes} == {"quota-hit", "real-job", "cross-tenant"}
    assert [u["name"] for u in unmapped] == ["test_not_an_action"]


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuite><testcase name="&lol3;"/></testsuite>"""
XXE = b"""<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite><testcase name="&xxe;"/></testsuite>"""


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (BILLION_LAUGHS, "refused"),
        (XXE, "refused"),
        (b"<testsuite><testcase name='x'>", "not well-formed"),
        (b"", "empty"),
        (b"<html><body/></html>", "expected <testsuites>"),
        (b"\xff\xfe garbage", "not well-formed"),
    ],
)
def test_bad_and_hostile_xml_is_400(suite, body, message) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = _post(client, body)
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not Result.objects.exists()
    with pytest.raises(JUnitError):
        parse_testcases(body)


def test_parameters_are_required_and_checked(suite, tmp_path) -> None:
    client, _, _ = token_client(suite["alpha"])
    report = pytest_report(tmp_path, "xunit1")
    assert (
        client.post(
            "/api/v1/projects/alpha/junit/", report, content_type="application/xml"
        ).status_code
        == 400
    )
    response = _post(client, report, candidate="nobody")
    assert response.status_code == 400
    assert "unknown candidate" in str(response.json()["errors"])
    assert not Result.objects.exists()
