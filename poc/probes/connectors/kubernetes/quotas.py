"""ResourceQuotas on GPUs, and whether each applies to the controlled failure's Pod."""

from typing import Any

from poc.probes.connectors.kubernetes.api import Api
from poc.probes.connectors.kubernetes.discovery import cannot
from poc.probes.connectors.kubernetes.values import as_int, dig


def read_quotas(api: Api, result: dict[str, Any]) -> None:
    listing = api.list("/api/v1/resourcequotas")
    if listing.state != "ok":
        cannot(result, "ResourceQuotas (GET /api/v1/resourcequotas)", listing.reason)
        return
    for item in listing.items:
        hard = dig(item, "spec", "hard") or {}
        used = dig(item, "status", "used") or {}
        # "requests.alpha.kubernetes.io/nvidia-gpu" is the spelling of Kubernetes 1.6-1.9.
        keys = sorted(k for k in hard if "nvidia.com/" in k or k.endswith("/nvidia-gpu"))
        if keys:
            result["quotas"].append(
                {
                    "namespace": dig(item, "metadata", "namespace"),
                    "name": dig(item, "metadata", "name"),
                    "hard": {k: as_int(hard[k]) for k in keys},
                    "used": {k: as_int(used.get(k)) for k in keys},
                    # False: its scopes leave out the controlled failure's Pod (BestEffort,
                    # Terminating, a PriorityClass), which it then never refuses.
                    "applies_to_probe_pod": quota_selects_probe_pod(item),
                }
            )


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


def quota_selects_probe_pod(quota: dict[str, Any]) -> bool:
    """Whether a ResourceQuota's spec.scopes and spec.scopeSelector select the probe's Pod: a
    quota scoped to BestEffort pods, Terminating pods or a PriorityClass never refuses it."""
    spec = quota.get("spec") or {}
    for scope in spec.get("scopes") or []:
        if not _PROBE_POD_SCOPES.get(str(scope), False):
            return False
    for term in dig(spec, "scopeSelector", "matchExpressions") or []:
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
