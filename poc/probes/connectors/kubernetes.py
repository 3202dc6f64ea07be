"""Read a Kubernetes cluster's GPU facts through its API server; provoke two refusals on request.

`probe_kubernetes` only reads: the server version, the nodes (GPU resources and the labels of
NVIDIA's GPU feature discovery, or else the cloud provider's), the NVIDIA GPU Operator
(ClusterPolicy, NVIDIADriver resources and the operand DaemonSets), a DCGM exporter sample
read through the API server's service proxy, Volcano and KAI / Run:ai queues, OpenShift AI /
Open Data Hub, Slinky (Slurm on Kubernetes) and GPU ResourceQuotas. API groups are discovered
with `GET /apis`; no version of a custom resource is assumed. A read the credentials may not
make (403, or any failure but 404) lands in `could_not_check`: a product is reported absent
only when its API group is not served or its resource answers 404. Every body read is kept in
`raw` as the evidence.

`over_quota` creates objects (opt-in): a Job asking for more GPUs than any node allocates, and,
where the namespace has a ResourceQuota on `requests.nvidia.com/gpu`, a Pod over that quota. It
waits for the scheduler's or the quota's refusal and deletes everything it created, whatever
happens. `planned_objects` shows those manifests beforehand; `sweep` removes leftovers.

The caller's `resolve(host, port)` is the network guard: it is called once per session for the
API server, and the client connects to the address it returns (TLS is still verified against
the name). A kubeconfig is read as data: exec plugins, auth providers and file references are
refused, never run or opened. No Django here: the module runs inside a Celery task as well.
"""

import base64
import contextlib
import ipaddress
import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import quote, urlsplit

import urllib3
import yaml
from kubernetes import client as k8s

from poc.probes.facts import MigDevice, NodeFacts, XidEvent, new_gpu, new_node

FORMAT = "workbench-k8s-facts/1"
NODES_SOURCE = "kubernetes: GET /api/v1/nodes"
DCGM_SOURCE = "kubernetes: dcgm-exporter metrics (service proxy)"
RAW_TEXT_LIMIT = 4 * 1024 * 1024  # evidence kept per response
MAX_BODY = 64 * 1024 * 1024  # a larger answer is not read at all
PAGE_LIMIT = 500  # items per list request (the API server pages with `continue`)
POLL_SECONDS = 1.0  # how often over_quota looks at its pod
GPU = "nvidia.com/gpu"
GPU_SHARED = "nvidia.com/gpu.shared"
QUOTA_GPU = "requests.nvidia.com/gpu"
DEFAULT_OPERATOR_NAMESPACE = "gpu-operator"
VOLCANO_BEFORE_1 = "scheduling.incubator.k8s.io"
VOLCANO_HIERARCHY = "volcano.sh/hierarchy"  # queue annotation: "root/<parent>/<queue>"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: the pods must not be scheduled

Resolve = Callable[[str, int], str]

# GPU Operator operands, by DaemonSet name prefix (longest first, so nvidia-dcgm-exporter is not
# taken for nvidia-dcgm).
OPERANDS = (
    "nvidia-sandbox-device-plugin-daemonset",
    "nvidia-device-plugin-mps-control-daemon",
    "nvidia-container-toolkit-daemonset",
    "nvidia-vgpu-manager-daemonset",
    "nvidia-device-plugin-daemonset",
    "nvidia-node-status-exporter",  # OpenShift's
    "nvidia-vgpu-device-manager",
    "nvidia-operator-validator",
    "nvidia-sandbox-validator",
    "nvidia-driver-daemonset",
    "gpu-feature-discovery",
    "nvidia-dcgm-exporter",
    "nvidia-vfio-manager",
    "nvidia-kata-manager",
    "nvidia-mig-manager",
    "nvidia-cc-manager",
    # Drivers managed through NVIDIADriver resources (spec.driver.useNvidiaDriverCRD): one
    # DaemonSet per OS and driver, "nvidia-gpu-driver-ubuntu22.04-<hash>".
    "nvidia-gpu-driver",
    "nvidia-dcgm",  # the standalone host engine of older releases
)

# Labels a managed cluster puts on GPU nodes itself, read where GPU feature discovery has not
# labelled the node (GFD's nvidia.com/gpu.product always wins). Model names, by label, in order:
# GKE's accelerator type ("nvidia-tesla-a100", "nvidia-h100-80gb", "nvidia-l4"), EKS Auto Mode's
# and Karpenter's (on AWS) GPU name ("t4", "l40s"). AKS's kubernetes.azure.com/accelerator says
# "nvidia", not a model; the k8s.amazonaws.com/accelerator label of EKS node groups is set by
# hand (often "true"): neither is read as a model.
MODEL_LABELS = (
    "cloud.google.com/gke-accelerator",
    "eks.amazonaws.com/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-name",
)
GKE_PARTITION = "cloud.google.com/gke-gpu-partition-size"  # MIG profile of every GPU ("1g.5gb")
GKE_SHARING = "cloud.google.com/gke-gpu-sharing-strategy"  # time-sharing / TIME_SHARING, mps / MPS
GKE_SHARED_CLIENTS = "cloud.google.com/gke-max-shared-clients-per-gpu"
# Karpenter's and EKS Auto Mode's GPU count of the instance and memory of one GPU in MiB
# ("karpenter.k8s.aws/instance-gpu-count": "1", "...-gpu-memory": "22888" on a g6 with an L4),
# read where feature discovery gives no gpu.count / gpu.memory.
COUNT_LABELS = ("eks.amazonaws.com/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-count")
MEMORY_LABELS = ("eks.amazonaws.com/instance-gpu-memory", "karpenter.k8s.aws/instance-gpu-memory")
CLOUD_GPU_LABELS = (
    *MODEL_LABELS,
    *COUNT_LABELS,
    *MEMORY_LABELS,
    GKE_PARTITION,
    GKE_SHARING,
    GKE_SHARED_CLIENTS,
)

DCGM_PORT = 9400
# The exporter's per-code Xid counters (label xid="<code>", the value how many times it came):
# DCGM_EXP_XID_ERRORS_COUNT within a window (label window_size_in_ms, the xid-count-window-size
# setting), DCGM_EXP_XID_ERRORS_TOTAL since the exporter started. DCGM_FI_DEV_XID_ERRORS beside
# them holds the last code only.
_DCGM_XID_COUNTS = ("DCGM_EXP_XID_ERRORS_COUNT", "DCGM_EXP_XID_ERRORS_TOTAL")
_DCGM_TO_GPU = {  # exporter field -> GpuFacts field, where the exporter's Hostname is the node
    "DCGM_FI_DEV_GPU_TEMP": "temperature_c",
    "DCGM_FI_DEV_GPU_UTIL": "utilization_gpu_pct",
    "DCGM_FI_DEV_POWER_USAGE": "power_draw_w",
}
# dcgm-exporter 1.x (the GPU Operator's 1.x releases) wrote lower-case names with a "uuid"
# label; read as the field names of the later exporters.
_DCGM_V1_NAMES = {
    "dcgm_gpu_temp": "DCGM_FI_DEV_GPU_TEMP",
    "dcgm_gpu_utilization": "DCGM_FI_DEV_GPU_UTIL",
    "dcgm_power_usage": "DCGM_FI_DEV_POWER_USAGE",
    "dcgm_fb_used": "DCGM_FI_DEV_FB_USED",
    "dcgm_fb_free": "DCGM_FI_DEV_FB_FREE",
    "dcgm_sm_clock": "DCGM_FI_DEV_SM_CLOCK",
    "dcgm_mem_clock": "DCGM_FI_DEV_MEM_CLOCK",
    "dcgm_memory_temp": "DCGM_FI_DEV_MEMORY_TEMP",
    "dcgm_xid_errors": "DCGM_FI_DEV_XID_ERRORS",
}

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_LABEL_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_METRIC_LINE = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+\S+)?\s*$")
_METRIC_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_LABEL_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


class ConnectorError(Exception):
    """The cluster could not be read; the message is one readable line without any secret."""


@dataclass
class KubeTarget:
    """How to reach one API server: a URL with a bearer token and CA, or a kubeconfig's text.

    Non-empty `api_url`, `token` and `ca_pem` override what the kubeconfig says."""

    api_url: str = ""  # e.g. https://k8s.example.com:6443
    token: str = ""  # bearer token
    ca_pem: str = ""  # CA certificate PEM text
    kubeconfig: str = ""  # kubeconfig YAML text (alternative to api_url/token/ca)
    insecure_skip_tls_verify: bool = False
    timeout: float = 20.0


@dataclass
class _Endpoint:
    scheme: str
    host: str
    port: int
    prefix: str  # path before /api (a proxy such as Rancher's /k8s/clusters/<id>)
    token: str = ""
    ca_pem: str = ""
    cert_pem: str = ""
    key_pem: str = ""
    insecure: bool = False
    tls_server_name: str = ""


@dataclass
class _Reply:
    status: int  # 0: no answer (the reason is in error)
    text: str
    data: Any = None  # the parsed JSON, if any
    error: str = ""  # why this is not a usable answer; empty when it is

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class _Listing:
    state: str  # "ok", "missing" (not installed) or "failed" (could not check)
    items: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    version: str = ""


# --- target and kubeconfig -------------------------------------------------------------------


def _kubeconfig_endpoint(text: str) -> _Endpoint:
    """The endpoint of the kubeconfig's current context, read as data only."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConnectorError(f"the kubeconfig is not valid YAML: {_one_line(str(exc))}") from None
    if not isinstance(doc, dict):
        raise ConnectorError("the kubeconfig is not a YAML mapping")
    contexts = _named(doc, "contexts", "context")
    if not contexts:
        raise ConnectorError("the kubeconfig has no contexts")
    current = doc.get("current-context") or ""
    if current:
        if current not in contexts:
            raise ConnectorError(f"the kubeconfig's current-context {current!r} is not defined")
        context = contexts[current]
    elif len(contexts) == 1:
        context = next(iter(contexts.values()))
    else:
        raise ConnectorError("the kubeconfig has several contexts and no current-context")
    clusters = _named(doc, "clusters", "cluster")
    users = _named(doc, "users", "user")
    cluster = clusters.get(str(context.get("cluster") or ""))
    if cluster is None:
        raise ConnectorError("the kubeconfig's context names a cluster it does not define")
    user = users.get(str(context.get("user") or ""), {}) if context.get("user") else {}
    if context.get("user") and str(context["user"]) not in users:
        raise ConnectorError("the kubeconfig's context names a user it does not define")

    refused_user = {
        "exec": "kubeconfig users.exec runs local commands: refused",
        "auth-provider": "kubeconfig users.auth-provider runs a login plugin: refused",
        "tokenFile": "kubeconfig users.tokenFile names a local file: refused (put the token in)",
        "client-certificate": "kubeconfig users.client-certificate names a local file: refused "
        "(use client-certificate-data)",
        "client-key": "kubeconfig users.client-key names a local file: refused "
        "(use client-key-data)",
        "username": "kubeconfig basic authentication (username/password) is not supported",
        "password": "kubeconfig basic authentication (username/password) is not supported",
        "as": "kubeconfig impersonation (as, as-groups) is not supported",
        "as-groups": "kubeconfig impersonation (as, as-groups) is not supported",
    }
    for key, message in refused_user.items():
        if user.get(key):
            raise ConnectorError(message)
    if cluster.get("certificate-authority"):
        raise ConnectorError(
            "kubeconfig clusters.certificate-authority names a local file: refused "
            "(use certificate-authority-data)"
        )
    if cluster.get("proxy-url"):
        raise ConnectorError("kubeconfig clusters.proxy-url is not supported: refused")

    server = str(cluster.get("server") or "")
    if not server:
        raise ConnectorError("the kubeconfig's cluster has no server")
    endpoint = _url_endpoint(server)
    endpoint.token = str(user.get("token") or "")
    endpoint.ca_pem = _b64_pem(cluster.get("certificate-authority-data"), "certificate-authority")
    endpoint.cert_pem = _b64_pem(user.get("client-certificate-data"), "client-certificate")
    endpoint.key_pem = _b64_pem(user.get("client-key-data"), "client-key")
    if bool(endpoint.cert_pem) != bool(endpoint.key_pem):
        raise ConnectorError("the kubeconfig gives a client certificate without its key (or back)")
    endpoint.insecure = cluster.get("insecure-skip-tls-verify") is True
    endpoint.tls_server_name = str(cluster.get("tls-server-name") or "")
    return endpoint


def _named(doc: dict[str, Any], section: str, inner: str) -> dict[str, dict[str, Any]]:
    """A kubeconfig list section ({name, <inner>: {...}}) as a dict by name."""
    entries = doc.get(section) or []
    if not isinstance(entries, list):
        raise ConnectorError(f"the kubeconfig's {section} is not a list")
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("name") is not None:
            body = entry.get(inner) or {}
            if not isinstance(body, dict):
                raise ConnectorError(f"the kubeconfig's {section} entry is not a mapping")
            found[str(entry["name"])] = body
    return found


def _b64_pem(value: Any, what: str) -> str:
    if not value:
        return ""
    try:
        text = base64.b64decode(str(value), validate=False).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        raise ConnectorError(f"the kubeconfig's {what}-data is not base64 PEM") from None
    if "-----BEGIN " not in text:
        raise ConnectorError(f"the kubeconfig's {what}-data is not a PEM block")
    return text


def _url_endpoint(url: str) -> _Endpoint:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ConnectorError("the API server URL is not a valid URL") from None
    if parts.scheme not in ("https", "http"):
        raise ConnectorError("the API server URL must start with https:// (or http://)")
    if not parts.hostname:
        raise ConnectorError("the API server URL has no host")
    if parts.username or parts.password:
        raise ConnectorError("the API server URL must not carry credentials")
    if parts.query or parts.fragment:
        raise ConnectorError("the API server URL must not have a query or fragment")
    return _Endpoint(
        scheme=parts.scheme,
        host=parts.hostname,
        port=port or (443 if parts.scheme == "https" else 80),
        prefix=parts.path.rstrip("/"),
    )


def _target_endpoint(target: KubeTarget) -> _Endpoint:
    if target.kubeconfig.strip():
        endpoint = _kubeconfig_endpoint(target.kubeconfig)
        if target.api_url.strip():
            override = _url_endpoint(target.api_url)
            endpoint.scheme, endpoint.host = override.scheme, override.host
            endpoint.port, endpoint.prefix = override.port, override.prefix
    elif target.api_url.strip():
        endpoint = _url_endpoint(target.api_url)
    else:
        raise ConnectorError("no API server given: set an API URL or paste a kubeconfig")
    if target.token:
        endpoint.token = target.token
    if target.ca_pem.strip():
        if "-----BEGIN CERTIFICATE-----" not in target.ca_pem:
            raise ConnectorError("the CA certificate is not PEM text (-----BEGIN CERTIFICATE-----)")
        endpoint.ca_pem = target.ca_pem
    endpoint.insecure = endpoint.insecure or target.insecure_skip_tls_verify
    if any(ch in endpoint.token for ch in "\r\n"):
        raise ConnectorError("the bearer token contains a line break")
    return endpoint


# --- the HTTP session -------------------------------------------------------------------------


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class _Api:
    """One connection to the API server through the official client, recording what it read."""

    def __init__(self, target: KubeTarget, resolve: Resolve) -> None:
        endpoint = _target_endpoint(target)
        self.secrets = [s for s in (endpoint.token, endpoint.key_pem) if len(s) >= 4]
        try:
            address = resolve(endpoint.host, endpoint.port)
        except ConnectorError:
            raise
        except Exception as exc:
            raise ConnectorError(
                f"could not resolve {endpoint.host}: {_one_line(str(exc))}"
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
    ) -> _Reply:
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
            reply = _Reply(status, "", error=f"the answer is larger than {MAX_BODY >> 20} MiB")
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
            return _Reply(status, text, error=f"{status} redirect to {location!r} (not followed)")
        parsed: Any = None
        if json_expected or "json" in content_type:
            try:
                parsed = json.loads(text) if text.strip() else None
            except ValueError:
                parsed = None
        if status >= 400 or status < 200:
            return _Reply(status, text, parsed, error=_http_reason(status, parsed, text))
        if json_expected and not isinstance(parsed, dict):
            kind = content_type.split(";")[0] or "no content type"
            return _Reply(
                status, text, error=f"the answer is not JSON ({kind}): {_excerpt(text) or 'empty'}"
            )
        return _Reply(status, text, parsed)

    def _transport_reason(self, exc: object) -> str:
        return self.scrub(f"no answer from {self.where}: {_one_line(str(exc))}")

    def _failed(self, name: str, reason: str, fatal: bool) -> _Reply:
        if fatal:
            raise ConnectorError(reason)
        self._keep(name, 0, "", note=reason)
        return _Reply(0, "", error=reason)

    def _keep(self, name: str, status: int, text: str, note: str = "") -> None:
        entry: dict[str, Any] = {"name": name, "status": status, "text": text}
        if len(text) > RAW_TEXT_LIMIT:
            entry["text"] = text[:RAW_TEXT_LIMIT]
            note = f"cut at {RAW_TEXT_LIMIT} of {len(text)} characters"
        if note:
            entry["note"] = note
        self.raw.append(entry)

    def list(self, path: str, query: dict[str, str] | None = None) -> _Listing:
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
                return _Listing("missing", reason=reply.error)
            if not reply.ok:
                return _Listing("failed", reason=reply.error)
            page = reply.data.get("items")
            if page is None:
                page = []
            if not isinstance(page, list):
                return _Listing("failed", reason="the answer has no list of items")
            items.extend(item for item in page if isinstance(item, dict))
            token = str(_dig(reply.data, "metadata", "continue") or "")
            if not token or pages >= 1000:
                return _Listing("ok", items)


def _query_text(query: dict[str, str] | None) -> str:
    return "&".join(f"{k}={v}" for k, v in (query or {}).items())


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _excerpt(text: str) -> str:
    return _one_line(text, 80)


def _status_suffix(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return f" ({_one_line(str(message))})" if message and message != "Unauthorized" else ""


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
        return f"{head}: {_one_line(str(data['message']))}"
    return f"{head}: {_excerpt(text)}" if text.strip() else head


def _dig(data: Any, *keys: str) -> Any:
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


def _int(value: Any) -> int | None:
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


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


# --- discovery --------------------------------------------------------------------------------


class _Groups:
    """The API groups the server lists, preferred version first; None: discovery failed."""

    def __init__(self, versions: dict[str, list[str]] | None, reason: str = "") -> None:
        self.versions = versions
        self.reason = reason

    def list(
        self, api: _Api, group: str, plural: str, what: str, result: dict[str, Any]
    ) -> _Listing:
        """The objects of a custom resource (all namespaces), trying each served version."""
        if self.versions is None:
            listing = _Listing("failed", reason=f"API discovery failed ({self.reason})")
        elif group not in self.versions:
            return _Listing("missing", reason=f"API group {group} is not served")
        else:
            listing = _Listing("missing", reason=f"{plural}.{group} is not served")
            for version in self.versions[group]:
                found = api.list(f"/apis/{group}/{version}/{plural}")
                if found.state != "missing":
                    found.version = version
                    listing = found
                    break
        if listing.state == "failed":
            _cannot(result, what, listing.reason)
        return listing


def _discover(api: _Api, result: dict[str, Any]) -> _Groups:
    reply = api.request("GET", "/apis")
    groups = reply.data.get("groups") if reply.ok else None
    if not isinstance(groups, list):
        reason = reply.error or "the answer has no list of groups"
        _cannot(result, "API groups (GET /apis)", reason)
        return _Groups(None, reason)
    versions: dict[str, list[str]] = {}
    for group in groups:
        if not isinstance(group, dict) or not group.get("name"):
            continue
        served = [
            str(v.get("version"))
            for v in group.get("versions") or []
            if isinstance(v, dict) and v.get("version")
        ]
        preferred = _dig(group, "preferredVersion", "version")
        if preferred:
            served = [str(preferred)] + [v for v in served if v != preferred]
        versions[str(group["name"])] = served
    result["api_groups"] = {name: vs for name, vs in sorted(versions.items())}
    return _Groups(versions)


def _cannot(result: dict[str, Any], what: str, reason: str) -> None:
    result["could_not_check"].append({"what": what, "reason": reason})


def _product(
    result: dict[str, Any], key: str, name: str, listing: _Listing, state: str, detail: str
) -> None:
    """One product entry: present True/False, or None (unknown) when it could not be read."""
    present: bool | None
    if listing.state == "failed":
        present, state, detail = None, "could not check", listing.reason
    elif listing.state == "missing":
        present, state, detail = False, "not installed", listing.reason
    else:
        present = True
    result["products"].append(
        {"key": key, "name": name, "present": present, "state": state, "detail": detail}
    )


# --- nodes ------------------------------------------------------------------------------------


def _node_facts(node: dict[str, Any]) -> dict[str, Any]:
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    capacity = status.get("capacity") or {}
    allocatable = status.get("allocatable") or {}

    def pair(resource: str) -> dict[str, int | None] | None:
        if resource not in capacity and resource not in allocatable:
            return None
        return {
            "capacity": _int(capacity.get(resource)),
            "allocatable": _int(allocatable.get(resource)),
        }

    mig = {
        resource: pair(resource)
        for resource in sorted(set(capacity) | set(allocatable))
        if str(resource).startswith("nvidia.com/mig-")
    }
    ready: bool | None = None
    ready_status = ready_reason = None
    for condition in status.get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            ready_status = condition.get("status")
            ready = ready_status == "True" if ready_status in ("True", "False", "Unknown") else None
            ready_reason = condition.get("reason")

    def label(name: str) -> str | None:
        value = labels.get("nvidia.com/" + name)
        return value if value not in (None, "") else None

    driver = label("cuda.driver-version.full") or _dotted(
        label("cuda.driver-version.major"),
        label("cuda.driver-version.minor"),
        label("cuda.driver-version.revision"),
    )
    driver = driver or _dotted(
        label("cuda.driver.major"), label("cuda.driver.minor"), label("cuda.driver.rev")
    )
    cuda = label("cuda.runtime-version.full") or _dotted(
        label("cuda.runtime-version.major"), label("cuda.runtime-version.minor")
    )
    cuda = cuda or _dotted(label("cuda.runtime.major"), label("cuda.runtime.minor"))
    major, minor = _int(label("gpu.compute.major")), _int(label("gpu.compute.minor"))
    gfd: dict[str, Any] = {
        "product": label("gpu.product"),
        "count": _int(label("gpu.count")),
        "memory_mib": _int(label("gpu.memory")),
        "family": label("gpu.family"),
        "compute_capability": f"{major}.{minor}"
        if major is not None and minor is not None
        else None,
        "driver_version": driver,
        "cuda_version": cuda,
        "replicas": _int(label("gpu.replicas")),
        "sharing_strategy": label("gpu.sharing-strategy"),
        "mig_strategy": label("mig.strategy"),
        "mig_capable": _bool(label("mig.capable")),
        "mig_config": label("mig.config"),
        "mig_config_state": label("mig.config.state"),
        "gpu_present": _bool(label("gpu.present")),
        "mig_memory_mib": {
            resource: _int(label(resource.removeprefix("nvidia.com/") + ".memory"))
            for resource in mig
        },
    }
    cloud = {key: labels[key] for key in CLOUD_GPU_LABELS if labels.get(key)}
    model_label = "nvidia.com/gpu.product" if gfd["product"] else None
    model_label = model_label or next((key for key in MODEL_LABELS if key in cloud), None)
    gpu, shared = pair(GPU), pair(GPU_SHARED)
    advertised = [gpu, shared, *mig.values()]
    gpu_node = (
        any(entry and (entry["capacity"] or 0) > 0 for entry in advertised)
        or bool(gfd["gpu_present"])
        or (gfd["count"] or 0) > 0
    )
    info = status.get("nodeInfo") or {}
    taints = (node.get("spec") or {}).get("taints") or []
    return {
        "name": meta.get("name"),
        "ready": ready,
        "ready_status": ready_status,
        "ready_reason": ready_reason,
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
        "gpu_node": gpu_node,
        "gpu": gpu,
        "gpu_shared": shared,
        "mig": mig,
        "gfd": gfd,
        # The GPU model and the label it was read from: GFD's, else the cloud provider's.
        "model": labels[model_label] if model_label else None,
        "model_label": model_label,
        "cloud_labels": cloud,
        "labels": {k: v for k, v in sorted(labels.items()) if k.startswith("nvidia.com/")},
        "taints": [t for t in taints if isinstance(t, dict) and "nvidia" in str(t.get("key"))],
        "kubelet_version": info.get("kubeletVersion"),
        "container_runtime": info.get("containerRuntimeVersion"),
        "os_image": info.get("osImage"),
        "kernel_version": info.get("kernelVersion"),
    }


def _dotted(*parts: str | None) -> str | None:
    return ".".join(p for p in parts if p) if parts and all(parts) else None


def _gpu_node_document(facts: dict[str, Any]) -> NodeFacts:
    """The node's GPU fact document: what the API tells, everything else unknown (None)."""
    gfd = facts["gfd"]
    node = new_node(
        host=facts["name"],
        driver_version=gfd["driver_version"],
        cuda_version=gfd["cuda_version"],
        sources=[NODES_SOURCE],
        warnings=[],
    )
    warnings: list[str] = node["warnings"]
    product = gfd["product"]
    # Without feature discovery, the model the cloud provider labelled the node with (GKE:
    # "nvidia-tesla-a100"); facts["model_label"] names the label.
    name = product.removesuffix("-SHARED") if product else facts["model"]
    cloud = facts["cloud_labels"]
    capacity = (facts["gpu"] or {}).get("capacity")
    shared = (facts["gpu_shared"] or {}).get("capacity")
    mig_total = sum((entry or {}).get("capacity") or 0 for entry in facts["mig"].values())
    labelled, replicas = gfd["count"], gfd["replicas"]
    count_label = "gpu.count label"
    if labelled is None:
        count_key = next((key for key in COUNT_LABELS if _int(cloud.get(key)) is not None), None)
        if count_key:
            labelled, count_label = _int(cloud[count_key]), f"{count_key} label"
    memory = gfd["memory_mib"]
    if memory is None:
        memory = next((_int(cloud[k]) for k in MEMORY_LABELS if _int(cloud.get(k))), None)
    strategy = cloud.get(GKE_SHARING, "").lower().replace("_", "-")
    if replicas is None and strategy in ("", "time-sharing", "mps"):
        # GKE's own time-sharing and MPS both advertise each GPU once per client it may take
        # (a pod asks nvidia.com/gpu: 1 for one client's share).
        replicas = _int(cloud.get(GKE_SHARED_CLIENTS))
    mps = strategy == "mps" or str(gfd["sharing_strategy"] or "").lower() == "mps"
    all_mig = False
    count: int | None
    if gfd["mig_strategy"] == "single" and product and "-MIG-" in product:
        warnings.append(
            f"MIG single strategy: nvidia.com/gpu counts MIG devices ({capacity} × {product}); "
            "the number of physical GPUs is not reported"
        )
        count = None
    elif cloud.get(GKE_PARTITION) and not product:
        # GKE's MIG partitions: each is advertised as one nvidia.com/gpu.
        partition = cloud[GKE_PARTITION]
        warnings.append(
            f"GKE MIG partitions ({GKE_PARTITION}={partition}): nvidia.com/gpu counts MIG "
            f"devices ({capacity} × {partition}); the number of physical GPUs is not reported"
        )
        count = None
    elif not capacity and mig_total:
        all_mig = True
        count = labelled
        if count is None:
            warnings.append("MIG mixed strategy without a gpu.count label: GPU count unknown")
    elif capacity or shared:
        advertised = capacity or shared or 0
        sharing = replicas is not None and replicas > 1
        if labelled is not None:
            count = labelled
            if labelled != advertised and not sharing and not mig_total:
                warnings.append(
                    f"the node advertises {advertised} {GPU if capacity else GPU_SHARED} "
                    f"but its {count_label} says {labelled}"
                )
        elif sharing and replicas and advertised % replicas == 0:
            count = advertised // replicas
        else:
            count = advertised
        if mig_total and capacity:
            # Mixed strategy with some GPUs split: nvidia.com/gpu counts the whole ones only.
            if labelled is not None and labelled > capacity:
                warnings.append(
                    f"{labelled - capacity} of {labelled} GPUs are in MIG mode ({mig_total} MIG "
                    "devices advertised); the node object does not say which"
                )
            elif labelled is None:
                warnings.append(
                    f"the node also advertises {mig_total} MIG devices of GPUs in MIG mode, "
                    "which are not counted here (no gpu.count label)"
                )
        if sharing:
            how = "MPS" if mps else "time-slicing"
            warnings.append(f"{how}: each GPU is advertised {replicas} times")
        # Capacity counts every device the plugin found, allocatable only the healthy ones
        # (the device plugin withholds a GPU after a critical Xid or double-bit ECC error).
        usable = (facts["gpu"] if capacity else facts["gpu_shared"] or {}).get("allocatable")
        if usable is not None and usable < advertised:
            warnings.append(
                f"{advertised - usable} of {advertised} {GPU if capacity else GPU_SHARED} "
                "are not allocatable: the device plugin withholds devices it finds unhealthy"
            )
    else:
        count = labelled
        if count:
            warnings.append("GPUs are labelled but no nvidia.com/gpu resource is advertised")
    for index in range(count or 0):
        gpu = new_gpu(
            index=index,
            name=name,
            memory_total_mib=memory,
            compute_capability=gfd["compute_capability"],
        )
        if all_mig:
            gpu["mig_mode_current"] = True
            if count == 1:
                gpu["mig_devices"] = _mig_devices(facts)
        node["gpus"].append(gpu)
    return node


def _mig_devices(facts: dict[str, Any]) -> list[MigDevice]:
    devices: list[MigDevice] = []
    for resource, entry in facts["mig"].items():
        for _ in range((entry or {}).get("capacity") or 0):
            devices.append(
                MigDevice(
                    gpu_instance_id=None,
                    compute_instance_id=None,
                    profile=resource.removeprefix("nvidia.com/mig-"),
                    profile_id=None,
                    memory_total_mib=facts["gfd"]["mig_memory_mib"].get(resource),
                    uuid=None,
                )
            )
    return devices


def _read_nodes(api: _Api, result: dict[str, Any]) -> None:
    listing = api.list("/api/v1/nodes")
    if listing.state != "ok":
        _cannot(result, "nodes (GET /api/v1/nodes)", listing.reason)
        return
    for item in listing.items:
        facts = _node_facts(item)
        result["nodes"].append(facts)
        if facts["gpu_node"]:
            result["gpu_nodes"].append(_gpu_node_document(facts))


# --- products ---------------------------------------------------------------------------------


def _conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for condition in _dig(obj, "status", "conditions") or []:
        if isinstance(condition, dict):
            found.append({k: condition.get(k) for k in ("type", "status", "reason", "message")})
    return found


def _read_gpu_operator(api: _Api, groups: _Groups, result: dict[str, Any]) -> None:
    listing = groups.list(
        api, "nvidia.com", "clusterpolicies", "GPU Operator ClusterPolicy", result
    )
    policies = [
        {
            "name": _dig(item, "metadata", "name"),
            "state": _dig(item, "status", "state"),
            "namespace": _dig(item, "status", "namespace"),
            "use_nvidia_driver_crd": _bool(_dig(item, "spec", "driver", "useNvidiaDriverCRD")),
            "conditions": _conditions(item),
        }
        for item in listing.items
    ]
    operator: dict[str, Any] = {"present": None, "cluster_policies": policies, "operands": []}
    result["gpu_operator"] = operator
    drivers = _read_nvidia_drivers(api, groups, result)
    operator["nvidia_drivers"] = drivers
    if listing.state == "ok" and not policies:
        listing = _Listing(
            "missing", reason="the ClusterPolicy resource exists but holds no policy"
        )
    operator["present"] = {"ok": True, "missing": False}.get(listing.state)
    if listing.state != "ok":
        _product(result, "kubernetes-gpu-operator", "NVIDIA GPU Operator", listing, "", "")
        return
    # The operator reconciles one ClusterPolicy and marks any other "ignored": the one it
    # reconciles tells the state, whatever order the API server lists them in.
    active = next((p for p in policies if p["state"] != "ignored"), policies[0])
    operator["active_policy"] = active["name"]
    operator["use_nvidia_driver_crd"] = active["use_nvidia_driver_crd"]
    namespace = active["namespace"] or next(
        (p["namespace"] for p in policies if p["namespace"]), None
    )
    namespace = namespace or DEFAULT_OPERATOR_NAMESPACE
    operator["namespace"] = namespace
    operands = _operand_daemonsets(api, namespace, result)
    found_in = sorted({d["namespace"] for d in operands if d.get("namespace")})
    if found_in and namespace not in found_in:
        # Older operators (v1.x) name no namespace and run operands in gpu-operator-resources.
        operator["namespace"] = found_in[0]
    operator["operands"] = operands
    # A DaemonSet no node is selected for is idle, not failing: the operator labels only
    # MIG-capable nodes for the MIG manager, and none for the driver where it is pre-installed.
    idle = [d["name"] for d in operands if d["state"] == "none scheduled"]
    scheduled = [d for d in operands if d["state"] != "none scheduled"]
    not_ready = [d["name"] for d in scheduled if d["state"] != "ready"]
    operator["operands_not_ready"] = not_ready
    operator["operands_idle"] = idle
    state = str(active["state"] or "unknown")
    detail = f"ClusterPolicy {active['name']}: {state}"
    ignored = [str(p["name"]) for p in policies if p["state"] == "ignored"]
    if ignored:
        detail += f" (duplicates ignored by the operator: {', '.join(ignored)})"
    if scheduled:
        ready = len(scheduled) - len(not_ready)
        detail += f"; operand DaemonSets ready {ready}/{len(scheduled)}"
        if not_ready:
            detail += " (not ready: " + ", ".join(not_ready) + ")"
    if idle:
        detail += "; on no node: " + ", ".join(idle)
    drivers_text = _nvidia_drivers_text(drivers, active["use_nvidia_driver_crd"])
    if drivers_text:
        detail += "; " + drivers_text
    _product(result, "kubernetes-gpu-operator", "NVIDIA GPU Operator", listing, state, detail)


def _read_nvidia_drivers(api: _Api, groups: _Groups, result: dict[str, Any]) -> dict[str, Any]:
    """The GPU Operator's NVIDIADriver resources (cluster-scoped; the operator deploys drivers
    from them instead of from the ClusterPolicy when its spec.driver.useNvidiaDriverCRD is
    true): name, status.state ("ready", "notReady") and the Ready / Error conditions."""
    listing = groups.list(
        api, "nvidia.com", "nvidiadrivers", "GPU Operator NVIDIADriver resources", result
    )
    present = {"ok": True, "missing": False}.get(listing.state)
    found: dict[str, Any] = {
        "present": present,
        "state": {"ok": "read", "missing": "not installed"}.get(listing.state, "could not check"),
        "reason": listing.reason,
        "version": listing.version,
        "drivers": [],
    }
    for item in listing.items:
        conditions = _conditions(item)
        by_type = {c["type"]: c for c in conditions if c.get("type") in ("Ready", "Error")}
        ready, error = by_type.get("Ready") or {}, by_type.get("Error") or {}
        found["drivers"].append(
            {
                "name": _dig(item, "metadata", "name"),
                "state": _dig(item, "status", "state"),
                "driver_type": _dig(item, "spec", "driverType"),
                "version": _dig(item, "spec", "version"),
                "ready": ready.get("status"),
                "ready_reason": ready.get("reason"),
                "error": error.get("status"),
                "error_reason": error.get("reason"),
                "error_message": error.get("message") if error.get("status") == "True" else None,
                "conditions": conditions,
            }
        )
    return found


def _nvidia_drivers_text(drivers: dict[str, Any], use_crd: bool | None) -> str:
    """The NVIDIADriver part of the GPU Operator's detail; empty where there is nothing to say
    (the resource not served, or served but unused)."""
    if drivers["present"] is None:
        return f"NVIDIADriver resources: could not check ({drivers['reason']})"
    if not drivers["drivers"]:
        if not use_crd:
            return ""
        if drivers["present"] is False:
            return (
                "spec.driver.useNvidiaDriverCRD is set but NVIDIADriver resources are not "
                f"served ({drivers['reason']})"
            )
        return "spec.driver.useNvidiaDriverCRD is set but no NVIDIADriver resource exists"
    parts = []
    for driver in drivers["drivers"]:
        said = []
        if driver["ready"] is not None:
            said.append(f"Ready {driver['ready']}: {driver['ready_reason'] or 'no reason'}")
        if driver["error"] == "True":
            said.append(f"Error: {driver['error_reason'] or 'no reason'}")
        text = f"{driver['name']} {driver['state'] or 'without a state'}"
        parts.append(text + (f" ({'; '.join(said)})" if said else ""))
    return "NVIDIADriver " + ", ".join(parts)


def _operand_daemonsets(api: _Api, namespace: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    ns = quote(namespace, safe="")
    listing = api.list(f"/apis/apps/v1/namespaces/{ns}/daemonsets")
    operands = [d for d in (_daemonset(item) for item in listing.items) if d]
    if listing.state == "ok" and not operands:
        # The operator may live elsewhere than the policy says: look by name in all namespaces.
        listing = api.list("/apis/apps/v1/daemonsets")
        operands = [d for d in (_daemonset(item) for item in listing.items) if d]
    if listing.state == "failed":
        _cannot(result, f"GPU Operator DaemonSets (namespace {namespace})", listing.reason)
    return operands


def _daemonset(item: dict[str, Any]) -> dict[str, Any] | None:
    name = str(_dig(item, "metadata", "name") or "")
    operand = next((prefix for prefix in OPERANDS if name.startswith(prefix)), None)
    if operand is None:
        return None
    status = item.get("status") or {}
    desired = _int(status.get("desiredNumberScheduled"))
    ready = _int(status.get("numberReady"))
    if desired is None or ready is None:
        state = "unknown"
    elif desired == 0:
        state = "none scheduled"
    else:
        state = "ready" if ready >= desired else "not ready"
    return {
        "name": name,
        "namespace": _dig(item, "metadata", "namespace"),
        "operand": operand,
        "desired": desired,
        "ready": ready,
        "available": _int(status.get("numberAvailable")),
        "updated": _int(status.get("updatedNumberScheduled")),
        "state": state,
    }


def parse_prometheus(text: str) -> tuple[list[tuple[str, dict[str, str], float]], int]:
    """Samples (name, labels, value) of a Prometheus text exposition, and how many lines were
    skipped as unreadable. Comments, blank lines and timestamps are ignored."""
    samples: list[tuple[str, dict[str, str], float]] = []
    skipped = 0
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _METRIC_LINE.match(line)
        if not match:
            skipped += 1
            continue
        name, label_text, value_text = match.groups()
        labels: dict[str, str] = {}
        if label_text:
            inner, pos = label_text[1:-1], 0
            while pos < len(inner):
                label_match = _METRIC_LABEL.match(inner, pos)
                if not label_match or label_match.end() == pos:
                    break
                labels[label_match.group(1)] = _unescape_label(label_match.group(2))
                pos = label_match.end()
            if inner[pos:].strip():
                skipped += 1
                continue
        try:
            value = float(value_text)
        except ValueError:
            skipped += 1
            continue
        samples.append((name, labels, value))
    return samples, skipped


_LABEL_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


def _unescape_label(raw: str) -> str:
    """A label value of the text format with its escapes undone in one left-to-right pass:
    `\\\\` is a backslash, `\\"` a quote, `\\n` a newline (so `\\\\n` is a backslash and an
    "n"). Any other backslash is kept as written."""
    return _LABEL_ESCAPE.sub(lambda m: _LABEL_ESCAPES.get(m.group(1), m.group(0)), raw)


def _dcgm_no_value(value: float) -> bool:
    """DCGM's markers for a field without a value, which exporters before the filtering of
    mid-2020 printed as numbers: the int64 blanks from 0x7ffffffffffffff0 (read as a float,
    9.223372036854776e18) and the float64 blanks from 2**47 (140737488355328.0 .. +3); also
    NaN and infinities."""
    if not math.isfinite(value):
        return True
    return value >= float(0x7FFFFFFFFFFFFFF0) or 2.0**47 <= value <= 2.0**47 + 3


def _dcgm_gpus(text: str) -> tuple[list[dict[str, Any]], int]:
    """One entry per GPU (or MIG instance) of an exporter sample; a field DCGM had no value
    for is named in the entry's `no_value`, not kept as a reading. The per-code Xid counters
    go to `xid_counts` ({metric, code, count, window_ms}), one entry per code."""
    samples, skipped = parse_prometheus(text)
    gpus: dict[tuple[str, ...], dict[str, Any]] = {}
    for name, labels, value in samples:
        if name.startswith("dcgm_"):
            name = _DCGM_V1_NAMES.get(name, name)
        if not name.upper().startswith("DCGM_"):
            continue
        uuid = labels.get("UUID") or labels.get("uuid")
        key = (
            labels.get("Hostname", ""),
            labels.get("gpu", ""),
            uuid or "",
            labels.get("GPU_I_ID", ""),
        )
        entry = gpus.get(key)
        if entry is None:
            entry = gpus[key] = {
                "hostname": labels.get("Hostname"),
                "gpu": _int(labels.get("gpu")),
                "uuid": uuid,
                "model": labels.get("modelName"),
                "device": labels.get("device"),
                "driver_version": labels.get("DCGM_FI_DRIVER_VERSION"),
                "mig_instance": labels.get("GPU_I_ID"),
                "mig_profile": labels.get("GPU_I_PROFILE"),
                "metrics": {},
                "no_value": [],
                "xid_counts": [],
            }
        if _dcgm_no_value(value):
            entry["no_value"].append(name)
        elif name in _DCGM_XID_COUNTS:
            # One sample per Xid code (label xid): kept apart, as the codes share the name.
            code = _int(labels.get("xid"))
            if code is not None:
                entry["xid_counts"].append(
                    {
                        "metric": name,
                        "code": code,
                        "count": int(value),
                        "window_ms": _int(labels.get("window_size_in_ms")),
                    }
                )
        else:
            entry["metrics"][name] = value
    return list(gpus.values()), skipped


def _read_dcgm(api: _Api, result: dict[str, Any]) -> None:
    dcgm: dict[str, Any] = {"present": None, "service": None, "gpus": []}
    result["dcgm"] = dcgm
    namespace = (result["gpu_operator"] or {}).get("namespace") or DEFAULT_OPERATOR_NAMESPACE
    ns = quote(namespace, safe="")
    listing = api.list(f"/api/v1/namespaces/{ns}/services")
    found = _dcgm_service(listing.items)
    if found is None and listing.state != "failed":
        listing = api.list("/api/v1/services")
        found = _dcgm_service(listing.items)
    if found is None:
        if listing.state == "failed":
            _cannot(result, "DCGM exporter Service", listing.reason)
        else:
            dcgm["present"] = False
            dcgm["detail"] = f"no Service named *dcgm-exporter* or on port {DCGM_PORT}"
        return
    svc_ns, svc_name, port = found
    path = (
        f"/api/v1/namespaces/{quote(svc_ns, safe='')}/services/"
        f"{quote(svc_name, safe='')}:{quote(port, safe='')}/proxy/metrics"
    )
    dcgm.update(present=True, service=f"{svc_ns}/{svc_name}:{port}", path=path)
    reply = api.request("GET", path, accept="text/plain, */*", json_expected=False, fatal=False)
    if not reply.ok:
        _cannot(result, f"DCGM exporter metrics (GET {path})", reply.error)
        return
    gpus, skipped = _dcgm_gpus(reply.text)
    if not gpus:
        _cannot(result, f"DCGM exporter metrics (GET {path})", "no DCGM_* sample in the answer")
        return
    dcgm["gpus"] = gpus
    dcgm["skipped_lines"] = skipped
    dcgm["note"] = "one exporter pod's sample: the service proxy reaches one endpoint"
    _merge_dcgm(result["gpu_nodes"], gpus)


def _dcgm_service(items: Iterable[dict[str, Any]]) -> tuple[str, str, str] | None:
    for item in items:
        name = str(_dig(item, "metadata", "name") or "")
        ports = [p for p in _dig(item, "spec", "ports") or [] if isinstance(p, dict)]
        on_port = next((p for p in ports if _int(p.get("port")) == DCGM_PORT), None)
        if on_port is None and "dcgm-exporter" in name and ports:
            on_port = ports[0]
        if on_port is not None and name:
            port = str(on_port.get("name") or on_port.get("port"))
            return str(_dig(item, "metadata", "namespace") or "default"), name, port
    return None


def _merge_dcgm(nodes: list[NodeFacts], gpus: list[dict[str, Any]]) -> None:
    """Readings of the exporters whose Hostname label is a node's name (older exporters label
    the exporter pod's name instead: those stay in `dcgm` only)."""
    by_host = {node["host"]: node for node in nodes}
    for sample in gpus:
        node = by_host.get(sample["hostname"])
        if node is None or sample["gpu"] is None or sample["mig_instance"]:
            continue
        gpu = next((g for g in node["gpus"] if g["index"] == sample["gpu"]), None)
        if gpu is None:
            continue
        metrics = sample["metrics"]
        gpu["uuid"] = gpu["uuid"] or sample["uuid"]
        if node["driver_version"] is None and sample.get("driver_version"):
            node["driver_version"] = str(sample["driver_version"])
        for metric, key in _DCGM_TO_GPU.items():
            if metric in metrics:
                gpu[key] = float(metrics[metric])  # type: ignore[literal-required]
        if "DCGM_FI_DEV_FB_USED" in metrics:
            gpu["memory_used_mib"] = int(metrics["DCGM_FI_DEV_FB_USED"])
        if "DCGM_FI_DEV_SM_CLOCK" in metrics:
            gpu["sm_clock_mhz"] = int(metrics["DCGM_FI_DEV_SM_CLOCK"])
        counted: set[int] = set()
        for entry in sample.get("xid_counts") or []:
            if entry["count"] <= 0 or entry["code"] <= 0 or entry["code"] in counted:
                continue
            counted.add(entry["code"])
            node["xid_events"].append(
                XidEvent(
                    code=entry["code"],
                    pci_bus_id=None,
                    gpu_index=sample["gpu"],
                    message=_xid_count_message(entry),
                    timestamp=None,
                )
            )
        xid = int(metrics.get("DCGM_FI_DEV_XID_ERRORS", 0))
        if xid > 0 and xid not in counted:
            node["xid_events"].append(
                XidEvent(
                    code=xid,
                    pci_bus_id=None,
                    gpu_index=sample["gpu"],
                    message="last Xid reported by the DCGM exporter (DCGM_FI_DEV_XID_ERRORS)",
                    timestamp=None,
                )
            )
        if DCGM_SOURCE not in node["sources"]:
            node["sources"].append(DCGM_SOURCE)


def _xid_count_message(entry: dict[str, Any]) -> str:
    times = "once" if entry["count"] == 1 else f"{entry['count']} times"
    if entry["metric"] == "DCGM_EXP_XID_ERRORS_TOTAL":
        when = "since the exporter started"
    elif entry["window_ms"]:
        when = f"within its last {entry['window_ms'] / 1000:g} s"
    else:
        when = "within its counting window"
    return f"Xid reported by the DCGM exporter {times} {when} ({entry['metric']})"


def _hierarchy_parent(queue: dict[str, Any]) -> str | None:
    """The parent named by the hierarchy annotation of Volcano before spec.parent (1.4-1.10,
    "root/eng/prod" for queue prod: parent eng)."""
    path = _dig(queue, "metadata", "annotations", VOLCANO_HIERARCHY)
    parts = [p for p in str(path).split("/") if p] if isinstance(path, str) else []
    return parts[-2] if len(parts) >= 2 else None


def _podgroup_refusal(podgroup: dict[str, Any]) -> dict[str, Any] | None:
    """The Unschedulable condition that still holds for a PodGroup, or None.

    Volcano keeps the Unschedulable condition of an earlier scheduling cycle when the group
    is placed later (it adds a Scheduled condition beside it, and many PodGroups carry one
    from their very first cycle): a Running or Completed group, or one whose Scheduled
    condition is newer, is not stuck."""
    if _dig(podgroup, "status", "phase") in ("Running", "Completed"):
        return None
    raw = [c for c in _dig(podgroup, "status", "conditions") or [] if isinstance(c, dict)]

    def when(condition: dict[str, Any]) -> str:
        return str(condition.get("lastTransitionTime") or "")

    refused = [c for c in raw if c.get("type") == "Unschedulable" and c.get("status") == "True"]
    if not refused:
        return None
    latest = max(refused, key=when)
    scheduled = [c for c in raw if c.get("type") == "Scheduled" and c.get("status") == "True"]
    if any(when(c) > when(latest) for c in scheduled):
        return None
    return {k: latest.get(k) for k in ("type", "status", "reason", "message")}


def _read_volcano(api: _Api, groups: _Groups, result: dict[str, Any]) -> None:
    group = "scheduling.volcano.sh"
    listing = groups.list(api, group, "queues", "Volcano queues", result)
    if listing.state == "missing" and groups.versions and VOLCANO_BEFORE_1 in groups.versions:
        # Volcano before 1.0 (and kube-batch) served its objects in the incubator group.
        group = VOLCANO_BEFORE_1
        listing = groups.list(api, group, "queues", "Volcano queues", result)
        if listing.state == "missing":
            listing = _Listing("ok", [], version=groups.versions[group][0])
    queues = [
        {
            "name": _dig(q, "metadata", "name"),
            "weight": _dig(q, "spec", "weight"),
            "capability": _dig(q, "spec", "capability") or {},
            "guarantee": _dig(q, "spec", "guarantee", "resource") or {},
            "deserved": _dig(q, "spec", "deserved") or {},
            "reclaimable": _dig(q, "spec", "reclaimable"),
            "parent": _dig(q, "spec", "parent") or _hierarchy_parent(q),
            "hierarchy": _dig(q, "metadata", "annotations", VOLCANO_HIERARCHY),
            "state": _dig(q, "status", "state"),
            "allocated": _dig(q, "status", "allocated") or {},
        }
        for q in listing.items
    ]
    podgroups: list[dict[str, Any]] = []
    if listing.state == "ok":
        found = groups.list(api, group, "podgroups", "Volcano PodGroups", result)
        for pg in found.items:
            unschedulable = _podgroup_refusal(pg)
            podgroups.append(
                {
                    "name": _dig(pg, "metadata", "name"),
                    "namespace": _dig(pg, "metadata", "namespace"),
                    "queue": _dig(pg, "spec", "queue"),
                    "min_member": _dig(pg, "spec", "minMember"),
                    "phase": _dig(pg, "status", "phase"),
                    "unschedulable": unschedulable,
                }
            )
    result["volcano"] = {
        "version": listing.version or None,
        "queues": queues,
        "podgroups": podgroups,
    }
    # Queues before Volcano 1.0 (kube-batch's v1alpha1) report counts of pods, no state.
    with_state = [q for q in queues if q["state"]]
    open_queues = sum(1 for q in with_state if q["state"] == "Open")
    detail = f"{len(queues)} queues"
    detail += f" ({open_queues} open)" if with_state else ""
    stuck = sum(1 for pg in podgroups if pg["unschedulable"])
    detail += f", {len(podgroups)} PodGroups"
    detail += f", {stuck} unschedulable" if stuck else ""
    _product(result, "volcano", "Volcano", listing, "installed", detail)


def _resources(spec: dict[str, Any], kind: str) -> dict[str, Any]:
    found = _dig(spec, "resources", kind) or {}
    return {
        "quota": found.get("quota"),
        "limit": found.get("limit"),
        "over_quota_weight": found.get("overQuotaWeight"),
    }


def _read_kai_runai(api: _Api, groups: _Groups, result: dict[str, Any]) -> None:
    listing = groups.list(api, "scheduling.run.ai", "queues", "KAI / Run:ai queues", result)
    queues = []
    for item in listing.items:
        spec = item.get("spec") or {}
        queues.append(
            {
                "name": _dig(item, "metadata", "name"),
                "parent": spec.get("parentQueue"),
                "priority": spec.get("priority"),
                "gpu": _resources(spec, "gpu"),
                "cpu": _resources(spec, "cpu"),
                "memory": _resources(spec, "memory"),
            }
        )
    result["kai"] = {"version": listing.version or None, "queues": queues}
    # KAI reads a limit of -1 as none; 0 is a limit (no GPUs at all).
    limited = [
        q["name"] for q in queues if q["gpu"]["limit"] is not None and q["gpu"]["limit"] >= 0
    ]
    detail = f"{len(queues)} queues" + (f", GPU limit on {', '.join(limited)}" if limited else "")
    _product(result, "kai", "NVIDIA KAI Scheduler", listing, "installed", detail)

    projects = groups.list(api, "run.ai", "projects", "Run:ai projects", result)
    departments = groups.list(api, "scheduling.run.ai", "departments", "Run:ai departments", result)
    result["runai"] = {
        "projects": [_runai_object(item) for item in projects.items],
        "departments": [_runai_object(item) for item in departments.items],
    }
    states = {projects.state, departments.state}
    combined = _Listing(
        "ok" if "ok" in states else "failed" if "failed" in states else "missing",
        reason="; ".join(x.reason for x in (projects, departments) if x.state != "ok"),
    )
    detail = f"{len(projects.items)} projects, {len(departments.items)} departments"
    _product(result, "runai", "NVIDIA Run:ai", combined, "installed", detail)


def _runai_object(item: dict[str, Any]) -> dict[str, Any]:
    spec = item.get("spec") or {}
    gpu = {k: v for k, v in spec.items() if "gpu" in k.lower() and not isinstance(v, dict | list)}
    return {
        "name": _dig(item, "metadata", "name"),
        "namespace": _dig(item, "metadata", "namespace"),
        "parent": spec.get("department") or spec.get("parent") or spec.get("parentQueue"),
        "gpu": gpu,
        "resources_gpu": _resources(spec, "gpu") if _dig(spec, "resources", "gpu") else None,
    }


def _component_states(components: Any) -> dict[str, str | None]:
    """Each component's managementState; v3 nests parts of a component one level down
    ("dashboard" > "standard"), read as "dashboard/standard". The first operator v2 releases
    (v1alpha1) said `enabled: true/false` instead, and status.installedComponents of the v1
    releases before status.components maps names to true/false: read as Managed/Removed."""
    states: dict[str, str | None] = {}
    if not isinstance(components, dict):
        return states
    for name, component in components.items():
        if isinstance(component, bool):
            states[str(name)] = "Managed" if component else "Removed"
            continue
        if not isinstance(component, dict):
            states[str(name)] = None
            continue
        own = component.get("managementState")
        if not isinstance(own, str) and isinstance(component.get("enabled"), bool):
            own = "Managed" if component["enabled"] else "Removed"
        parts = {
            f"{name}/{part}": str(value["managementState"])
            for part, value in component.items()
            if isinstance(value, dict) and isinstance(value.get("managementState"), str)
        }
        if isinstance(own, str) or not parts:
            states[str(name)] = own if isinstance(own, str) else None
        states.update(parts)
    return states


def _read_openshift_ai(api: _Api, groups: _Groups, result: dict[str, Any]) -> None:
    listing = groups.list(
        api,
        "datasciencecluster.opendatahub.io",
        "datascienceclusters",
        "DataScienceClusters",
        result,
    )
    clusters = []
    for item in listing.items:
        components = (
            _dig(item, "status", "components")
            or _dig(item, "status", "installedComponents")  # observed, in older releases
            or _dig(item, "spec", "components")
            or {}
        )
        conditions = _conditions(item)
        ready = next((c for c in conditions if c["type"] == "Ready"), None)
        phase = _dig(item, "status", "phase")
        if not phase and ready:
            phase = "Ready" if ready["status"] == "True" else "Not Ready"
        clusters.append(
            {
                "name": _dig(item, "metadata", "name"),
                "phase": phase,
                "phase_reported": _dig(item, "status", "phase") is not None,
                "release": _dig(item, "status", "release"),
                "components": _component_states(components),
                "conditions": conditions,
            }
        )
    result["openshift_ai"] = {"version": listing.version or None, "clusters": clusters}
    state = str(clusters[0]["phase"] or "unknown") if clusters else "no DataScienceCluster"
    managed = [n for c in clusters for n, s in c["components"].items() if s == "Managed"]
    detail = ", ".join(f"{c['name']}: {c['phase'] or 'unknown'}" for c in clusters) or state
    detail += f"; managed components: {', '.join(managed) or 'none'}" if clusters else ""
    release = clusters[0]["release"] if clusters else None
    name = "Red Hat OpenShift AI / Open Data Hub"
    if isinstance(release, dict) and release.get("name"):
        name = str(release["name"])
    _product(result, "openshift-ai", name, listing, state, detail)


def _read_slurm(groups: _Groups, result: dict[str, Any]) -> None:
    # Slinky (SchedMD's slurm-operator) serves slinky.slurm.net; its objects are not read.
    group = "slinky.slurm.net"
    if groups.versions is None:
        listing = _Listing("failed", reason=f"API discovery failed ({groups.reason})")
    elif group in groups.versions:
        listing = _Listing("ok")
    else:
        listing = _Listing("missing", reason=f"API group {group} is not served")
    versions = ", ".join((groups.versions or {}).get(group, []))
    detail = f"API group {group} served ({versions})"
    _product(result, "slurm", "Slurm on Kubernetes (Slinky)", listing, "installed", detail)


def _read_quotas(api: _Api, result: dict[str, Any]) -> None:
    listing = api.list("/api/v1/resourcequotas")
    if listing.state != "ok":
        _cannot(result, "ResourceQuotas (GET /api/v1/resourcequotas)", listing.reason)
        return
    for item in listing.items:
        hard = _dig(item, "spec", "hard") or {}
        used = _dig(item, "status", "used") or {}
        # "requests.alpha.kubernetes.io/nvidia-gpu" is the spelling of Kubernetes 1.6-1.9.
        keys = sorted(k for k in hard if "nvidia.com/" in k or k.endswith("/nvidia-gpu"))
        if keys:
            result["quotas"].append(
                {
                    "namespace": _dig(item, "metadata", "namespace"),
                    "name": _dig(item, "metadata", "name"),
                    "hard": {k: _int(hard[k]) for k in keys},
                    "used": {k: _int(used.get(k)) for k in keys},
                    # False: its scopes leave out the controlled failure's Pod (BestEffort,
                    # Terminating, a PriorityClass), which it then never refuses.
                    "applies_to_probe_pod": _quota_selects_probe_pod(item),
                }
            )


def probe_kubernetes(target: KubeTarget, *, resolve: Resolve) -> dict[str, Any]:
    """Read the cluster's GPU facts (read-only; see the module docstring for what is read).

    Raises ConnectorError when the API server cannot be reached, refuses the credentials (401),
    or is not a Kubernetes API server; a read refused on its own lands in `could_not_check`."""
    api = _Api(target, resolve)
    result: dict[str, Any] = {
        "format": FORMAT,
        "server": api.where,
        "tls": api.tls,
        "server_version": None,
        "api_groups": {},
        "products": [],
        "nodes": [],
        "gpu_nodes": [],
        "gpu_operator": {},
        "dcgm": {},
        "volcano": {"queues": [], "podgroups": []},
        "kai": {"queues": []},
        "runai": {"projects": [], "departments": []},
        "openshift_ai": {"clusters": []},
        "quotas": [],
        "could_not_check": [],
        "raw": api.raw,
    }
    try:
        reply = api.request("GET", "/version")
        if reply.ok and isinstance(reply.data.get("gitVersion"), str):
            result["server_version"] = reply.data["gitVersion"]
        elif reply.status in (403, 429) or reply.status >= 500:
            _cannot(result, "server version (GET /version)", reply.error)
        else:
            raise ConnectorError(
                f"{api.where} is not a Kubernetes API server (GET /version: "
                f"{reply.error or 'no gitVersion in the answer'})"
            )
        groups = _discover(api, result)
        _read_nodes(api, result)
        _read_gpu_operator(api, groups, result)
        _read_dcgm(api, result)
        _read_volcano(api, groups, result)
        _read_kai_runai(api, groups, result)
        _read_openshift_ai(api, groups, result)
        _read_slurm(groups, result)
        _read_quotas(api, result)
    finally:
        api.close()
    return result


def check_kubernetes(target: KubeTarget, *, resolve: Resolve) -> dict[str, Any]:
    """What "test connection" says: the server answers as Kubernetes, with which version, and
    whether these credentials may list nodes (the first thing a probe reads).

    Two requests (`GET /version`, `GET /api/v1/nodes?limit=1`), nothing created. Raises
    ConnectorError when the server cannot be reached, is not Kubernetes or refuses the
    credentials (401); a 403 on nodes is an answer: the account lacks the read-only role.
    """
    api = _Api(target, resolve)
    try:
        reply = api.request("GET", "/version")
        version = reply.data.get("gitVersion") if reply.ok else None
        if not reply.ok and reply.status not in (403, 429) and reply.status < 500:
            raise ConnectorError(
                f"{api.where} is not a Kubernetes API server (GET /version: {reply.error})"
            )
        if reply.ok and not isinstance(version, str):
            raise ConnectorError(
                f"{api.where} is not a Kubernetes API server (GET /version: no gitVersion)"
            )
        nodes = api.request("GET", "/api/v1/nodes", query={"limit": "1"})
    finally:
        api.close()
    return {
        "server": api.where,
        "version": version,
        "nodes_readable": nodes.ok,
        "reason": "" if nodes.ok else f"GET /api/v1/nodes: {nodes.error}",
    }


# --- the controlled failure (creates objects) -------------------------------------------------


def _split_label(label: str) -> tuple[str, str]:
    key, sep, value = label.partition("=")
    prefix, slash, name = key.rpartition("/")
    valid = (
        sep
        and _LABEL_NAME.fullmatch(name)
        and (not slash or (len(prefix) <= 253 and _LABEL_PREFIX.fullmatch(prefix)))
        and (value == "" or _LABEL_NAME.fullmatch(value))
    )
    if not valid:
        raise ConnectorError(f"{label!r} is not a Kubernetes label key=value")
    return key, value


def _check_namespace(namespace: str) -> None:
    if not _DNS_LABEL.fullmatch(namespace or ""):
        raise ConnectorError(f"{namespace!r} is not a namespace name")


def _names(value: str) -> tuple[str, str]:
    slug = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")[:40].strip("-") or "probe"
    return f"workbench-gpus-{slug}", f"workbench-quota-{slug}"


def _pod_spec(gpus: int) -> dict[str, Any]:
    return {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": 0,
        # GPU nodes are tainted in many ways (nvidia.com/gpu, AKS's sku=gpu, a pool's own key):
        # tolerate every NoSchedule taint, so that only the GPU count keeps the pod out and the
        # scheduler's refusal names the shortage. The pod is not meant to run: it asks for more
        # GPUs than any node has, or goes over a quota. NoExecute taints (a node not ready or
        # unreachable) stay untolerated.
        "tolerations": [{"operator": "Exists", "effect": "NoSchedule"}],
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65535,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "probe",
                "image": PAUSE_IMAGE,
                "resources": {
                    "requests": {"cpu": "10m", "memory": "16Mi", GPU: str(gpus)},
                    "limits": {"cpu": "100m", "memory": "32Mi", GPU: str(gpus)},
                },
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
    }


def planned_objects(
    namespace: str, label: str, gpus: int, quota_gpus: int | None = None
) -> list[dict[str, Any]]:
    """The manifests `over_quota` creates, exactly: a Job whose pod asks for `gpus` GPUs, and,
    when `quota_gpus` is given (the namespace's GPU quota left, plus one), a Pod asking that
    many. Every object carries `label` ("key=value")."""
    _check_namespace(namespace)
    key, value = _split_label(label)
    if gpus < 1 or (quota_gpus is not None and quota_gpus < 1):
        raise ConnectorError("the GPU count to ask for must be at least 1")
    job_name, pod_name = _names(value)
    labels = {key: value}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name, "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 900,  # the cluster ends it even if the deletion is lost
            "ttlSecondsAfterFinished": 60,
            "template": {
                "metadata": {"labels": labels},
                "spec": _pod_spec(gpus),
            },
        },
    }
    objects: list[dict[str, Any]] = [job]
    if quota_gpus is not None:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": pod_name, "namespace": namespace, "labels": labels},
                "spec": _pod_spec(quota_gpus),
            }
        )
    return objects


def _max_allocatable(api: _Api) -> int:
    listing = api.list("/api/v1/nodes")
    if listing.state != "ok":
        raise ConnectorError(
            f"could not read the nodes to size the request (give the GPU count): {listing.reason}"
        )
    counts = [_int(_dig(n, "status", "allocatable", GPU)) or 0 for n in listing.items]
    return max(counts, default=0)


# How the Pod over_quota creates answers each quota scope: it sets requests (not BestEffort),
# no activeDeadlineSeconds (not Terminating), no priorityClassName and no cross-namespace
# affinity. A scope not listed here is taken as not selecting it. (A cluster-wide default
# PriorityClass, which admission would give the pod, is not looked up.)
_PROBE_POD_SCOPES = {
    "NotBestEffort": True,
    "BestEffort": False,
    "NotTerminating": True,
    "Terminating": False,
    "PriorityClass": False,
    "CrossNamespacePodAffinity": False,
}


def _quota_selects_probe_pod(quota: dict[str, Any]) -> bool:
    """Whether a ResourceQuota's spec.scopes and spec.scopeSelector select the probe's Pod: a
    quota scoped to BestEffort pods, Terminating pods or a PriorityClass never refuses it."""
    spec = quota.get("spec") or {}
    for scope in spec.get("scopes") or []:
        if not _PROBE_POD_SCOPES.get(str(scope), False):
            return False
    for term in _dig(spec, "scopeSelector", "matchExpressions") or []:
        if not isinstance(term, dict):
            return False
        has = _PROBE_POD_SCOPES.get(str(term.get("scopeName")))
        operator = term.get("operator")
        if has is None:
            return False
        if operator == "Exists":
            matched = has
        elif operator == "DoesNotExist":
            matched = not has
        elif term.get("scopeName") == "PriorityClass" and operator in ("In", "NotIn"):
            matched = operator == "NotIn"  # the pod names no priority class
        else:
            return False
        if not matched:
            return False
    return True


def _gpu_quota(
    api: _Api, namespace: str, skipped: list[str] | None = None
) -> tuple[str, int, int] | None:
    """The namespace's tightest quota on requests.nvidia.com/gpu that applies to the probe's
    Pod: (name, hard, used). Quotas whose scopes do not select it are named in `skipped`."""
    listing = api.list(f"/api/v1/namespaces/{quote(namespace, safe='')}/resourcequotas")
    if listing.state == "failed":
        raise ConnectorError(f"could not read the namespace's ResourceQuotas: {listing.reason}")
    found = []
    for item in listing.items:
        hard = _int(_dig(item, "spec", "hard", QUOTA_GPU))
        if hard is not None and not _quota_selects_probe_pod(item):
            if skipped is not None:
                skipped.append(str(_dig(item, "metadata", "name")))
        elif hard is not None:
            used = _int(_dig(item, "status", "used", QUOTA_GPU)) or 0
            found.append((str(_dig(item, "metadata", "name")), hard, used))
    return min(found, key=lambda q: q[1] - q[2], default=None)


def _delete(api: _Api, path: str, what: str, *, background: bool = False) -> tuple[bool, str]:
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
    if background:
        body["propagationPolicy"] = "Background"  # the Job's pods go too (API default: orphan)
    reply = api.request("DELETE", path, body=body, fatal=False)
    if reply.ok or reply.status == 404:
        return True, ""
    return False, f"could not delete {what}: {reply.error}"


def _remove_labelled(api: _Api, namespace: str, selector: str) -> tuple[list[str], list[str]]:
    """Delete the Jobs and Pods carrying the label; (deleted, problems)."""
    ns = quote(namespace, safe="")
    deleted: list[str] = []
    problems: list[str] = []
    for kind, base, background in (
        ("job", f"/apis/batch/v1/namespaces/{ns}/jobs", True),
        ("pod", f"/api/v1/namespaces/{ns}/pods", False),
    ):
        listing = api.list(base, {"labelSelector": selector})
        if listing.state == "failed":
            problems.append(f"could not list {kind}s to delete: {listing.reason}")
            continue
        for item in listing.items:
            name = str(_dig(item, "metadata", "name") or "")
            if not name:
                continue
            what = f"{kind}/{namespace}/{name}"
            done, problem = _delete(
                api, f"{base}/{quote(name, safe='')}", what, background=background
            )
            if done:
                deleted.append(what)
            else:
                problems.append(problem)
    return deleted, problems


# The reasons of the event a scheduler writes on a pod it cannot place: kube-scheduler and
# Volcano write FailedScheduling, the KAI scheduler Unschedulable.
REFUSAL_REASONS = ("FailedScheduling", "Unschedulable")
# The KAI scheduler's words for a shortage of GPUs ("No nodes with enough resources were found: 2
# node(s) didn't have enough resources: GPUs."), where kube-scheduler writes "Insufficient
# nvidia.com/gpu".
_KAI_GPU_SHORTAGE = re.compile(r"didn't have enough resources?: GPUs\b", re.IGNORECASE)


def _gpu_shortage(message: str) -> bool:
    """Whether a scheduler's refusal names the shortage of GPUs (kube-scheduler or KAI)."""
    return f"insufficient {GPU}" in message.lower() or bool(_KAI_GPU_SHORTAGE.search(message))


def _event_messages(api: _Api, namespace: str, name: str, *reasons: str) -> list[str]:
    """The messages of the events on object `name` whose reason is one of `reasons`, in the
    order the API server lists them."""
    reply = api.request(
        "GET",
        f"/api/v1/namespaces/{quote(namespace, safe='')}/events",
        query={"fieldSelector": f"involvedObject.name={name}"},
        fatal=False,
    )
    items = reply.data.get("items") if reply.ok else None
    return [
        str(event.get("message") or event.get("reason"))
        for event in (items if isinstance(items, list) else [])
        if isinstance(event, dict) and event.get("reason") in reasons
    ]


def _event_message(api: _Api, namespace: str, name: str, *reasons: str) -> str | None:
    """The message of the first event on object `name` whose reason is one of `reasons`."""
    return next(iter(_event_messages(api, namespace, name, *reasons)), None)


def _scheduled_on(pod: dict[str, Any]) -> str | None:
    node = _dig(pod, "spec", "nodeName")
    if node:
        return str(node)
    for condition in _dig(pod, "status", "conditions") or []:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "True"
        ):
            return "a node"
    return None


def _unschedulable_message(pod: dict[str, Any]) -> str | None:
    for condition in _dig(pod, "status", "conditions") or []:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "PodScheduled"
            and condition.get("reason") == "Unschedulable"
        ):
            return str(condition.get("message") or "Unschedulable")
    return None


def _watch_job(
    api: _Api, namespace: str, job: str, selector: str, gpus: int, timeout: float
) -> tuple[str, str, list[str]]:
    """Poll until the Job's pod is refused by the scheduler (or quota), scheduled, or time is up."""
    pods_path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods"
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    last = "no pod created yet"
    while True:
        listing = api.list(pods_path, {"labelSelector": selector})
        if listing.state != "ok":
            return "error", f"could not list the Job's pods: {listing.reason}", seen
        for pod in listing.items:
            name = str(_dig(pod, "metadata", "name") or "")
            if name and name not in seen:
                seen.append(name)
            node = _scheduled_on(pod)
            if node:
                return (
                    "scheduled",
                    f"pod {name} asking for {gpus} {GPU} was scheduled on {node}",
                    seen,
                )
            # Other components write FailedScheduling too (Karpenter: "Failed to schedule pod,
            # incompatible with nodepool ..."), before or after the scheduler: the refusal that
            # names the GPU shortage is the one to report. The scheduler writes its words into
            # the pod's PodScheduled condition as well: they tell the refusal where events
            # cannot be read (no access, or already expired).
            refusals = _event_messages(api, namespace, name, *REFUSAL_REASONS)
            condition = _unschedulable_message(pod)
            refusals += [condition] if condition else []
            if refusals:
                message = next((m for m in refusals if _gpu_shortage(m)), refusals[0])
                return "pending", message, seen
            last = f"pod {name} is {_dig(pod, 'status', 'phase') or 'without a phase'}"
        if not listing.items:
            refusal = _event_message(api, namespace, job, "FailedCreate")
            if refusal:
                return "refused", f"the Job could not create its pod: {refusal}", seen
        if time.monotonic() >= deadline:
            return (
                "timeout",
                f"no FailedScheduling event within {timeout:g} s "
                f"(nor an Unschedulable one); {last}",
                seen,
            )
        time.sleep(POLL_SECONDS)


def _scenario(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "clean": False,
        "state": "error",
        "reason": "",
        "seconds": 0.0,
        "created": [],
        "deleted": [],
    }


def _finish(
    api: _Api, scenario: dict[str, Any], namespace: str, selector: str, started: float
) -> None:
    """Delete everything carrying the label; a failure to do so makes the scenario unclean."""
    try:
        deleted, problems = _remove_labelled(api, namespace, selector)
    except ConnectorError as exc:
        deleted, problems = [], [f"cleanup failed: {exc}"]
    scenario["deleted"] += [d for d in deleted if d not in scenario["deleted"]]
    for created in [c for c in scenario["created"] if c not in scenario["deleted"]]:
        # Not listed any more (the garbage collector took the Job's pod) or never listed:
        # a DELETE by name answers 404 once it is gone.
        kind, ns, name = created.split("/", 2)
        base = "/apis/batch/v1" if kind == "job" else "/api/v1"
        path = f"{base}/namespaces/{quote(ns, safe='')}/{kind}s/{quote(name, safe='')}"
        try:
            done, problem = _delete(api, path, created, background=kind == "job")
        except ConnectorError as exc:
            done, problem = False, f"could not delete {created}: {exc}"
        if done:
            scenario["deleted"].append(created)
        else:
            problems.append(problem)
    missing = [c for c in scenario["created"] if c not in scenario["deleted"]]
    if missing:
        problems.append("not deleted: " + ", ".join(missing))
    if problems:
        scenario["clean"] = False
        scenario["reason"] = "; ".join(
            ([scenario["reason"]] if scenario["reason"] else []) + problems
        )
    scenario["seconds"] = round(time.monotonic() - started, 2)


def _more_than_any_node(
    api: _Api, namespace: str, label: str, gpus: int, timeout: float
) -> dict[str, Any]:
    scenario = _scenario("more_gpus_than_any_node")
    started = time.monotonic()
    job = planned_objects(namespace, label, gpus)[0]
    name = job["metadata"]["name"]
    try:
        reply = api.request(
            "POST", f"/apis/batch/v1/namespaces/{quote(namespace, safe='')}/jobs", body=job
        )
        if not reply.ok:
            scenario["reason"] = f"could not create the Job: {reply.error}"
            return scenario
        scenario["created"].append(f"job/{namespace}/{name}")
        state, reason, pods = _watch_job(api, namespace, name, label, gpus, timeout)
        scenario["created"] += [f"pod/{namespace}/{pod}" for pod in pods]
        scenario["state"], scenario["reason"] = state, reason
        scenario["clean"] = state == "pending" and _gpu_shortage(reason)
    except ConnectorError as exc:
        scenario["state"], scenario["reason"] = "error", str(exc)
    finally:
        _finish(api, scenario, namespace, label, started)
    return scenario


def _over_resource_quota(
    api: _Api, namespace: str, label: str, gpus: int, quota: tuple[str, int, int]
) -> dict[str, Any]:
    scenario = _scenario("over_resource_quota")
    started = time.monotonic()
    quota_name, hard, used = quota
    asked = max(1, hard - used + 1)
    pod = planned_objects(namespace, label, gpus, asked)[1]
    name = pod["metadata"]["name"]
    try:
        reply = api.request(
            "POST", f"/api/v1/namespaces/{quote(namespace, safe='')}/pods", body=pod, fatal=False
        )
        if reply.status == 403:
            message = str(_dig(reply.data, "message") or reply.error)
            scenario["state"], scenario["reason"] = "refused", message
            scenario["clean"] = "exceeded quota" in message and quota_name in message
        elif reply.ok:
            scenario["created"].append(f"pod/{namespace}/{name}")
            scenario["state"] = "scheduled"
            scenario["reason"] = (
                f"the API server accepted pod {name} asking for {asked} {GPU} over "
                f"quota {quota_name} (hard {hard}, used {used})"
            )
        else:
            scenario["reason"] = f"could not create the Pod: {reply.error}"
    except ConnectorError as exc:
        scenario["state"], scenario["reason"] = "error", str(exc)
    finally:
        _finish(api, scenario, namespace, label, started)
    return scenario


def over_quota(
    target: KubeTarget,
    *,
    resolve: Resolve,
    namespace: str,
    label: str,
    timeout: float = 60.0,
    gpus: int | None = None,
) -> dict[str, Any]:
    """Provoke the refusals a GPU cluster must give, and clean up (creates objects: opt-in).

    A Job asking for more GPUs than any node allocates (`gpus`, by default the largest
    allocatable count plus one) must stay Pending with a FailedScheduling "Insufficient
    nvidia.com/gpu" event (the KAI scheduler's reason: Unschedulable) within `timeout` seconds;
    where the namespace has a ResourceQuota on requests.nvidia.com/gpu, a Pod over it must be
    refused with 403 "exceeded quota". Every object carries `label` and is deleted afterwards,
    also on failure or timeout."""
    _check_namespace(namespace)
    _split_label(label)
    api = _Api(target, resolve)
    result: dict[str, Any] = {
        "namespace": namespace,
        "label": label,
        "gpus": gpus,
        "scenarios": [],
        "notes": [],
        "raw": api.raw,
    }
    try:
        if gpus is None:
            gpus = _max_allocatable(api) + 1
            result["gpus"] = gpus
        result["scenarios"].append(_more_than_any_node(api, namespace, label, gpus, timeout))
        skipped: list[str] = []
        try:
            quota = _gpu_quota(api, namespace, skipped)
        except ConnectorError as exc:
            result["notes"].append(f"{exc}: the over-quota scenario was not run")
            return result
        if quota is None:
            scoped = f" (scoped to other pods: {', '.join(skipped)})" if skipped else ""
            result["notes"].append(
                f"no ResourceQuota on {QUOTA_GPU} in namespace {namespace}{scoped}: "
                "the over-quota scenario was not run"
            )
        else:
            result["scenarios"].append(_over_resource_quota(api, namespace, label, gpus, quota))
    finally:
        api.close()
    return result


def sweep(
    target: KubeTarget, *, resolve: Resolve, namespace: str, label_selector: str
) -> list[str]:
    """Delete the Jobs and Pods in `namespace` matching `label_selector` (leftovers of earlier
    runs); returns what was deleted ("job/<ns>/<name>", ...). Only equality and existence
    terms are accepted, so the selector cannot match objects the probe did not label."""
    _check_namespace(namespace)
    terms = [t.strip().replace("==", "=") for t in label_selector.split(",")]
    for term in terms:
        if "!" in term:
            raise ConnectorError(f"{label_selector!r}: give key=value label terms only")
        _split_label(term)
    api = _Api(target, resolve)
    try:
        deleted, problems = _remove_labelled(api, namespace, ",".join(terms))
    finally:
        api.close()
    if problems:
        done = f" (deleted {', '.join(deleted)})" if deleted else ""
        raise ConnectorError("; ".join(problems) + done)
    return deleted
