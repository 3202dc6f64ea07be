"""The network guard: which addresses a probe may connect to.

Cluster addresses come from users, so a probe must not become a way to reach what the
workbench's own network can reach: only hosts allowed by PROBE_ALLOWED_NETWORKS (CIDRs or host
names, `*.example.com` for a domain), and never link-local or cloud metadata addresses, whatever
the list says. A name is resolved once, here, and the connector connects to the address that was
checked, so a second lookup cannot answer differently (DNS rebinding).
"""

import ipaddress
import socket
from collections.abc import Callable, Sequence

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Refused even when listed: link-local (where cloud metadata services live), the metadata
# addresses of clouds that put them elsewhere, "this network", multicast and broadcast.
ALWAYS_REFUSED = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "169.254.0.0/16",  # IPv4 link-local; 169.254.169.254 is AWS, GCP, Azure, OpenStack
        "fe80::/10",  # IPv6 link-local
        "fd00:ec2::254/128",  # AWS metadata over IPv6
        "100.100.100.200/32",  # Alibaba Cloud metadata
        "168.63.129.16/32",  # Azure WireServer
        "0.0.0.0/8",
        "::/128",
        "224.0.0.0/4",
        "ff00::/8",
        "255.255.255.255/32",
    )
)
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)


class GuardRefused(Exception):
    """The address may not be probed; the message says why."""


def _plain(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def refused_reason(address: IPAddress) -> str | None:
    """Why an address is refused whatever the allowed list says, or None."""
    address = _plain(address)
    for network in ALWAYS_REFUSED:
        if address.version == network.version and address in network:
            return f"{address} is a link-local or cloud metadata address: never probed"
    return None


def _allowed(host: str, address: IPAddress, allowed: Sequence[str]) -> bool:
    name = host.lower().rstrip(".")
    for entry in allowed:
        entry = entry.strip().lower()
        if not entry:
            continue
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            if entry.startswith("*."):
                if name.endswith(entry[1:]) and name != entry[2:]:
                    return True
            elif name == entry.rstrip("."):
                return True
            continue
        if address.version == network.version and address in network:
            return True
    return False


Resolver = Callable[[str, int], list[str]]


def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise GuardRefused(f"{host} does not resolve: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def checked_address(
    host: str, port: int, allowed: Sequence[str], *, resolver: Resolver = _resolve
) -> str:
    """The address to connect to for `host`, resolved once and checked; GuardRefused with the
    reason otherwise."""
    host = host.strip()
    if not host or len(host) > 253 or any(c.isspace() for c in host) or "/" in host:
        raise GuardRefused(f"{host[:80]!r} is not a host name or address")
    if not 0 < port < 65536:
        raise GuardRefused(f"port {port} is out of range")
    if host.lower().rstrip(".") in METADATA_NAMES:
        raise GuardRefused(f"{host} is a cloud metadata service: never probed")
    try:
        literal: IPAddress | None = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    candidates = [str(literal)] if literal is not None else resolver(host, port)
    if not candidates:
        raise GuardRefused(f"{host} does not resolve")
    reasons = []
    for text in candidates:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        reason = refused_reason(address)
        if reason:
            reasons.append(reason)
            continue
        if not _allowed(host, _plain(address), allowed):
            reasons.append(
                f"{host} ({address}) is not in PROBE_ALLOWED_NETWORKS"
                if literal is None
                else f"{address} is not in PROBE_ALLOWED_NETWORKS"
            )
            continue
        return str(address)
    raise GuardRefused(reasons[0])


def refused_as_written(host: str, allowed: Sequence[str]) -> str | None:
    """Why `host` is refused as written, without resolving it (for settings being saved): a
    cloud metadata name, or an address literal that is link-local, metadata or not in
    PROBE_ALLOWED_NETWORKS. A name is judged when a probe resolves it (checked_address)."""
    name = host.strip().strip("[]")
    if name.lower().rstrip(".") in METADATA_NAMES:
        return f"{name} is a cloud metadata service: never probed"
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return None
    reason = refused_reason(address)
    if reason:
        return reason
    if not _allowed(name, _plain(address), allowed):
        return f"{address} is not in PROBE_ALLOWED_NETWORKS"
    return None
