"""Reaching a node: its address, pinned host key and client key, the
connection options, readable reasons for SSH failures; what a node's probe brings back."""

import asyncio
import base64
import contextvars
import hashlib
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from poc.probes.node import agent


class ConnectorError(Exception):
    """The node could not be probed; the message says why and holds no secret."""


@dataclass(frozen=True)
class SshNode:
    """One node to probe: `host` as the user named it, `address` the one the guard checked."""

    host: str
    port: int
    address: str
    username: str
    host_key: str = ""  # the pinned OpenSSH public key line; empty: refuse
    private_key: str = field(default="", repr=False)
    passphrase: str = field(default="", repr=False)
    password: str = field(default="", repr=False)
    connect_timeout: float = 15.0
    command_timeout: float = 60.0

    @property
    def label(self) -> str:
        return self.host if self.port == 22 else f"{self.host}:{self.port}"


@dataclass
class NodeResult:
    """What one node gave: its outputs (bundle-shaped), or why it could not be read."""

    node: SshNode
    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    failure: str = ""  # "", "connect", "host_key", "auth", "timeout", "error"
    seconds: float = 0.0
    remote_host: str = ""

    def bundle(self, *, expected_gpus: int | None = None) -> dict[str, Any]:
        """The node's outputs as a push-agent bundle (docs/probes.md)."""
        return {
            "format": agent.BUNDLE_FORMAT,
            "agent": {"version": agent.VERSION, "python": "ssh"},
            "host": self.remote_host or self.node.host,
            "collected_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "expected_gpus": expected_gpus,
            "outputs": self.outputs,
            "benchmarks": [],
        }


def fingerprint(key_line: str) -> str:
    """OpenSSH's SHA256 fingerprint of a public key line ("SHA256:...")."""
    parts = key_line.split()
    if len(parts) < 2:
        raise ConnectorError("not an OpenSSH public key line")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except ValueError:
        raise ConnectorError("not an OpenSSH public key line") from None
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def describe(exc: BaseException) -> tuple[str, str]:
    """(failure kind, a readable reason) for an exception met while connecting."""
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return "host_key", (
            "the host key the server presented is not the pinned one: the node refused to "
            "be probed (confirm the new key on the cluster page if the change is expected)"
        )
    if isinstance(exc, asyncssh.PermissionDenied):
        return (
            "auth",
            "authentication failed: the server refused the user, key or password",
        )
    if isinstance(exc, asyncssh.KeyImportError):
        return "auth", "the private key cannot be read (wrong format or passphrase)"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timeout", "no answer in time"
    if isinstance(exc, ConnectionRefusedError):
        return "connect", "connection refused (no SSH server on that port)"
    if isinstance(exc, (OSError, socket.gaierror)):
        return "connect", f"cannot connect: {exc.strerror or exc}"
    if isinstance(exc, asyncssh.DisconnectError):
        return "connect", f"the server closed the connection: {exc.reason}"
    if isinstance(exc, asyncssh.Error):
        return "error", f"SSH error: {exc.reason}"
    return "error", f"{type(exc).__name__}: {exc}"


def _host_key_algorithms(key: asyncssh.SSHKey) -> list[str]:
    name = key.get_algorithm()
    if name == "ssh-rsa":
        return ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]
    return [name]


# asyncssh's default ciphers, AES-GCM first: as strong as ChaCha20-Poly1305 (both AEAD, no
# separate MAC), and cheaper on both sides where the CPU has AES instructions.
ENCRYPTION_ALGS = (
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-gcm@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
)
# The keys read during one run (probe_nodes), by their text: a run reads its cluster's key once,
# not once a node (reading an RSA key checks it, which takes a good part of a second).
RUN_KEYS: contextvars.ContextVar[dict[tuple[str, str], asyncssh.SSHKey] | None] = (
    contextvars.ContextVar("ssh_run_keys", default=None)
)


def _import_key(text: str, passphrase: str = "", *, private: bool) -> asyncssh.SSHKey:
    keys = RUN_KEYS.get()
    cached = keys.get((text, passphrase)) if keys is not None else None
    if cached is not None:
        return cached
    if private:
        key = asyncssh.import_private_key(text, passphrase or None)
    else:
        key = asyncssh.import_public_key(text)
    if keys is not None:
        keys[(text, passphrase)] = key
    return key


def connect_options(node: SshNode) -> dict[str, Any]:
    if not node.host_key:
        raise ConnectorError(
            "no host key is pinned for this node: test the connection and confirm its key first"
        )
    try:
        pinned = _import_key(node.host_key, private=False)
    except (asyncssh.KeyImportError, ValueError):
        raise ConnectorError("the pinned host key cannot be read") from None
    options: dict[str, Any] = {
        "host": node.address,
        "port": node.port,
        "username": node.username,
        "known_hosts": ([pinned], [], []),
        "server_host_key_algs": _host_key_algorithms(pinned),
        "connect_timeout": node.connect_timeout,
        "login_timeout": node.connect_timeout,
        "agent_path": None,  # never the worker's own SSH agent
        "config": [],  # nor its ~/.ssh/config
        "preferred_auth": "publickey,keyboard-interactive,password",
        "encryption_algs": list(ENCRYPTION_ALGS),
    }
    if node.private_key:
        try:
            key = _import_key(node.private_key, node.passphrase, private=True)
        except (asyncssh.KeyImportError, ValueError):
            raise ConnectorError(
                "the private key cannot be read (wrong format or passphrase)"
            ) from None
        options["client_keys"] = [key]
    else:
        options["client_keys"] = []
    if node.password:
        options["password"] = node.password
    elif not node.private_key:
        raise ConnectorError("no SSH private key or password is stored for this cluster")
    return options
