"""workbench-ci, run as the single standard-library file a pipeline would copy."""

import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from poc.models import (
    Result,
    RunImport,
)
from tests.poc.api_helpers import token_client
from workbench import ci_client

CLIENT = Path(ci_client.__file__)


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-I", str(CLIENT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.django_db(transaction=True)
def test_posts_a_junit_report_and_a_retry_stores_nothing_twice(suite, live_server, tmp_path):
    _client, _token, raw = token_client(suite["alpha"])
    report = tmp_path / "report.xml"
    report.write_text(
        '<testsuite><testcase name="quota-hit"/><testcase name="real-job">'
        '<failure message="stalled"/></testcase><testcase name="extra"/></testsuite>'
    )
    args = [
        "junit",
        str(report),
        "--url",
        live_server.url,
        "--project",
        "alpha",
        "--candidate",
        "volcano",
        "--run",
        "ci-42",
        "--token",
        raw,
    ]
    first = _run(*args)
    assert first.returncode == 0, first.stderr
    assert "stored 2 results in run ci-42" in first.stdout
    assert "1 testcases map to no action" in first.stdout
    again = _run(*args, "--fail-on-regression")
    assert again.returncode == 0, again.stderr
    assert Result.objects.count() == 2 and RunImport.objects.count() == 1
    # The same file for another run is a different request: stored, and a regression fails CI.
    report.write_text(
        '<testsuite><testcase name="quota-hit"><failure message="quota ignored"/>'
        "</testcase></testsuite>"
    )
    regressed = _run(*args[:-2], "--token", raw, "--fail-on-regression")
    assert regressed.returncode == 1
    assert "regressed: volcano x quota-hit" in regressed.stdout


@pytest.mark.django_db(transaction=True)
def test_refusals_are_reported_with_reasons(suite, live_server, tmp_path) -> None:
    _client, _token, raw = token_client(suite["alpha"])
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            {
                "run": {"external_id": "r1"},
                "results": [{"candidate": "volcano", "action": "nope", "outcome": "passed"}],
            }
        )
    )
    refused = _run(
        "results", str(results), "--url", live_server.url, "--project", "alpha", "--token", raw
    )
    assert refused.returncode == 2
    assert "HTTP 400" in refused.stderr and "unknown action key 'nope'" in refused.stderr
    missing = _run(
        "results",
        str(tmp_path / "absent.json"),
        "--url",
        live_server.url,
        "--project",
        "alpha",
        "--token",
        raw,
    )
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert _run("results", str(results)).returncode == 2  # no url, project or token
    assert not Result.objects.exists()


def test_retries_with_backoff_and_one_idempotency_key() -> None:
    seen: list[tuple[int, str]] = []

    class Flaky(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((len(seen), self.headers["Idempotency-Key"]))
            if len(seen) < 3:
                self.send_response(503 if len(seen) == 1 else 429)
                self.send_header("Retry-After", "0")
                self.end_headers()
                return
            body = json.dumps({"stored": 1, "run": {"external_id": "x"}}).encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/api/v1/projects/p/results/"
        status, data = ci_client.post(
            url,
            b"{}",
            token="t",
            content_type="application/json",
            key="k-1",
            retries=3,
            backoff=0.01,
        )
    finally:
        server.shutdown()
    assert (status, data["stored"]) == (201, 1)
    assert [key for _n, key in seen] == ["k-1", "k-1", "k-1"]


def test_gives_up_after_the_retries() -> None:
    with pytest.raises(ci_client.PostError, match="cannot reach"):
        ci_client.post(
            "http://127.0.0.1:9/none",
            b"{}",
            token="t",
            content_type="x",
            key="k",
            retries=1,
            backoff=0.01,
        )


def test_idempotency_key_depends_on_target_and_content() -> None:
    key = ci_client.idempotency_key(b"junit", b"url-a", b"<xml/>")
    assert key == ci_client.idempotency_key(b"junit", b"url-a", b"<xml/>")
    assert key != ci_client.idempotency_key(b"junit", b"url-b", b"<xml/>")
    assert key != ci_client.idempotency_key(b"junit", b"url-a", b"<xml />")
