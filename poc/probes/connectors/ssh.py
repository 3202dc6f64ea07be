"""SSH connector: runs the GPU node commands on each node over SSH (asyncssh), concurrently.

Each node is reached at the address the network guard checked, and only when the server
presents the host key pinned for it: a node without a pinned key, or with another key, is
refused before any credential is sent. Commands run one after another on one connection, each
with its own time limit; what they print comes back as the push agent's bundle would hold it,
so the same parsers read it (poc.probes.parsers.parse_bundle).

Nothing here touches Django; results come back as each node finishes (probe_nodes), so a run
over many nodes holds a few nodes' output at a time, not all of them.
"""

import asyncio
import base64
import hashlib
import queue
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from poc.probes import agent

XID_MARKER = agent.XID_MARKER.decode()
KERNEL_LOG_COMMANDS = tuple((" ".join(argv), " ".join(argv)) for argv in agent.KERNEL_LOG_COMMANDS)
OUTPUT_LIMIT = 32 * 1024 * 1024


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


def _describe(exc: BaseException) -> tuple[str, str]:
    """(failure kind, a readable reason) for an exception met while connecting."""
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return "host_key", (
            "the host key the server presented is not the pinned one: the node refused to "
            "be probed (confirm the new key on the cluster page if the change is expected)"
        )
    if isinstance(exc, asyncssh.PermissionDenied):
        return "auth", "authentication failed: the server refused the user, key or password"
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


def _connect_options(node: SshNode) -> dict[str, Any]:
    if not node.host_key:
        raise ConnectorError(
            "no host key is pinned for this node: test the connection and confirm its key first"
        )
    try:
        pinned = asyncssh.import_public_key(node.host_key)
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
    }
    if node.private_key:
        try:
            key = asyncssh.import_private_key(node.private_key, node.passphrase or None)
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


async def fetch_host_key(address: str, port: int, *, timeout: float = 15.0) -> str:
    """The host key a server presents, as an OpenSSH public key line (for a person to confirm
    by its fingerprint before it is pinned)."""
    try:
        key = await asyncio.wait_for(asyncssh.get_server_host_key(address, port), timeout)
    except Exception as exc:
        raise ConnectorError(_describe(exc)[1]) from None
    if key is None:
        raise ConnectorError("the server presented no host key")
    return key.export_public_key("openssh").decode().strip()


async def _run(
    conn: asyncssh.SSHClientConnection, name: str, command: str, timeout: float
) -> dict[str, Any]:
    started = time.monotonic()
    entry: dict[str, Any] = {"name": name, "command": command, "exit_code": None}
    try:
        done = await conn.run(command, check=False, timeout=timeout)
    except asyncssh.TimeoutError as exc:
        entry.update(
            stdout=str(exc.stdout or "")[:OUTPUT_LIMIT],
            stderr=str(exc.stderr or "")[:65536],
            error=f"timed out after {timeout:g} s",
        )
    except (asyncssh.Error, OSError) as exc:
        entry.update(stdout="", stderr="", error=_describe(exc)[1])
    else:
        entry.update(
            exit_code=done.exit_status,
            stdout=str(done.stdout or "")[:OUTPUT_LIMIT],
            stderr=str(done.stderr or "")[:65536],
            error=None,
        )
        if done.exit_signal:
            entry["error"] = f"killed by signal {done.exit_signal[0]}"
    entry["duration_s"] = round(time.monotonic() - started, 3)
    return entry


def _succeeded(entry: dict[str, Any]) -> bool:
    return entry["error"] is None and entry["exit_code"] == 0


async def _query_gpu(conn: asyncssh.SSHClientConnection, timeout: float) -> dict[str, Any]:
    """--query-gpu with the agent's fields, adapted to what the node's driver knows."""
    fields = list(agent.QUERY_FIELDS)
    renamed, dropped = False, []
    entry: dict[str, Any] = {}
    for _attempt in range(len(fields) + 2):
        args = "--query-gpu=" + ",".join(fields) + " --format=csv"
        entry = await _run(conn, f"nvidia-smi {args}", f"nvidia-smi {args}", timeout)
        match = agent.INVALID_FIELD.search(entry["stdout"] + entry["stderr"])
        if entry["exit_code"] == 0 or not match or match.group(1) not in fields:
            break
        invalid = match.group(1)
        if invalid.startswith(agent.REASON_PREFIXES) and not renamed:
            fields = [agent._swap_reason_prefix(f) for f in fields]
            renamed = True
        else:
            fields.remove(invalid)
            dropped.append(invalid)
        if not fields:
            break
    if dropped:
        entry["note"] = "fields this driver does not know were left out: " + ", ".join(dropped)
    return entry


async def _kernel_log(conn: asyncssh.SSHClientConnection, timeout: float) -> list[dict[str, Any]]:
    entries = []
    for name, command in KERNEL_LOG_COMMANDS:
        entry = await _run(conn, name, command, timeout)
        entry["stdout"] = "".join(
            line for line in entry["stdout"].splitlines(keepends=True) if XID_MARKER in line
        )
        entry["note"] = "only the lines containing 'NVRM: Xid' are kept"
        if entry["error"] is None and agent.PERMISSION_TEXT.search(entry["stderr"]):
            entry["error"] = "permission denied"
        entries.append(entry)
        if _succeeded(entry):
            break
    return entries


Commands = Sequence[tuple[str, str]]


async def gpu_node_outputs(
    conn: asyncssh.SSHClientConnection, timeout: float
) -> list[dict[str, Any]]:
    """The node commands of the push agent, run over one connection."""
    outputs = [await _run(conn, "nvidia-smi -q -x", "nvidia-smi -q -x", timeout)]
    outputs.append(await _query_gpu(conn, timeout))
    for words in ("-L", "nvlink -s", "nvlink -e"):
        outputs.append(await _run(conn, f"nvidia-smi {words}", f"nvidia-smi {words}", timeout))
    outputs += await _kernel_log(conn, timeout)
    return outputs


async def probe_node(node: SshNode, commands: Commands | None = None) -> NodeResult:
    """Connect to one node and run the GPU node commands (or `commands`, (name, command)
    pairs); failures become the result's error, never an exception."""
    started = time.monotonic()
    result = NodeResult(node=node)
    try:
        options = _connect_options(node)
        async with asyncssh.connect(**options) as conn:
            hostname = await _run(conn, "hostname", "hostname", node.command_timeout)
            if _succeeded(hostname):
                result.remote_host = hostname["stdout"].strip()[:255]
            if commands is None:
                result.outputs = await gpu_node_outputs(conn, node.command_timeout)
            else:
                result.outputs = [
                    await _run(conn, name, command, node.command_timeout)
                    for name, command in commands
                ]
    except ConnectorError as exc:
        result.failure, result.error = "error", str(exc)
        if "host key" in str(exc):
            result.failure = "host_key"
    except Exception as exc:  # every failure of one node is that node's outcome
        result.failure, result.error = _describe(exc)
    result.seconds = round(time.monotonic() - started, 3)
    return result


async def _probe_all(
    nodes: Iterable[SshNode],
    concurrency: int,
    on_result: Callable[[NodeResult], None],
    commands: Commands | None,
    should_stop: Callable[[], bool],
) -> None:
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(node: SshNode) -> None:
        # The result is handed on here, not returned: a finished task keeps what it returns
        # until the run ends, and a run of many nodes would hold every node's raw outputs.
        async with semaphore:
            if should_stop():
                return
            result = await probe_node(node, commands)
        on_result(result)

    tasks = [asyncio.ensure_future(one(node)) for node in nodes]
    try:
        for finished in asyncio.as_completed(tasks):
            await finished
            if should_stop():
                break
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


_DONE = object()


def probe_nodes(
    nodes: Iterable[SshNode],
    *,
    concurrency: int = 16,
    commands: Commands | None = None,
    cancel: threading.Event | None = None,
) -> Generator[NodeResult]:
    """Probe every node, `concurrency` at a time, yielding each result as it finishes.

    The SSH work runs on an event loop in a thread of its own, so the caller (a worker writing
    each node to the database) stays synchronous. Few results wait at a time: when the caller
    falls behind, the probe waits, and memory stays flat however many nodes there are. Closing
    the iterator (a cancelled or timed-out run) stops nodes not yet started, and so does
    setting `cancel` (another thread watching for a person's cancel), at once."""
    results: queue.Queue[Any] = queue.Queue(maxsize=max(2, concurrency))
    stop = threading.Event()

    def stopping() -> bool:
        return stop.is_set() or (cancel is not None and cancel.is_set())

    def put(item: Any) -> None:
        while not stop.is_set():
            try:
                results.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def runner() -> None:
        try:
            asyncio.run(_probe_all(list(nodes), concurrency, put, commands, stopping))
        except BaseException as exc:  # handed to the caller's thread
            put(exc)
        finally:
            stop_wait = time.monotonic() + 5
            while time.monotonic() < stop_wait:
                try:
                    results.put(_DONE, timeout=0.2)
                    break
                except queue.Full:
                    if stop.is_set():
                        break

    thread = threading.Thread(target=runner, name="ssh-probe", daemon=True)
    thread.start()
    try:
        while True:
            item = results.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join(timeout=10)


def host_key_of(address: str, port: int, *, timeout: float = 15.0) -> str:
    """fetch_host_key for synchronous callers (a view's "test connection"), on an event loop in
    a thread of its own: the caller's thread may already run one (an ASGI server)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, fetch_host_key(address, port, timeout=timeout)).result()
