"""API groups served (`GET /apis`) and the products found, or what could not be
checked."""

from typing import Any

from poc.probes.connectors.kubernetes.api import Api, Listing
from poc.probes.connectors.kubernetes.values import dig


class Groups:
    """The API groups the server lists, preferred version first; None: discovery failed."""

    def __init__(self, versions: dict[str, list[str]] | None, reason: str = "") -> None:
        self.versions = versions
        self.reason = reason

    def list(self, api: Api, group: str, plural: str, what: str, result: dict[str, Any]) -> Listing:
        """The objects of a custom resource (all namespaces), trying each served version."""
        if self.versions is None:
            listing = Listing("failed", reason=f"API discovery failed ({self.reason})")
        elif group not in self.versions:
            return Listing("missing", reason=f"API group {group} is not served")
        else:
            listing = Listing("missing", reason=f"{plural}.{group} is not served")
            for version in self.versions[group]:
                found = api.list(f"/apis/{group}/{version}/{plural}")
                if found.state != "missing":
                    found.version = version
                    listing = found
                    break
        if listing.state == "failed":
            cannot(result, what, listing.reason)
        return listing


def discover(api: Api, result: dict[str, Any]) -> Groups:
    reply = api.request("GET", "/apis")
    groups = reply.data.get("groups") if reply.ok else None
    if not isinstance(groups, list):
        reason = reply.error or "the answer has no list of groups"
        cannot(result, "API groups (GET /apis)", reason)
        return Groups(None, reason)
    versions: dict[str, list[str]] = {}
    for group in groups:
        if not isinstance(group, dict) or not group.get("name"):
            continue
        served = [
            str(v.get("version"))
            for v in group.get("versions") or []
            if isinstance(v, dict) and v.get("version")
        ]
        preferred = dig(group, "preferredVersion", "version")
        if preferred:
            served = [str(preferred)] + [v for v in served if v != preferred]
        versions[str(group["name"])] = served
    result["api_groups"] = {name: vs for name, vs in sorted(versions.items())}
    return Groups(versions)


def cannot(result: dict[str, Any], what: str, reason: str) -> None:
    result["could_not_check"].append({"what": what, "reason": reason})


def product(
    result: dict[str, Any], key: str, name: str, listing: Listing, state: str, detail: str
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


def conditions_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for condition in dig(obj, "status", "conditions") or []:
        if isinstance(condition, dict):
            found.append({k: condition.get(k) for k in ("type", "status", "reason", "message")})
    return found
