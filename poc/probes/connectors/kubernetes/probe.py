"""The read-only probe and the connection test."""

from typing import Any

from poc.probes.connectors.kubernetes.api import Api
from poc.probes.connectors.kubernetes.dcgm import read_dcgm
from poc.probes.connectors.kubernetes.discovery import Groups, cannot, discover
from poc.probes.connectors.kubernetes.gpu_operator import read_gpu_operator
from poc.probes.connectors.kubernetes.nodes import read_nodes
from poc.probes.connectors.kubernetes.platforms import read_openshift_ai, read_slurm
from poc.probes.connectors.kubernetes.quotas import read_quotas
from poc.probes.connectors.kubernetes.schedulers import read_kai_runai, read_volcano
from poc.probes.connectors.kubernetes.target import ConnectorError, KubeTarget, Resolve

FORMAT = "workbench-k8s-facts/1"


def new_facts(
    *, server: str, tls: Any, raw: list[Any], api_groups: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The facts document before anything is read: the live probe and uploaded documents
    (connectors/kubernetes/documents.py) fill the same one."""
    return {
        "format": FORMAT,
        "server": server,
        "tls": tls,
        "server_version": None,
        "api_groups": api_groups or {},
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
        "raw": raw,
    }


def read_cluster(api: Api, groups: Groups, result: dict[str, Any], *, slinky: bool = True) -> None:
    """What a probe reads of a cluster, in this order: nodes, the GPU Operator, DCGM's metrics,
    the schedulers, the platforms, quotas. Uploaded documents are read the same way, Slinky
    aside (`slinky=False`: its presence is known from API discovery, which documents lack)."""
    read_nodes(api, result)
    read_gpu_operator(api, groups, result)
    read_dcgm(api, result)
    read_volcano(api, groups, result)
    read_kai_runai(api, groups, result)
    read_openshift_ai(api, groups, result)
    if slinky:
        read_slurm(groups, result)
    read_quotas(api, result)


def probe_kubernetes(target: KubeTarget, *, resolve: Resolve) -> dict[str, Any]:
    """Read the cluster's GPU facts (read-only; see the module docstring for what is read).

    Raises ConnectorError when the API server cannot be reached, refuses the credentials (401),
    or is not a Kubernetes API server; a read refused on its own lands in `could_not_check`."""
    api = Api(target, resolve)
    result = new_facts(server=api.where, tls=api.tls, raw=api.raw)
    try:
        reply = api.request("GET", "/version")
        if reply.ok and isinstance(reply.data.get("gitVersion"), str):
            result["server_version"] = reply.data["gitVersion"]
        elif reply.status in (403, 429) or reply.status >= 500:
            cannot(result, "server version (GET /version)", reply.error)
        else:
            raise ConnectorError(
                f"{api.where} is not a Kubernetes API server (GET /version: "
                f"{reply.error or 'no gitVersion in the answer'})"
            )
        groups = discover(api, result)
        read_cluster(api, groups, result)
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
    api = Api(target, resolve)
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
