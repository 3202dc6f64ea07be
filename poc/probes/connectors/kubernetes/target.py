"""Where the API server is and how to authenticate: a URL with a token and CA, or a
kubeconfig read as data (exec plugins, auth providers and file references refused); the
connector's error."""

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import yaml

from poc.probes.connectors.kubernetes.values import one_line

Resolve = Callable[[str, int], str]


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


def _kubeconfig_endpoint(text: str) -> _Endpoint:
    """The endpoint of the kubeconfig's current context, read as data only."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConnectorError(f"the kubeconfig is not valid YAML: {one_line(str(exc))}") from None
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


def target_endpoint(target: KubeTarget) -> _Endpoint:
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


def target_host(target: KubeTarget) -> str:
    """The API server's host as the settings name it; ConnectorError, saying what is wrong,
    where they are unusable without connecting (a kubeconfig that would run a plugin or read a
    local file, a URL that is none). For checking settings when they are saved."""
    return target_endpoint(target).host
