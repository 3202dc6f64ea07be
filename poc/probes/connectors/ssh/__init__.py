"""SSH connector: runs the GPU node commands on each node over SSH (asyncssh), concurrently.

The commands are the push agent's (poc.probes.parsers.node_commands, all but DCGM's diagnostic),
the --query-gpu fields adapted to each driver as the agent adapts them (agent.QueryFields).

Each node is reached at the address the network guard checked, and only when the server
presents the host key pinned for it: a node without a pinned key, or with another key, is
refused before any credential is sent. A node's commands run one after another in one remote
shell session (one channel: see "one session per node" below), each with its own time limit,
or one channel each where the node's shell does not run the script; what they print comes back
as the push agent's bundle would hold it, so the same parsers read it
(poc.probes.parsers.parse_bundle).

Nothing here touches Django; results come back as each node finishes (probe_nodes), so a run
over many nodes holds a few nodes' output at a time, not all of them.

The package: this module runs the commands (one session per node, or a channel each) and the
nodes; `connection` reaches a node (host keys, client keys, options, reasons for failures) and
`script` holds the one-session script's parts and reads its framed output.
"""

import asyncio
import queue
import secrets
import threading
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

import asyncssh

from poc.probes.connectors.ssh.connection import (
    ENCRYPTION_ALGS,
    RUN_KEYS,
    ConnectorError,
    NodeResult,
    SshNode,
    connect_options,
    describe,
    fingerprint,
)
from poc.probes.connectors.ssh.script import (
    Batch,
    Splitter,
    Step,
    add_note,
    batch_entry,
    pump,
    shown_words,
    succeeded,
)
from poc.probes.node import agent
from poc.probes.parsers.node_commands import KERNEL_LOG, NODE_COMMANDS, WITH_DCGM, NodeCommand

__all__ = [
    "BATCH_SLACK",
    "ENCRYPTION_ALGS",
    "HOSTNAME",
    "KERNEL_LOG_COMMANDS",
    "KERNEL_LOG_MARKERS",
    "KILL_GRACE",
    "OUTPUT_LIMIT",
    "STDERR_LIMIT",
    "Commands",
    "ConnectorError",
    "NodeResult",
    "SshNode",
    "fetch_host_key",
    "fingerprint",
    "gpu_node_outputs",
    "host_key_of",
    "probe_node",
    "probe_nodes",
]

KERNEL_LOG_MARKERS = tuple(marker.decode() for marker in agent.KERNEL_LOG_MARKERS)
# The node commands the SSH probe runs: all but DCGM's diagnostic (the agent's, when asked for).
SSH_COMMANDS = tuple(command for command in NODE_COMMANDS if command.when != WITH_DCGM)
# The kernel log's, as (name, command) pairs, in the order they are tried.
KERNEL_LOG_COMMANDS = tuple((c.line, c.line) for c in SSH_COMMANDS if c.when == KERNEL_LOG)
OUTPUT_LIMIT = 32 * 1024 * 1024
STDERR_LIMIT = 65536


async def fetch_host_key(address: str, port: int, *, timeout: float = 15.0) -> str:
    """The host key a server presents, as an OpenSSH public key line (for a person to confirm
    by its fingerprint before it is pinned)."""
    try:
        key = await asyncio.wait_for(asyncssh.get_server_host_key(address, port), timeout)
    except Exception as exc:
        raise ConnectorError(describe(exc)[1]) from None
    if key is None:
        raise ConnectorError("the server presented no host key")
    return key.export_public_key("openssh").decode().strip()


async def _run(
    conn: asyncssh.SSHClientConnection, name: str, command: str, timeout: float
) -> dict[str, Any]:
    """One command on a channel of its own (the way when the batch cannot be used)."""
    started = time.monotonic()
    entry: dict[str, Any] = {"name": name, "command": command, "exit_code": None}
    process: asyncssh.SSHClientProcess[str] | None = None
    try:
        process = await conn.create_process(command, errors="replace")
        done = await process.wait(timeout=timeout)
    except asyncssh.TimeoutError as exc:
        entry.update(
            stdout=str(exc.stdout or "")[:OUTPUT_LIMIT],
            stderr=str(exc.stderr or "")[:STDERR_LIMIT],
            error=f"timed out after {timeout:g} s",
        )
        if process is not None:
            await _stop(process)
    except (asyncssh.Error, OSError) as exc:
        entry.update(stdout="", stderr="", error=describe(exc)[1])
    else:
        entry.update(
            exit_code=done.exit_status,
            stdout=str(done.stdout or "")[:OUTPUT_LIMIT],
            stderr=str(done.stderr or "")[:STDERR_LIMIT],
            error=None,
        )
        if done.exit_signal:
            entry["error"] = f"killed by signal {done.exit_signal[0]}"
    finally:
        if process is not None:
            process.close()
    entry["duration_s"] = round(time.monotonic() - started, 3)
    return entry


async def _stop(process: asyncssh.SSHClientProcess[str]) -> None:
    """Ask the node to end a command past its limit: TERM, then KILL if it has not ended
    KILL_GRACE seconds later. OpenSSH sends either to the session's process group, the command
    and what it started; a server that refuses signals (a forced command's session) leaves it
    running, and the channel is closed all the same."""
    for name in ("TERM", "KILL"):
        try:
            process.send_signal(name)
        except (asyncssh.Error, OSError):
            return
        if name == "TERM":
            try:
                await asyncio.wait_for(process.wait_closed(), KILL_GRACE)
                return
            except TimeoutError:
                continue


#
# A node's commands run in one remote shell session: one channel, one round trip, one login
# shell, instead of one of each per command. The script (POSIX sh) frames each command's
# stdout and stderr with markers holding a nonce drawn for this run, which no command can
# know; the begin marker on stdout carries the command's process id (read by the process itself
# from /proc/self/stat before it becomes the command) and the end marker its exit status.
#
# The client keeps each command's time limit: past it, it writes "TERM <pid>" on the session's
# stdin, "KILL <pid>" KILL_GRACE seconds later, and a reader the script starts in the
# background sends those signals (to that process only: a late request cannot reach the next
# command, which has another process id). What a command killed by a signal leaves running (the
# rest of a pipeline, say) is stopped before the next command starts, so that none of it writes
# into the next command's output. No process is started per command beyond the command itself
# (coreutils `timeout` cost two more), and nothing runs on when the client is gone: at the end
# of its stdin the reader stops the session's whole process group (TERM, then KILL). Where the
# shell does not run the script (a restricted shell, a forced command), where the script's
# shell does not lead a process group of its own (that group is what the reader stops; OpenSSH
# makes each session one), or where the node has no /proc, the commands run one channel each.

KILL_GRACE = 5  # s from a command's TERM at its time limit to its KILL
BATCH_SLACK = 5.0  # s more the client waits for a command of the batch before it cuts the batch

# Each command's begin marker goes out with the previous command's end marker, in one write
# per stream: fewer packets for both sides to handle. Where the client is gone (it cut the
# batch), the session stops instead of running the rest unseen. The script's last acts stop
# the reader and whatever a command left running in the background (the script itself
# catches that TERM), so that the session's streams end.
_SCRIPT = r"""_wb_n=@NONCE@
_wb_p=
_wb_x=
read -r _wb_x _wb_y _wb_y _wb_y _wb_g _wb_y 2>/dev/null </proc/self/stat
if [ -n "$_wb_x" ] && [ "$_wb_x" = "$_wb_g" ]; then
  printf '%s:h:1\n' "$_wb_n"
else
  printf '%s:h:0\n' "$_wb_n"; exit 0
fi
exec 3<&0
(
  trap '' TERM
  while read -r _wb_g _wb_q; do
    case "$_wb_g $_wb_q" in
      "TERM "[1-9]*|"KILL "[1-9]*) kill -s "$_wb_g" "$_wb_q" 2>/dev/null ;;
    esac
  done
  kill -s TERM 0
  sleep @GRACE@
  kill -s KILL 0
) <&3 >/dev/null 2>&1 &
_wb_rd=$!
exec 3<&-
_wb_r() {
  _wb_i=$1; shift
  (
    read -r _wb_x _wb_y </proc/self/stat
    printf '%s%s:%s:b:%s\n' "$_wb_p" "$_wb_n" "$_wb_i" "$_wb_x" || kill -s TERM 0
    printf '%s%s:%s:b\n' "$_wb_p" "$_wb_n" "$_wb_i" >&2 || kill -s TERM 0
    exec "$@" </dev/null
  ) &
  wait $!
  _wb_s=$?
  if [ "$_wb_s" -gt 128 ]; then
    trap : TERM; kill -s TERM 0; trap - TERM
  fi
  _wb_p="
${_wb_n}:${_wb_i}:e:${_wb_s}
"
}"""
_SCRIPT_END = """printf '%s' "$_wb_p"; printf '%s' "$_wb_p" >&2
{ kill -s KILL "$_wb_rd"; wait "$_wb_rd"; } 2>/dev/null
trap : TERM
kill -s TERM 0"""


def _batch_script(nonce: str, steps: Sequence[Step]) -> str:
    """The POSIX sh script running `steps` in order, each framed on both streams."""
    lines = [_SCRIPT.replace("@NONCE@", nonce).replace("@GRACE@", str(KILL_GRACE))]
    for index, step in enumerate(steps):
        run = f"_wb_r {index} {shown_words(step)}"
        if step.group:
            # Only while no earlier command of the group exited 0.
            run = f'if [ -z "$_wb_k" ]; then {run}; [ "$_wb_s" = 0 ] && _wb_k={index}; fi'
            if index == 0 or steps[index - 1].group != step.group:
                lines.append("_wb_k=")
        lines.append(run)
    lines.append(_SCRIPT_END)
    return "\n".join(lines) + "\n"


def _deadline(out: Splitter, timeout: float) -> float:
    """When the client gives up on the batch (and cuts it) if no marker comes before."""
    if out.eof:  # every command is done: stderr's end is on its way
        return out.last + BATCH_SLACK
    if out.current is not None:
        return out.last + timeout + KILL_GRACE + BATCH_SLACK
    return out.last + timeout + BATCH_SLACK


def _signal_due(out: Splitter, timeout: float, sent: dict[int, str]) -> tuple[str, float] | None:
    """The signal the running command has coming (TERM at its limit, KILL KILL_GRACE seconds
    later) and when; None when it has had both or its process is not known."""
    index = out.current
    if index is None or index not in out.pids or sent.get(index) == "KILL":
        return None
    if sent.get(index) == "TERM":
        return "KILL", out.began[index] + timeout + KILL_GRACE
    return "TERM", out.began[index] + timeout


async def _run_batch(
    conn: asyncssh.SSHClientConnection, steps: Sequence[Step], timeout: float
) -> Batch:
    nonce = secrets.token_hex(16)
    out, err = Splitter(nonce, OUTPUT_LIMIT), Splitter(nonce, STDERR_LIMIT)
    batch = Batch(entries=[None] * len(steps))
    cut = ""
    sent: dict[int, str] = {}  # the signals asked for, by command
    try:
        process = await conn.create_process(_batch_script(nonce, steps), encoding=None)
    except (asyncssh.Error, OSError) as exc:
        batch.note = f"the batch could not start ({describe(exc)[1]})"
        return batch
    pumps = asyncio.gather(pump(process.stdout, out), pump(process.stderr, err))
    try:
        while not pumps.done():
            now = time.monotonic()
            due = _signal_due(out, timeout, sent)
            if due is not None and due[1] <= now:
                index = out.current
                assert index is not None
                # The script's reader sends it to that process, and to no other.
                process.stdin.write(f"{due[0]} {out.pids[index]}\n".encode())
                sent[index] = due[0]
                continue
            wait = _deadline(out, timeout) - now
            if wait <= 0:
                cut = f"timed out after {timeout:g} s"
                break
            if due is not None:
                wait = min(wait, due[1] - now)
            await asyncio.wait({pumps}, timeout=min(wait, 1.0))  # deadlines move as it goes
        else:
            pumps.result()
    except (asyncssh.Error, OSError) as exc:
        cut = describe(exc)[1]
    finally:
        pumps.cancel()
        await asyncio.gather(pumps, return_exceptions=True)
        process.close()
        out.finish()
        err.finish()
    if out.header is None:
        said = bytes(err.stray or out.stray).decode("utf-8", "replace").strip().splitlines()
        if cut:
            batch.note = f"the batch script gave nothing before it was cut ({cut})"
        else:
            batch.note = "the node's shell did not run the batch script (a restricted shell or " + (
                f"a forced command? it said: {said[0][:120]})" if said else "a forced command?)"
            )
        return batch
    if out.header != b"1":
        batch.note = (
            "the node's shell cannot name its commands' processes (no /proc, or a session "
            "without a process group of its own)"
        )
        return batch
    now = time.monotonic()
    for index, step in enumerate(steps):
        if index in out.began:
            timed_out = index in sent
            batch.entries[index] = batch_entry(step, index, out, err, timeout, timed_out, cut, now)
            if index not in out.status:
                batch.note = f"the batch was cut at `{step.name}` ({cut or 'it ended early'})"
    return batch


async def _batched(
    conn: asyncssh.SSHClientConnection, steps: Sequence[Step], timeout: float
) -> Batch:
    """Every step's entry, from the batch where it could run them, else from channels of their
    own (with a note saying why); the steps of a group the batch did not reach stay None for
    the group's own rule (_kernel_log)."""
    batch = await _run_batch(conn, steps, timeout)
    note = f"run on a channel of its own: {batch.note}" if batch.note else ""
    for index, step in enumerate(steps):
        if batch.entries[index] is None and not step.group:
            entry = await _run(conn, step.name, step.command, timeout)
            add_note(entry, note)
            batch.entries[index] = entry
    batch.note = note
    return batch


async def _query_gpu(
    conn: asyncssh.SSHClientConnection,
    timeout: float,
    first: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """--query-gpu with the agent's fields, adapted as the agent does to what the node's driver
    knows; `first`: the answer to the full field list when the batch already asked (another
    round trip only when the driver refused a field)."""
    query = agent.QueryFields()
    entry: dict[str, Any] = {}
    for attempt in range(query.tries):
        line = " ".join(["nvidia-smi", *query.args()])
        if attempt == 0 and first is not None:
            entry = first
        else:
            entry = await _run(conn, line, line, timeout)
        if not query.adapt(entry):
            break
    add_note(entry, query.dropped_note())
    return entry


async def _kernel_log(
    conn: asyncssh.SSHClientConnection,
    timeout: float,
    ran: Sequence[dict[str, Any] | None] = (),
    note: str = "",
) -> list[dict[str, Any]]:
    """The kernel log commands in order until one succeeds; `ran`: the entries the batch
    already has for them (None past where it stopped), the rest run on channels of their own."""
    entries = []
    for index, (name, command) in enumerate(KERNEL_LOG_COMMANDS):
        entry = ran[index] if index < len(ran) else None
        if entry is None:
            entry = await _run(conn, name, command, timeout)
            add_note(entry, note)
        entry["stdout"] = "".join(
            line
            for line in entry["stdout"].splitlines(keepends=True)
            if any(marker in line for marker in KERNEL_LOG_MARKERS)
        )
        add_note(entry, agent.KERNEL_LOG_NOTE)
        if entry["error"] is None and agent.PERMISSION_TEXT.search(entry["stderr"]):
            entry["error"] = "permission denied"
        entries.append(entry)
        if succeeded(entry):
            break
    return entries


Commands = Sequence[tuple[str, str]]

HOSTNAME = Step("hostname", "hostname")


def _gpu_steps() -> list[Step]:
    """A step per node command, the query's with every field, the kernel log's as a group."""
    return [
        Step(c.shown, c.shown, group="kernel log" if c.when == KERNEL_LOG else "")
        for c in SSH_COMMANDS
    ]


async def _node_outputs(
    conn: asyncssh.SSHClientConnection,
    timeout: float,
    commands: Commands | None,
    *,
    hostname: bool,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(the `hostname` entry when asked, the outputs): the GPU node commands, or `commands`,
    in one session where the node allows it."""
    lead = [HOSTNAME] if hostname else []
    if commands is None:
        steps = lead + _gpu_steps()
    else:
        steps = lead + [Step(name, command, plain=False) for name, command in commands]
    batch = await _batched(conn, steps, timeout)
    host = batch.entries[0] if hostname else None
    rest = batch.entries[len(lead) :]
    if commands is not None:
        return host, [entry for entry in rest if entry is not None]
    return host, await _gpu_outputs(
        conn, timeout, list(zip(SSH_COMMANDS, rest, strict=True)), batch.note
    )


async def _gpu_outputs(
    conn: asyncssh.SSHClientConnection,
    timeout: float,
    ran: list[tuple[NodeCommand, dict[str, Any] | None]],
    note: str,
) -> list[dict[str, Any]]:
    """The node commands' outputs from what the batch gave (None where it did not reach a
    command of the kernel log's group), in order: the query adapted to the driver, the kernel
    log's commands tried in turn where the first of them stands."""
    kernel_log = [entry for command, entry in ran if command.when == KERNEL_LOG]
    outputs: list[dict[str, Any]] = []
    kernel_log_read = False
    for command, entry in ran:
        if command.when == KERNEL_LOG:
            if not kernel_log_read:
                outputs += await _kernel_log(conn, timeout, kernel_log, note)
                kernel_log_read = True
        elif command.format == "query-csv":
            outputs.append(await _query_gpu(conn, timeout, first=entry))
        elif entry is not None:  # a command outside a group always has its entry
            outputs.append(entry)
    return outputs


async def gpu_node_outputs(
    conn: asyncssh.SSHClientConnection, timeout: float
) -> list[dict[str, Any]]:
    """The node commands of the push agent, run over one connection (in one session where the
    node's shell allows it)."""
    return (await _node_outputs(conn, timeout, None, hostname=False))[1]


async def probe_node(node: SshNode, commands: Commands | None = None) -> NodeResult:
    """Connect to one node and run the GPU node commands (or `commands`, (name, command)
    pairs); failures become the result's error, never an exception."""
    started = time.monotonic()
    result = NodeResult(node=node)
    try:
        options = connect_options(node)
        async with asyncssh.connect(**options) as conn:
            hostname, result.outputs = await _node_outputs(
                conn, node.command_timeout, commands, hostname=True
            )
            if hostname is not None and succeeded(hostname):
                result.remote_host = hostname["stdout"].strip()[:255]
    except ConnectorError as exc:
        result.failure, result.error = "error", str(exc)
        if "host key" in str(exc):
            result.failure = "host_key"
    except Exception as exc:  # every failure of one node is that node's outcome
        result.failure, result.error = describe(exc)
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
    keys: dict[tuple[str, str], asyncssh.SSHKey] = {}
    token = RUN_KEYS.set(keys)  # the node tasks below start in this context

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
        RUN_KEYS.reset(token)
        keys.clear()


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
