#!/usr/bin/env python3
"""workbench-ci: post PoC results from a CI pipeline to the GPU Selection Workbench.

Standard library only, so it also runs as a single copied file:

    python3 ci_client.py junit report.xml --url https://workbench.example.com \\
        --project demo --candidate volcano --run "$CI_PIPELINE_ID"
    python3 ci_client.py results results.json --url ... --project demo

The token comes from --token or the WORKBENCH_TOKEN environment variable. Each upload carries
an Idempotency-Key derived from the file and its target, so retries (and re-runs of the same
job) never store a result twice. Connection errors, 429 and 5xx answers are retried with
exponential backoff.

Exit status: 0 stored, 1 stored but --fail-on-regression saw a regression, 2 refused or failed.
"""

import argparse
import hashlib
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

RETRYABLE = {429, 500, 502, 503, 504}


class PostError(Exception):
    def __init__(self, message: str, status: int = 0, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


def idempotency_key(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return "workbench-ci-" + digest.hexdigest()[:48]


def post(
    url: str,
    body: bytes,
    *,
    token: str,
    content_type: str,
    key: str,
    retries: int = 5,
    backoff: float = 1.0,
    timeout: float = 60.0,
    log: Any = sys.stderr,
) -> tuple[int, Any]:
    """POST with retries; returns (status, parsed JSON). Raises PostError when refused."""
    attempt = 0
    while True:
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": content_type,
                "Idempotency-Key": key,
                "Accept": "application/json",
                "User-Agent": "workbench-ci/1",
            },
        )
        wait = backoff * (2**attempt)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            payload = _json(error.read())
            if error.code not in RETRYABLE or attempt >= retries:
                raise PostError(
                    f"HTTP {error.code}: {_detail(payload)}", error.code, payload
                ) from None
            retry_after = error.headers.get("Retry-After")
            if retry_after and retry_after.isdigit():
                wait = max(wait, float(retry_after))
            print(f"workbench-ci: HTTP {error.code}, retrying in {wait:.0f}s", file=log)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            if attempt >= retries:
                raise PostError(f"cannot reach {url}: {error}") from None
            print(f"workbench-ci: {error}, retrying in {wait:.0f}s", file=log)
        attempt += 1
        time.sleep(wait)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:500]


def _detail(payload: Any) -> str:
    if isinstance(payload, dict):
        detail = str(payload.get("detail", ""))
        errors = payload.get("errors")
        if isinstance(errors, list) and errors:
            detail += "; " + "; ".join(
                f"#{e.get('index')}: {e.get('errors')}" for e in errors[:10] if isinstance(e, dict)
            )
        return detail or json.dumps(payload)[:500]
    return str(payload)


def summary(result: dict[str, Any]) -> str:
    changes = result.get("changes", {})
    run = result.get("run", {}).get("external_id")
    lines = [
        f"stored {result.get('stored', 0)} results in run {run}",
        "  "
        + ", ".join(
            f"{k} {changes.get(k, 0)}"
            for k in ("new", "unchanged", "changed", "regressed", "recovered")
        ),
    ]
    for kind in ("regressed", "recovered"):
        for cell in result.get(kind, []):
            lines.append(f"  {kind}: {cell.get('candidate')} x {cell.get('action')}")
    unmapped = result.get("unmapped") or []
    if unmapped:
        lines.append(f"  {len(unmapped)} testcases map to no action:")
        lines.extend(f"    {u.get('classname', '')}::{u.get('name', '')}" for u in unmapped[:20])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workbench-ci", description=__doc__.split("\n")[0])
    parser.add_argument("kind", choices=["junit", "results"], help="what FILE holds")
    parser.add_argument("file", help="a JUnit XML report or a JSON results file")
    parser.add_argument(
        "--url",
        default=os.environ.get("WORKBENCH_URL", ""),
        help="the workbench, e.g. https://workbench.example.com",
    )
    parser.add_argument("--project", default=os.environ.get("WORKBENCH_PROJECT", ""))
    parser.add_argument("--candidate", default="", help="candidate slug (junit)")
    parser.add_argument("--run", default="", help="run external id (junit)")
    parser.add_argument("--token", default=os.environ.get("WORKBENCH_TOKEN", ""))
    parser.add_argument("--retries", type=int, default=5)
    parser.add_argument("--backoff", type=float, default=1.0, help="first wait, in seconds")
    parser.add_argument("--fail-on-regression", action="store_true")
    args = parser.parse_args(argv)
    missing = [n for n in ("url", "project", "token") if not getattr(args, n)]
    if args.kind == "junit":
        missing += [n for n in ("candidate", "run") if not getattr(args, n)]
    if missing:
        parser.error("missing " + ", ".join(f"--{m}" for m in missing))
    try:
        with open(args.file, "rb") as handle:
            body = handle.read()
    except OSError as error:
        print(f"workbench-ci: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    base = args.url.rstrip("/") + f"/api/v1/projects/{urllib.parse.quote(args.project)}"
    if args.kind == "junit":
        query = urllib.parse.urlencode({"candidate": args.candidate, "run": args.run})
        url, content_type = f"{base}/junit/?{query}", "application/xml"
    else:
        url, content_type = f"{base}/results/", "application/json"
    key = idempotency_key(args.kind.encode(), url.encode(), body)
    try:
        _status, result = post(
            url,
            body,
            token=args.token,
            content_type=content_type,
            key=key,
            retries=args.retries,
            backoff=args.backoff,
        )
    except PostError as error:
        print(f"workbench-ci: refused: {error}", file=sys.stderr)
        return 2
    print(summary(result))
    if args.fail_on_regression and result.get("regressed"):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
