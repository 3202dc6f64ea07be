"""slurmrestd: the HTTP session (TLS pinned to the checked address), API version
discovery, and the read-only probe and connection test."""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from poc.probes.connectors.slurm.cli import partition_facts
from poc.probes.connectors.slurm.target import ConnectorError, SlurmRestTarget
from poc.probes.connectors.slurm.values import (
    RAW_TEXT_LIMIT,
    as_int,
    empty_facts,
    gpu_nodes,
    node_facts,
)
from poc.probes.connectors.slurm.versions import meta_version, settle_versions

# Newest first. 22.05 serves v0.0.36-v0.0.38; later releases drop the old ones.
KNOWN_API_VERSIONS = tuple(f"v0.0.{n}" for n in range(43, 35, -1))
# Versions of later releases (25.11 adds v0.0.44), tried after the known ones when slurmrestd
# does not serve its OpenAPI document: a server that dropped every known version still answers.
LATER_API_VERSIONS = tuple(f"v0.0.{n}" for n in range(44, 50))
MAX_RESPONSE_BYTES = 32 * 1024 * 1024


@dataclass
class _Answer:
    status: int
    content_type: str
    text: str
    data: Any  # the parsed JSON, None when the body is not JSON

    def not_json(self) -> str:
        first = " ".join(self.text.split())[:80]
        return f"slurmrestd answered {self.content_type or 'no content type'}, not JSON: {first}"

    def errors(self) -> str:
        """Slurm's own error texts in a JSON answer, joined."""
        found = []
        if isinstance(self.data, dict):
            for error in self.data.get("errors") or []:
                if isinstance(error, dict):
                    texts = [error.get("error"), error.get("description")]
                    found.append(": ".join(str(t) for t in texts if t))
        return "; ".join(f for f in found if f)

    def error_codes(self) -> list[int]:
        """Slurm's error numbers in a JSON answer (2000-2999: the controller's own refusals)."""
        codes = []
        if isinstance(self.data, dict):
            for error in self.data.get("errors") or []:
                if isinstance(error, dict):
                    for key in ("error_code", "error_number", "errno"):
                        if isinstance(error.get(key), int):
                            codes.append(error[key])
        return codes


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to an address already checked, verifying the certificate for the original name."""

    def __init__(
        self, ip: str, port: int, *, server_hostname: str, context: ssl.SSLContext, timeout: float
    ) -> None:
        super().__init__(ip, port, timeout=timeout, context=context)
        self._server_hostname = server_hostname
        self._pinned_context = context

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._pinned_context.wrap_socket(sock, server_hostname=self._server_hostname)


class Rest:
    """One slurmrestd: resolved once through the caller's guard, every request to that IP."""

    def __init__(self, target: SlurmRestTarget, resolve: Callable[[str, int], str]) -> None:
        self.target = target
        parts = urlsplit(target.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConnectorError(f"not an http(s) URL: {target.url[:100]!r}")
        if any(c in target.user + target.token for c in "\r\n\0"):
            raise ConnectorError("the user name or token holds characters a header cannot carry")
        self.host = parts.hostname
        try:
            explicit_port = parts.port
        except ValueError as exc:
            raise ConnectorError(f"bad port in {target.url[:100]!r}") from exc
        self.port = explicit_port or (443 if parts.scheme == "https" else 80)
        self.https = parts.scheme == "https"
        self.prefix = parts.path.rstrip("/")
        name = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = f"{name}:{explicit_port}" if explicit_port else name
        self.where = f"{parts.scheme}://{self.host_header}"
        self.ip = resolve(self.host, self.port)
        self.raw: list[dict[str, Any]] = []

    def redact(self, text: str) -> str:
        token = self.target.token
        return text.replace(token, "***") if len(token) >= 4 else text

    def error(self, message: str) -> ConnectorError:
        return ConnectorError(self.redact(message))

    def request(
        self, method: str, path: str, body: Any = None, *, keep: int = RAW_TEXT_LIMIT
    ) -> _Answer:
        """One request; transport failures raise ConnectorError, HTTP errors are answers."""
        timeout = self.target.timeout
        connection: http.client.HTTPConnection
        if self.https:
            context = ssl.create_default_context()
            connection = _PinnedHTTPSConnection(
                self.ip, self.port, server_hostname=self.host, context=context, timeout=timeout
            )
        else:
            connection = http.client.HTTPConnection(self.ip, self.port, timeout=timeout)
        headers = {"Host": self.host_header, "Accept": "application/json"}
        # Empty credentials are not sent: slurmrestd then answers 401, which says what is wrong.
        if self.target.user:
            headers["X-SLURM-USER-NAME"] = self.target.user
        if self.target.token:
            headers["X-SLURM-USER-TOKEN"] = self.target.token
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, self.prefix + path, body=payload, headers=headers)
            response = connection.getresponse()
            blob = response.read(MAX_RESPONSE_BYTES + 1)
            status, content_type = response.status, response.getheader("Content-Type") or ""
        except ssl.SSLCertVerificationError as exc:
            raise self.error(
                f"{self.where}: certificate not trusted: {exc.verify_message}"
            ) from exc
        except (OSError, http.client.HTTPException) as exc:
            reason = str(exc) or type(exc).__name__
            raise self.error(f"could not talk to slurmrestd at {self.where}: {reason}") from exc
        finally:
            connection.close()
        if len(blob) > MAX_RESPONSE_BYTES:
            raise self.error(f"{method} {path}: answer larger than {MAX_RESPONSE_BYTES} bytes")
        text = self.redact(blob.decode("utf-8", errors="replace"))
        data = None
        if text.lstrip()[:1] in ("{", "["):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
        self.raw.append({"name": f"{method} {path}", "status": status, "text": text[:keep]})
        return _Answer(status, content_type.split(";")[0].strip(), text, data)

    def failure(self, answer: _Answer, label: str) -> str | None:
        """Why an answer holds nothing usable, or None when it is a JSON object with no error."""
        if answer.status in (401, 403):
            first = " ".join(answer.text.split())[:80]
            return f"{label}: HTTP {answer.status} {first} (slurmrestd refused the credentials)"
        if not isinstance(answer.data, dict):
            return f"{label}: HTTP {answer.status}: {answer.not_json()}"
        errors = answer.errors()
        if answer.status == 200 and not errors:
            return None
        reason = f"{label}: HTTP {answer.status}: {errors or 'no error text'}"
        if "Unspecified error" in errors or "Zero Bytes were transmitted" in errors:
            reason += " (slurmrestd reports a token slurmctld rejects this way: check user/token)"
        return reason


def _served_versions(rest: Rest) -> list[str]:
    """API versions listed in slurmrestd's OpenAPI document, newest first; [] if unreadable."""
    for path in ("/openapi/v3", "/openapi"):
        answer = rest.request("GET", path, keep=2000)
        if answer.status == 200 and isinstance(answer.data, dict):
            found = set()
            for key in answer.data.get("paths") or {}:
                match = re.match(r"^/slurm/(v\d+\.\d+\.\d+)/ping/?$", str(key))
                if match:
                    found.add(match.group(1))
            return sorted(found, key=version_key, reverse=True)
    return []


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def discover(rest: Rest) -> tuple[str, _Answer]:
    """The API version to use and its ping answer (maybe a refusal): the newest the OpenAPI
    document lists, else the first that answers of the known versions (newest first) and then
    of later ones."""
    candidates = _served_versions(rest) or [*KNOWN_API_VERSIONS, *LATER_API_VERSIONS]
    for version in candidates:
        answer = rest.request("GET", f"/slurm/{version}/ping")
        if answer.status == 404:
            continue
        if answer.status not in (401, 403) and not isinstance(answer.data, dict):
            raise rest.error(f"{rest.where}: GET /slurm/{version}/ping: {answer.not_json()}")
        return version, answer
    low, high = min(candidates, key=version_key), max(candidates, key=version_key)
    tried = f"{high}..{low}" if len(candidates) > 1 else candidates[0]
    raise rest.error(f"{rest.where}: no Slurm REST API version answered ping (tried {tried})")


def rest_node(item: dict[str, Any]) -> dict[str, Any]:
    return node_facts(
        name=str(item.get("name") or item.get("hostname") or ""),
        state=item.get("state"),
        flags=item.get("state_flags") or [],
        reason=item.get("reason"),
        partitions=[str(p) for p in item.get("partitions") or []],
        gres=item.get("gres") if "gres" in item else None,
        gres_used=item.get("gres_used") if "gres_used" in item else None,
        cpus=item.get("cpus"),
        memory=item.get("real_memory"),
        # slurmd's version: "slurmd_version" up to v0.0.38, "version" from v0.0.39.
        version=item.get("version") or item.get("slurmd_version"),
    )


def rest_partition(item: dict[str, Any]) -> dict[str, Any]:
    inner: dict[str, Any] = item["partition"] if isinstance(item.get("partition"), dict) else {}
    # v0.0.39 and later leave a partition's flags out: which one is the default is not said.
    said = "flags" in item or "flags" in inner
    flags = [str(f).lower() for f in item.get("flags") or inner.get("flags") or []]
    nodes = item.get("nodes")
    if isinstance(nodes, dict):  # v0.0.40+: {"configured": "gpu[01-04]", "total": 4}
        nodes = nodes.get("configured")
    tres = item.get("tres")
    if isinstance(tres, dict):
        tres = tres.get("configured")
    cpus, total_nodes = item.get("total_cpus"), item.get("total_nodes")
    if isinstance(item.get("cpus"), dict):
        cpus = item["cpus"].get("total")
    if isinstance(item.get("nodes"), dict):
        total_nodes = item["nodes"].get("total")
    return partition_facts(
        name=str(item.get("name") or ""),
        state=item.get("state") or inner.get("state"),
        nodes=nodes,
        default="default" in flags if said else None,
        total_cpus=cpus,
        total_nodes=total_nodes,
        tres=tres,
    )


def job_state(job: dict[str, Any]) -> str:
    state = job.get("job_state")
    if isinstance(state, list):
        state = state[0] if state else ""
    return str(state or "").upper()


# What the probe reads, in this order: `GET /slurm/<version>/<what>`.
REST_READS = ("ping", "diag", "nodes", "partitions", "jobs")


def read_rest_answer(facts: dict[str, Any], what: str, data: dict[str, Any], source: str) -> None:
    """Fill a facts document from one slurmrestd answer (`what` one of REST_READS), read live or
    saved to a file by a cluster's admin; `source` names where the GPU nodes were read."""
    if what == "ping":
        for item in data.get("pings") or []:
            if isinstance(item, dict):
                state = item.get("ping") or item.get("pinged")
                facts["controllers"].append({"host": item.get("hostname"), "state": state})
    elif what == "diag":
        stats = data.get("statistics") or {}
        keep = ("server_thread_count", "agent_queue_size", "jobs_pending", "jobs_running")
        facts["diag"] = {k: as_int(stats.get(k)) for k in keep if k in stats}
    elif what == "nodes":
        facts["nodes"] = [rest_node(n) for n in data.get("nodes") or [] if isinstance(n, dict)]
        facts["gpu_nodes"] = gpu_nodes(facts["nodes"], source)
    elif what == "partitions":
        items = data.get("partitions") or []
        facts["partitions"] = [rest_partition(p) for p in items if isinstance(p, dict)]
    elif what == "jobs":
        jobs = [j for j in data.get("jobs") or [] if isinstance(j, dict)]
        pending = [j for j in jobs if job_state(j) == "PENDING"]
        reasons = Counter(str(j.get("state_reason") or "None") for j in pending)
        facts["jobs_pending_reasons"] = dict(reasons)


def probe_slurm_rest(
    target: SlurmRestTarget, *, resolve: Callable[[str, int], str]
) -> dict[str, Any]:
    """The facts document read through slurmrestd: ping, diag, nodes, partitions, jobs.

    `resolve(host, port)` is the caller's network guard, called once; every request goes to
    the address it returns. Parts that fail land in could_not_check; ConnectorError when
    nothing at all could be read (unreachable, not slurmrestd, every request refused).
    """
    rest = Rest(target, resolve)
    version, ping = discover(rest)
    facts = empty_facts(version)
    read_any = False
    problems = []

    said = facts["slurm_versions"]

    def get(what: str) -> Any:
        nonlocal read_any
        answer = ping if what == "ping" else rest.request("GET", f"/slurm/{version}/{what}")
        # slurmrestd names its version in every JSON answer, refusals and errors included.
        said["slurmrestd"] = said["slurmrestd"] or meta_version(answer.data)
        reason = rest.failure(answer, f"GET /slurm/{version}/{what}")
        if reason is not None:
            facts["could_not_check"].append({"what": what, "reason": reason})
            problems.append(reason)
            return None
        read_any = True
        return answer.data

    for what in REST_READS:
        data = get(what)
        if data:
            read_rest_answer(facts, what, data, f"slurmrestd: GET /slurm/{version}/nodes")
    settle_versions(facts)
    facts["raw"] = rest.raw
    if not read_any:
        raise rest.error(f"{rest.where}: nothing could be read: {problems[0]}")
    return facts


def check_slurm_rest(
    target: SlurmRestTarget, *, resolve: Callable[[str, int], str]
) -> dict[str, Any]:
    """What "test connection" says: the newest API version slurmrestd serves, and whether it
    accepts the user and token (its ping answer). Raises ConnectorError when it cannot be
    reached or is not slurmrestd."""
    rest = Rest(target, resolve)
    version, ping = discover(rest)
    reason = rest.failure(ping, f"GET /slurm/{version}/ping")
    return {
        "server": rest.where,
        "api_version": version,
        "slurm_version": meta_version(ping.data),
        "accepted": reason is None,
        "reason": reason or "",
    }
