"""A local stand-in for a Kubernetes API server, serving recorded objects at the real paths.

No API server runs offline here, so tests load objects recorded from real clusters
(shared/fixtures/k8s/) into `FakeKubeApi` and point the official client at it. It answers
discovery (`/version`, `/api`, `/apis`, `/apis/<group>[/<version>]`), lists and gets in the
API server's envelopes (cluster-scoped and namespaced, all namespaces or one, `labelSelector`,
`fieldSelector`, `limit`/`continue`), the service proxy, and POST / DELETE of Jobs and Pods with
a small scheduler: a pod asking for more `nvidia.com/gpu` than any node allocates stays Pending
with the scheduler's FailedScheduling event, a pod over a ResourceQuota on
`requests.nvidia.com/gpu` is refused with the API server's 403 wording. Errors are `Status`
objects as the real server writes them. Per test: which paths answer 403, which groups are
hidden, raw answers (HTML, garbage), a required bearer token, TLS with a throwaway CA.

Every request is recorded (method, path, query, headers, body, client address).
"""

import base64
import copy
import datetime
import json
import ssl
import tempfile
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

# shared/ lies beside the checkout.
FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "k8s"
USER = "system:serviceaccount:workbench:gpu-probe"

# Resources whose objects have no namespace.
CLUSTER_SCOPED = {
    "nodes",
    "namespaces",
    "clusterpolicies",
    "datascienceclusters",
    "departments",
    "projects",
}
CLUSTER_SCOPED_BY_GROUP = {("scheduling.volcano.sh", "queues"), ("scheduling.run.ai", "queues")}
IRREGULAR_PLURALS = {"ClusterPolicy": "clusterpolicies"}


def plural_of(kind: str) -> str:
    return IRREGULAR_PLURALS.get(kind) or kind.lower() + "s"


def is_cluster_scoped(group: str, plural: str) -> bool:
    return (group, plural) in CLUSTER_SCOPED_BY_GROUP or plural in CLUSTER_SCOPED


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def load_yaml(path: Path | str) -> list[dict[str, Any]]:
    """The objects of a kubectl YAML dump (comment headers are YAML comments; `---` separates
    documents; a `List` is unpacked)."""
    lines = Path(path).read_text().splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
        lines.pop(0)  # the comment header kubectl edit / the source put on top
    found: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all("\n".join(lines)):
        if isinstance(doc, dict) and doc.get("kind", "").endswith("List") and "items" in doc:
            found.extend(doc["items"])
        elif isinstance(doc, dict):
            found.append(doc)
    return found


def fixture(name: str) -> list[dict[str, Any]]:
    return load_yaml(FIXTURES / name)


def status(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure" if code >= 400 else "Success",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    if code < 400:
        del body["message"]
    return body


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def gpu_request(pod: dict[str, Any]) -> int:
    total = 0
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        value = (resources.get("limits") or {}).get("nvidia.com/gpu") or (
            resources.get("requests") or {}
        ).get("nvidia.com/gpu")
        total += int(value or 0)
    return total


def _matches_labels(obj: dict[str, Any], selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if labels.get(key) != value:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def _field(obj: dict[str, Any], path: str) -> Any:
    value: Any = obj
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _matches_fields(obj: dict[str, Any], selector: str) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key, _, value = term.replace("==", "=").partition("=")
        if str(_field(obj, key) or "") != value:
            return False
    return True


class FakeKubeApi:
    """A threaded HTTP(S) server on 127.0.0.1 that behaves like a kube-apiserver for tests."""

    def __init__(self, *, token: str | None = None, tls_names: list[str] | None = None) -> None:
        self.token = token
        self.version = {
            "major": "1",
            "minor": "30",
            "gitVersion": "v1.30.4",
            "gitCommit": "a51b3b711150f57ffc1f526a640ec058514ed596",
            "platform": "linux/amd64",
        }
        self.store: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.served: dict[str, list[str]] = {"apps": ["v1"], "batch": ["v1"]}
        self.hidden_groups: set[str] = set()
        self.forbidden: set[tuple[str, str]] = set()  # (method, path)
        self.answers: dict[str, tuple[int, str, bytes]] = {}  # path -> status, type, body
        self.answer_headers: dict[str, dict[str, str]] = {}
        self.proxied: dict[tuple[str, str], tuple[int, str, str]] = {}
        self.requests: list[dict[str, Any]] = []
        self.scheduler = True  # False: pods stay Pending and nothing is said about them
        self.lock = threading.RLock()
        self.tls_names = tls_names
        self.ca_pem = ""
        self.client_ca_pem = ""
        self.client_cert_pem = ""
        self.client_key_pem = ""
        self._tempdir = tempfile.TemporaryDirectory(prefix="fake-k8s-")
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        self.sni: list[str | None] = []
        for group, version, plural in (
            ("", "v1", "nodes"),
            ("", "v1", "pods"),
            ("", "v1", "events"),
            ("", "v1", "services"),
            ("", "v1", "resourcequotas"),
            ("apps", "v1", "daemonsets"),
            ("batch", "v1", "jobs"),
        ):
            self.serve(group, version, plural)

    # --- configuration ---------------------------------------------------------------------

    def add(self, *objects: dict[str, Any]) -> None:
        """Store objects (deep-copied) under their apiVersion and kind's plural."""
        with self.lock:
            for obj in objects:
                obj = copy.deepcopy(obj)
                group, version = split_api_version(obj["apiVersion"])
                plural = plural_of(obj["kind"])
                meta = obj.setdefault("metadata", {})
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("resourceVersion", str(1000 + len(self.requests)))
                if not is_cluster_scoped(group, plural):
                    meta.setdefault("namespace", "default")
                self.serve(group, version, plural)
                self.store[(group, version, plural)].append(obj)

    def add_fixture(self, name: str) -> None:
        self.add(*fixture(name))

    def serve(self, group: str, version: str, plural: str) -> None:
        """Make a resource exist (empty) at group/version, as an installed CRD does."""
        with self.lock:
            self.store.setdefault((group, version, plural), [])
            if group:
                versions = self.served.setdefault(group, [])
                if version not in versions:
                    versions.append(version)

    def serve_group(self, group: str, versions: list[str]) -> None:
        """List a group in /apis with these versions (preferred first), with no resources."""
        with self.lock:
            self.served[group] = list(versions)

    def hide_group(self, group: str) -> None:
        self.hidden_groups.add(group)

    def forbid(self, path: str, method: str = "GET") -> None:
        self.forbidden.add((method, path))

    def answer(
        self,
        path: str,
        code: int,
        body: str | bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer `path` (any method) with this raw response instead."""
        data = body.encode() if isinstance(body, str) else body
        self.answers[path] = (code, content_type, data)
        self.answer_headers[path] = dict(headers or {})

    def proxy(self, namespace: str, service_port: str, text: str, code: int = 200) -> None:
        """What GET .../services/<service_port>/proxy/<path> answers (service_port: name:port)."""
        self.proxied[(namespace, service_port)] = (code, "text/plain; version=0.0.4", text)

    def objects(self, plural: str, group: str = "", namespace: str | None = None) -> list[dict]:
        with self.lock:
            found = []
            for (g, _v, p), items in self.store.items():
                if g == group and p == plural:
                    found += [
                        o
                        for o in items
                        if namespace is None or o["metadata"].get("namespace") == namespace
                    ]
            return found

    def received(self, method: str | None = None, path_prefix: str = "") -> list[dict[str, Any]]:
        return [
            r
            for r in self.requests
            if (method is None or r["method"] == method) and r["path"].startswith(path_prefix)
        ]

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> "FakeKubeApi":
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        if self.tls_names:
            server.socket = self._tls_context().wrap_socket(server.socket, server_side=True)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self._tempdir.cleanup()

    def __enter__(self) -> "FakeKubeApi":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def url(self, host: str = "127.0.0.1") -> str:
        return f"{'https' if self.tls_names else 'http'}://{host}:{self.port}"

    def kubeconfig(self, host: str = "127.0.0.1", **user: Any) -> str:
        """A kubeconfig pointing at this server; `user` entries are the user's fields."""
        cluster: dict[str, Any] = {"server": self.url(host)}
        if self.ca_pem:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem.encode()).decode()
        if self.token and not user:
            user = {"token": self.token}
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": cluster}],
            "users": [{"name": "probe", "user": user}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "probe"}}],
            "current-context": "fake",
        }
        return yaml.safe_dump(doc)

    def _tls_context(self) -> ssl.SSLContext:
        """A throwaway CA, a server certificate for `tls_names` (not for 127.0.0.1, so only a
        client checking against the name passes) and a client certificate the server accepts."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        def pem_key(key: ec.EllipticCurvePrivateKey) -> str:
            return key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ).decode()

        def issue(
            subject: str,
            key: ec.EllipticCurvePrivateKey,
            issuer: x509.Name | None,
            issuer_key: ec.EllipticCurvePrivateKey,
            *,
            ca: bool,
            names: list[str] | None = None,
        ) -> x509.Certificate:
            name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
            now = datetime.datetime.now(datetime.UTC)
            builder = (
                x509.CertificateBuilder()
                .subject_name(name)
                .issuer_name(issuer or name)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(hours=2))
                .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            )
            if names:
                builder = builder.add_extension(
                    x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False
                )
            return builder.sign(issuer_key, hashes.SHA256())

        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = issue("fake-k8s-ca", ca_key, None, ca_key, ca=True)
        server_key = ec.generate_private_key(ec.SECP256R1())
        server = issue(
            "kube-apiserver", server_key, ca.subject, ca_key, ca=False, names=self.tls_names
        )
        client_key = ec.generate_private_key(ec.SECP256R1())
        client = issue("probe", client_key, ca.subject, ca_key, ca=False)
        self.ca_pem = ca.public_bytes(serialization.Encoding.PEM).decode()
        self.client_cert_pem = client.public_bytes(serialization.Encoding.PEM).decode()
        self.client_key_pem = pem_key(client_key)
        folder = Path(self._tempdir.name)
        (folder / "server.crt").write_text(
            server.public_bytes(serialization.Encoding.PEM).decode() + self.ca_pem
        )
        (folder / "server.key").write_text(pem_key(server_key))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(folder / "server.crt", folder / "server.key")
        context.load_verify_locations(cadata=self.ca_pem)
        context.verify_mode = ssl.CERT_OPTIONAL  # a client certificate is recorded when given
        context.sni_callback = lambda _sock, name, _ctx: self.sni.append(name)
        return context

    # --- request handling ------------------------------------------------------------------

    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], body: bytes, peer: dict
    ) -> tuple[int, str, bytes]:
        parts = urlsplit(raw_path)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        parsed_body: Any = None
        if body:
            try:
                parsed_body = json.loads(body)
            except ValueError:
                parsed_body = body.decode(errors="replace")
        with self.lock:
            self.requests.append(
                {
                    "method": method,
                    "path": path,
                    "query": query,
                    "headers": headers,
                    "body": parsed_body,
                    **peer,
                }
            )
        if self.token is not None and headers.get("authorization") != f"Bearer {self.token}":
            return self._json(401, status(401, "Unauthorized", "Unauthorized"))
        if path in self.answers:
            return self.answers[path]
        if (method, path) in self.forbidden:
            return self._json(403, self._forbidden(method, path, query))
        with self.lock:
            return self._route(method, path, query, parsed_body)

    def _json(self, code: int, data: Any) -> tuple[int, str, bytes]:
        return code, "application/json", json.dumps(data).encode()

    def _not_found(self, path: str) -> tuple[int, str, bytes]:
        return self._json(
            404, status(404, "NotFound", "the server could not find the requested resource")
        )

    def _forbidden(self, method: str, path: str, query: dict[str, str]) -> dict[str, Any]:
        group, _version, namespace, plural, name = self._parse(path) or ("", "", None, path, None)
        verb = {"GET": "get" if name else "list", "POST": "create", "DELETE": "delete"}[method]
        resource = f"{plural}.{group}" if group else plural
        scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
        message = (
            f'{resource} is forbidden: User "{USER}" cannot {verb} resource "{plural}" '
            f'in API group "{group}" {scope}'
        )
        return status(403, "Forbidden", message, group=group, kind=plural)

    def _groups(self) -> dict[str, list[str]]:
        return {g: v for g, v in self.served.items() if g not in self.hidden_groups and v}

    @staticmethod
    def _parse(path: str) -> tuple[str, str, str | None, str, str | None] | None:
        """(group, version, namespace, plural, name) of a resource path."""
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 3 and parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif len(parts) >= 4 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        plural = rest[0]
        name = rest[1] if len(rest) > 1 else None
        return group, version, namespace, plural, name

    def _route(
        self, method: str, path: str, query: dict[str, str], body: Any
    ) -> tuple[int, str, bytes]:
        if path == "/version":
            return self._json(200, self.version)
        if path == "/api":
            return self._json(200, {"kind": "APIVersions", "versions": ["v1"]})
        if path == "/apis":
            return self._json(200, self._group_list())
        parts = [p for p in path.split("/") if p]
        if parts[0] == "apis" and len(parts) in (2, 3):
            return self._group_or_resources(parts)
        parsed = self._parse(path)
        if parsed is None:
            return self._not_found(path)
        group, version, namespace, plural, name = parsed
        if group and group not in self._groups():
            return self._not_found(path)
        rest = [p for p in path.split("/") if p]
        after = rest[rest.index(name) + 1 :] if name else []
        if plural == "services" and after and after[0] == "proxy":
            return self._proxy(namespace or "", name or "")
        if (group, version, plural) not in self.store:
            return self._not_found(path)
        if method == "GET" and name is None:
            return self._list(group, version, plural, namespace, query)
        if method == "GET":
            found = self._find(group, version, plural, namespace, name)
            if found is None:
                return self._json(404, status(404, "NotFound", f'{plural} "{name}" not found'))
            return self._json(200, found)
        if method == "POST" and name is None and namespace:
            return self._create(group, version, plural, namespace, body)
        if method == "DELETE" and name:
            return self._delete(group, version, plural, namespace, name, body)
        return self._json(
            405,
            status(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            ),
        )

    def _group_list(self) -> dict[str, Any]:
        groups = []
        for name, versions in sorted(self._groups().items()):
            listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
            groups.append({"name": name, "versions": listed, "preferredVersion": listed[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def _group_or_resources(self, parts: list[str]) -> tuple[int, str, bytes]:
        groups = self._groups()
        if parts[1] not in groups:
            return self._not_found("/".join(parts))
        versions = groups[parts[1]]
        if len(parts) == 2:
            listed = [{"groupVersion": f"{parts[1]}/{v}", "version": v} for v in versions]
            group = {"name": parts[1], "versions": listed, "preferredVersion": listed[0]}
            return self._json(200, {"kind": "APIGroup", "apiVersion": "v1", **group})
        resources = [
            {"name": p, "namespaced": not is_cluster_scoped(g, p), "kind": p, "verbs": ["list"]}
            for (g, v, p) in self.store
            if g == parts[1] and v == parts[2]
        ]
        return self._json(
            200,
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": f"{parts[1]}/{parts[2]}",
                "resources": resources,
            },
        )

    def _find(
        self, group: str, version: str, plural: str, namespace: str | None, name: str | None
    ) -> dict[str, Any] | None:
        for obj in self.store[(group, version, plural)]:
            meta = obj["metadata"]
            if meta.get("name") == name and (
                namespace is None or meta.get("namespace") == namespace
            ):
                return obj
        return None

    def _list(
        self, group: str, version: str, plural: str, namespace: str | None, query: dict[str, str]
    ) -> tuple[int, str, bytes]:
        items = [
            o
            for o in self.store[(group, version, plural)]
            if namespace is None or o["metadata"].get("namespace") == namespace
        ]
        if "labelSelector" in query:
            items = [o for o in items if _matches_labels(o, query["labelSelector"])]
        if "fieldSelector" in query:
            items = [o for o in items if _matches_fields(o, query["fieldSelector"])]
        start = int(query.get("continue") or 0)
        limit = int(query.get("limit") or 0)
        page = items[start : start + limit] if limit else items[start:]
        meta: dict[str, Any] = {"resourceVersion": str(5000 + len(self.requests))}
        if limit and start + limit < len(items):
            meta["continue"] = str(start + limit)
        stored = self.store[(group, version, plural)]
        kind = stored[0]["kind"] if stored else plural[:-1].capitalize()
        api_version = f"{group}/{version}" if group else version
        envelope = {"apiVersion": api_version, "kind": f"{kind}List", "metadata": meta}
        return self._json(200, {**envelope, "items": page})

    def _proxy(self, namespace: str, service_port: str) -> tuple[int, str, bytes]:
        service_name = service_port.split(":")[0]
        service = (
            self._find("", "v1", "services", namespace, service_name)
            if ("", "v1", "services") in self.store
            else None
        )
        if service is None:
            return self._json(404, status(404, "NotFound", f'services "{service_name}" not found'))
        answer = self.proxied.get((namespace, service_port))
        if answer is None:
            message = f'no endpoints available for service "{service_port}"'
            return self._json(503, status(503, "ServiceUnavailable", message))
        code, content_type, text = answer
        return code, content_type, text.encode()

    # --- writes and the scheduler ----------------------------------------------------------

    def _next_uid(self) -> str:
        self._counter += 1
        return f"00000000-0000-4000-8000-{self._counter:012d}"

    def _create(
        self, group: str, version: str, plural: str, namespace: str, body: Any
    ) -> tuple[int, str, bytes]:
        if not isinstance(body, dict) or not (body.get("metadata") or {}).get("name"):
            return self._json(400, status(400, "BadRequest", "the object has no name"))
        obj = copy.deepcopy(body)
        meta = obj["metadata"]
        meta["namespace"] = namespace
        if self._find(group, version, plural, namespace, meta["name"]) is not None:
            message = f'{plural}.{group or "core"} "{meta["name"]}" already exists'
            return self._json(409, status(409, "AlreadyExists", message))
        meta.update(uid=self._next_uid(), creationTimestamp=_now(), resourceVersion="1")
        if plural == "pods":
            refusal = self._quota_refusal(namespace, obj)
            if refusal:
                return self._json(
                    403, status(403, "Forbidden", refusal, name=meta["name"], kind="pods")
                )
            self._admit_pod(obj)
            return self._json(201, obj)
        self.store[(group, version, plural)].append(obj)
        if (group, plural) == ("batch", "jobs"):
            self._spawn_pod(obj)
        return self._json(201, obj)

    def _quota_refusal(self, namespace: str, pod: dict[str, Any]) -> str | None:
        """The real apiserver's quota admission message (see resourcequota-gpu-exceeded-error)."""
        asked = gpu_request(pod)
        for quota in self.objects("resourcequotas", namespace=namespace):
            hard = (quota.get("spec") or {}).get("hard") or {}
            if "requests.nvidia.com/gpu" not in hard or not asked:
                continue
            used = int(
                ((quota.get("status") or {}).get("used") or {}).get("requests.nvidia.com/gpu") or 0
            )
            limit = int(hard["requests.nvidia.com/gpu"])
            if used + asked > limit:
                key = "requests.nvidia.com/gpu"
                return (
                    f'pods "{pod["metadata"]["name"]}" is forbidden: exceeded quota: '
                    f"{quota['metadata']['name']}, requested: {key}={asked}, "
                    f"used: {key}={used}, limited: {key}={limit}"
                )
        return None

    def _charge_quota(self, namespace: str, gpus: int) -> None:
        for quota in self.objects("resourcequotas", namespace=namespace):
            if "requests.nvidia.com/gpu" in ((quota.get("spec") or {}).get("hard") or {}):
                used = quota.setdefault("status", {}).setdefault("used", {})
                used["requests.nvidia.com/gpu"] = str(
                    int(used.get("requests.nvidia.com/gpu") or 0) + gpus
                )

    def _admit_pod(self, pod: dict[str, Any]) -> None:
        """Store the pod and schedule it the way kube-scheduler would, on GPU count alone."""
        self.serve("", "v1", "pods")
        namespace = pod["metadata"]["namespace"]
        asked = gpu_request(pod)
        self._charge_quota(namespace, asked)
        nodes = self.objects("nodes")
        best = max(
            (
                int(((n.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu") or 0)
                for n in nodes
            ),
            default=0,
        )
        pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
        self.store[("", "v1", "pods")].append(pod)
        if not self.scheduler:
            return
        if asked > best:
            message = (
                f"0/{len(nodes)} nodes are available: {len(nodes)} Insufficient nvidia.com/gpu. "
                f"preemption: 0/{len(nodes)} nodes are available: {len(nodes)} No preemption "
                "victims found for incoming pod."
            )
            pod["status"]["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                    "lastTransitionTime": _now(),
                }
            ]
            self._event(pod, "Warning", "FailedScheduling", message, "default-scheduler")
        else:
            node = next(
                (
                    n["metadata"]["name"]
                    for n in nodes
                    if int(
                        ((n.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu")
                        or 0
                    )
                    >= asked
                ),
                "node-1",
            )
            pod["spec"]["nodeName"] = node
            pod["status"] = {
                "phase": "Running",
                "conditions": [{"type": "PodScheduled", "status": "True"}],
            }
            self._event(
                pod,
                "Normal",
                "Scheduled",
                f"Successfully assigned {namespace}/{pod['metadata']['name']} to {node}",
                "default-scheduler",
            )

    def _spawn_pod(self, job: dict[str, Any]) -> None:
        """The Job controller: one pod from the template, or a FailedCreate event on refusal."""
        template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
        meta = template.setdefault("metadata", {})
        name = f"{job['metadata']['name']}-{uuid.uuid4().hex[:5]}"
        namespace = job["metadata"]["namespace"]
        labels = meta.setdefault("labels", {})
        labels["batch.kubernetes.io/job-name"] = job["metadata"]["name"]
        labels["batch.kubernetes.io/controller-uid"] = job["metadata"]["uid"]
        meta.update(
            name=name,
            namespace=namespace,
            uid=self._next_uid(),
            creationTimestamp=_now(),
            ownerReferences=[
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job["metadata"]["name"],
                    "uid": job["metadata"]["uid"],
                    "controller": True,
                }
            ],
        )
        pod = {"apiVersion": "v1", "kind": "Pod", **template}
        refusal = self._quota_refusal(namespace, pod)
        if refusal:
            self._event(
                job, "Warning", "FailedCreate", f"Error creating: {refusal}", "job-controller"
            )
            return
        self._admit_pod(pod)
        self._event(job, "Normal", "SuccessfulCreate", f"Created pod: {name}", "job-controller")

    def _event(
        self, obj: dict[str, Any], kind: str, reason: str, message: str, source: str
    ) -> None:
        self.serve("", "v1", "events")
        meta = obj["metadata"]
        self.store[("", "v1", "events")].append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{meta['name']}.{uuid.uuid4().hex[:16]}",
                    "namespace": meta["namespace"],
                    "uid": self._next_uid(),
                },
                "involvedObject": {
                    "apiVersion": obj.get("apiVersion"),
                    "kind": obj.get("kind"),
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "uid": meta["uid"],
                },
                "type": kind,
                "reason": reason,
                "message": message,
                "source": {"component": source},
                "count": 1,
                "firstTimestamp": _now(),
                "lastTimestamp": _now(),
            }
        )

    def _delete(
        self, group: str, version: str, plural: str, namespace: str | None, name: str, body: Any
    ) -> tuple[int, str, bytes]:
        obj = self._find(group, version, plural, namespace, name)
        if obj is None:
            return self._json(
                404, status(404, "NotFound", f'{plural}.{group or "core"} "{name}" not found')
            )
        self.store[(group, version, plural)].remove(obj)
        if plural == "pods":
            self._charge_quota(obj["metadata"]["namespace"], -gpu_request(obj))
        policy = (body or {}).get("propagationPolicy") if isinstance(body, dict) else None
        if (group, plural) == ("batch", "jobs") and policy in ("Background", "Foreground"):
            # The garbage collector removes the Job's pods; the API default for Jobs orphans them.
            for pod in list(self.store.get(("", "v1", "pods"), [])):
                owners = pod["metadata"].get("ownerReferences") or []
                if any(o.get("uid") == obj["metadata"]["uid"] for o in owners):
                    self.store[("", "v1", "pods")].remove(pod)
                    self._charge_quota(pod["metadata"]["namespace"], -gpu_request(pod))
        if plural == "pods":
            return self._json(200, obj)
        return self._json(
            200,
            status(
                200, "Success", "", name=name, group=group, kind=plural, uid=obj["metadata"]["uid"]
            ),
        )


def _handler(api: FakeKubeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet in tests
            return

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            peer: dict[str, Any] = {
                "client": self.client_address[0],
                "server": self.server.server_address[0],
                "client_cert": False,
            }
            if isinstance(self.connection, ssl.SSLSocket):
                peer["client_cert"] = self.connection.getpeercert() not in (None, {})
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                code, content_type, data = api.handle(self.command, self.path, headers, body, peer)
            except Exception as exc:  # a bug in the fake shows as a 500, not a hung client
                code, content_type = 500, "application/json"
                data = json.dumps(status(500, "InternalError", f"fake: {exc!r}")).encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in api.answer_headers.get(self.path.split("?")[0], {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _serve

    return Handler


# --- objects hand-built from the text fixtures (kubectl get/describe output, label dumps) -----


def h100_node(name: str = "h100-node-1") -> dict[str, Any]:
    """A Node carrying the labels of schedulers/node-labels-h100-mig-single-all-disabled.json
    (a real capture); capacity is hand-built to match them: one H100, MIG disabled."""
    labels = json.loads(
        (FIXTURES / "schedulers/node-labels-h100-mig-single-all-disabled.json").read_text()
    )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {
            "capacity": {"cpu": "96", "nvidia.com/gpu": "1", "pods": "110"},
            "allocatable": {"cpu": "95", "nvidia.com/gpu": "1", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def cluster_policy(state: str = "ready", namespace: str = "gpu-operator") -> dict[str, Any]:
    """ClusterPolicy as in schedulers/kubectl-get-clusterpolicy-ready.txt (`cluster-policy
    ready 2026-06-05T17:28:22Z`); notReady carries the message of
    clusterpolicy-notready-operator-log.jsonl."""
    policy: dict[str, Any] = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy", "creationTimestamp": "2026-06-05T17:28:22Z"},
        "spec": {"operator": {"defaultRuntime": "containerd"}},
        "status": {"state": state, "namespace": namespace},
    }
    if state == "notReady":
        policy["status"]["conditions"] = [
            {
                "type": "Ready",
                "status": "False",
                "reason": "OperandNotReady",
                "message": "ClusterPolicy is not ready, states not ready: "
                "[state-operator-validation state-device-plugin state-dcgm-exporter "
                "gpu-feature-discovery state-mig-manager]",
            }
        ]
    return policy


# The DaemonSets behind schedulers/gpu-operator-pods-with-mig-manager.txt (one node, every
# operand pod Running 1/1).
OPERAND_DAEMONSETS = (
    "gpu-feature-discovery",
    "nvidia-container-toolkit-daemonset",
    "nvidia-dcgm-exporter",
    "nvidia-device-plugin-daemonset",
    "nvidia-driver-daemonset",
    "nvidia-mig-manager",
    "nvidia-operator-validator",
)


def operand_daemonsets(
    not_ready: tuple[str, ...] = (), namespace: str = "gpu-operator"
) -> list[dict[str, Any]]:
    found = []
    for name in OPERAND_DAEMONSETS:
        ready = 0 if name in not_ready else 1
        found.append(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": namespace},
                "status": {
                    "desiredNumberScheduled": 1,
                    "currentNumberScheduled": 1,
                    "numberReady": ready,
                    "numberAvailable": ready,
                    "updatedNumberScheduled": 1,
                },
            }
        )
    found.append(  # not an operand: must not be counted
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "name": "gpu-operator-node-feature-discovery-worker",
                "namespace": namespace,
            },
            "status": {"desiredNumberScheduled": 1, "numberReady": 0},
        }
    )
    return found


def dcgm_service(namespace: str = "gpu-operator") -> dict[str, Any]:
    """The GPU Operator's exporter Service (port 9400, named gpu-metrics)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "nvidia-dcgm-exporter", "namespace": namespace},
        "spec": {"ports": [{"name": "gpu-metrics", "port": 9400, "targetPort": 9400}]},
    }


def dcgm_metrics() -> str:
    return (FIXTURES / "dcgm-exporter-metrics-t4.txt").read_text()


def unschedulable_podgroup() -> dict[str, Any]:
    """The PodGroup of schedulers/podgroup-unschedulable-describe.txt (kubectl describe pg)."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "test", "namespace": "default"},
        "spec": {"minMember": 1, "queue": "default"},
        "status": {
            "phase": "Inqueue",
            "conditions": [
                {
                    "lastTransitionTime": "2020-10-15T09:01:46Z",
                    "message": "1/1 tasks in gang unschedulable: pod group is not ready, "
                    "1 Pending, 1 minAvailable.",
                    "reason": "NotEnoughResources",
                    "status": "True",
                    "transitionID": "a6e36d8a-1672-406e-a9f5-f113174114fe",
                    "type": "Unschedulable",
                }
            ],
        },
    }


def gpu_quota(namespace: str, hard: int, used: int = 0, name: str = "gpu-quota") -> dict[str, Any]:
    """A ResourceQuota like the one behind schedulers/resourcequota-gpu-exceeded-error.txt."""
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"hard": {"requests.nvidia.com/gpu": str(hard)}},
        "status": {
            "hard": {"requests.nvidia.com/gpu": str(hard)},
            "used": {"requests.nvidia.com/gpu": str(used)},
        },
    }
