"""The API server's HTTP session: requests through the network guard, pages, and
readable reasons for what the server answered."""

import contextlib
import ipaddress
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

import urllib3
from kubernetes import client as k8s

from poc.probes.connectors.kubernetes.target import (
    ConnectorError,
    KubeTarget,
    Resolve,
    target_endpoint,
)
from poc.probes.connectors.kubernetes.values import dig, one_line

RAW_TEXT_LIMIT = 4 * 1024 * 1024  # evidence kept per response
MAX_BODY = 64 * 1024 * 1024  # a larger answer is not read at all
PAGE_LIMIT = 500  # items per list request (the API server pages with `continue`)


@dataclass
class Reply:
    status: int  # 0: no answer (the reason is in error)
    text: str
    data: Any = None  # the parsed JSON, if any
    error: str = ""  # why this is not a usable answer; empty when it is

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class Listing:
    state: str  # "ok", "missing" (not installed) or "failed" (could not check)
    items: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    version: str = ""


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class Api:
    """One connection to the API server through the official client, recording what it read."""

    def __init__(self, target: KubeTarget, resolve: Resolve) -> None:
        endpoint = target_endpoint(target)
        self.secrets = [s for s in (endpoint.token, endpoint.key_pem) if len(s) >= 4]
        try:
            address = resolve(endpoint.host, endpoint.port)
        except ConnectorError:
            raise
        except Exception as exc:
            raise ConnectorError(
                f"could not resolve {endpoint.host}: {one_line(str(exc))}"
            ) from None
        address = str(address).strip("[]")
        if not _is_ip(address):
            raise ConnectorError(f"the address check returned {address!r}, not an IP address")
        self.timeout = max(1.0, float(target.timeout))
        self.where = f"{endpoint.host}:{endpoint.port}"
        self.raw: list[dict[str, Any]] = []
        self.tls = endpoint.scheme == "https"
        self._tempdir = ""

        netloc = f"[{address}]" if ":" in address else address
        config = k8s.Configuration(host=f"{endpoint.scheme}://{netloc}:{endpoint.port}")
        config.proxy = None  # never an environment proxy: the checked address is the one used
        config.verify_ssl = not endpoint.insecure
        config.retries = False  # no retry, and no redirect followed to an unchecked host
        config.ca_cert_data = endpoint.ca_pem or None
        name = endpoint.tls_server_name or endpoint.host
        if self.tls and not _is_ip(name):
            config.tls_server_name = name  # SNI and certificate check against the name
        if endpoint.token:
            config.api_key = {"BearerToken": endpoint.token}
            config.api_key_prefix = {"BearerToken": "Bearer"}
        try:
            if endpoint.cert_pem:
                self._tempdir = tempfile.mkdtemp(prefix="workbench-k8s-")
                config.cert_file = self._write("client.crt", endpoint.cert_pem)
                config.key_file = self._write("client.key", endpoint.key_pem)
            self.client = k8s.ApiClient(config)
        except Exception:
            self.close()
            raise
        self.prefix = endpoint.prefix
        self.client.user_agent = "gpu-selection-workbench-probe/1"
        if not _is_ip(endpoint.host):
            self.client.set_default_header("Host", f"{endpoint.host}:{endpoint.port}")

    def _write(self, name: str, text: str) -> str:
        path = os.path.join(self._tempdir, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        return path

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        if self._tempdir:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = ""

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        return text

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        accept: str = "application/json",
        json_expected: bool = True,
        fatal: bool = True,
        evidence: str = "",
    ) -> Reply:
        """One request; transport failures raise ConnectorError when `fatal`, 401 always does."""
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = "application/json"
        params = list((query or {}).items())
        name = evidence or method + " " + path + ("?" + _query_text(query) if query else "")
        try:
            _m, url, header_params, body_out, _post = self.client.param_serialize(
                method=method,
                resource_path=self.prefix + path,
                query_params=params or None,
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            response = self.client.call_api(
                method,
                url,
                header_params=header_params,
                body=body_out,
                _request_timeout=(self.timeout, self.timeout),
            )
            status = int(response.status)
            content_type = str(response.headers.get("content-type") or "")
            data = response.response.read(MAX_BODY + 1)
            location = str(response.headers.get("location") or "")
            if len(data) > MAX_BODY:
                response.response.close()  # unread bytes: the connection cannot be reused
            else:
                response.response.release_conn()
        except k8s.ApiException as exc:  # the REST layer turns TLS failures into status 0
            reason = self._transport_reason(f"TLS: {exc.reason or exc}")
            return self._failed(name, reason, fatal)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            return self._failed(name, self._transport_reason(exc), fatal)
        if len(data) > MAX_BODY:
            reply = Reply(status, "", error=f"the answer is larger than {MAX_BODY >> 20} MiB")
            self._keep(name, status, "", note=f"not read: larger than {MAX_BODY} bytes")
            return reply
        text = self.scrub(data.decode("utf-8", errors="replace"))
        self._keep(name, status, text)
        if status == 401:
            raise ConnectorError(
                f"the API server at {self.where} refused the credentials: 401 Unauthorized"
                f"{_status_suffix(text)}"
            )
        if 300 <= status < 400:
            return Reply(status, text, error=f"{status} redirect to {location!r} (not followed)")
        parsed: Any = None
        if json_expected or "json" in content_type:
            try:
                parsed = json.loads(text) if text.strip() else None
            except ValueError:
                parsed = None
        if status >= 400 or status < 200:
            return Reply(status, text, parsed, error=_http_reason(status, parsed, text))
        if json_expected and not isinstance(parsed, dict):
            kind = content_type.split(";")[0] or "no content type"
            return Reply(
                status, text, error=f"the answer is not JSON ({kind}): {_excerpt(text) or 'empty'}"
            )
        return Reply(status, text, parsed)

    def _transport_reason(self, exc: object) -> str:
        return self.scrub(f"no answer from {self.where}: {one_line(str(exc))}")

    def _failed(self, name: str, reason: str, fatal: bool) -> Reply:
        if fatal:
            raise ConnectorError(reason)
        self._keep(name, 0, "", note=reason)
        return Reply(0, "", error=reason)

    def _keep(self, name: str, status: int, text: str, note: str = "") -> None:
        entry: dict[str, Any] = {"name": name, "status": status, "text": text}
        if len(text) > RAW_TEXT_LIMIT:
            entry["text"] = text[:RAW_TEXT_LIMIT]
            note = f"cut at {RAW_TEXT_LIMIT} of {len(text)} characters"
        if note:
            entry["note"] = note
        self.raw.append(entry)

    def list(self, path: str, query: dict[str, str] | None = None) -> Listing:
        """Every item of a list, following `continue`; 404 is "missing", anything else "failed"."""
        items: list[dict[str, Any]] = []
        token = ""
        pages = 0
        base = "GET " + path + ("?" + _query_text(query) if query else "")
        while True:
            params = dict(query or {})
            params["limit"] = str(PAGE_LIMIT)
            if token:
                params["continue"] = token
            pages += 1
            reply = self.request(
                "GET", path, query=params, evidence=base + (f" (page {pages})" if token else "")
            )
            if reply.status == 404:
                return Listing("missing", reason=reply.error)
            if not reply.ok:
                return Listing("failed", reason=reply.error)
            page = reply.data.get("items")
            if page is None:
                page = []
            if not isinstance(page, list):
                return Listing("failed", reason="the answer has no list of items")
            items.extend(item for item in page if isinstance(item, dict))
            token = str(dig(reply.data, "metadata", "continue") or "")
            if not token or pages >= 1000:
                return Listing("ok", items)


def _query_text(query: dict[str, str] | None) -> str:
    return "&".join(f"{k}={v}" for k, v in (query or {}).items())


def _excerpt(text: str) -> str:
    return one_line(text, 80)


def _status_suffix(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return f" ({one_line(str(message))})" if message and message != "Unauthorized" else ""


_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _http_reason(status: int, data: Any, text: str) -> str:
    head = f"{status} {_REASONS.get(status, 'error')}"
    if isinstance(data, dict) and data.get("kind") == "Status" and data.get("message"):
        return f"{head}: {one_line(str(data['message']))}"
    return f"{head}: {_excerpt(text)}" if text.strip() else head
