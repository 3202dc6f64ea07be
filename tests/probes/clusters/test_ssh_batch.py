"""A node's commands in one remote shell session (OpenSSH on 127.0.0.1, the fake nvidia-smi
replaying the H200 captures): what comes back per command is what one channel per command gives,
streams and exit statuses stay with their command whatever it prints, time limits hold, and a
node whose shell does not run the script is read one channel a command, as before."""

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from poc.probes.connectors import ssh
from poc.probes.node import agent
from poc.probes.parsers import parse_outputs
from poc.probes.rules import health
from tests.sshd import SshNode, start_node

COMPARED = ("name", "command", "exit_code", "stdout", "stderr", "error")
XID_LINE = (
    "2026-01-05T10:00:00+0000 node kernel: NVRM: Xid (PCI:0000:19:00): 79, GPU has fallen off"
)


def target(node: SshNode, timeout: float = 30.0) -> ssh.SshNode:
    return ssh.SshNode(
        host="127.0.0.1",
        port=node.port,
        address="127.0.0.1",
        username="wbprobe",
        host_key=node.host_key,
        private_key=node.client_key,
        command_timeout=timeout,
    )


def probe(
    node: SshNode, commands: ssh.Commands | None = None, timeout: float = 30.0
) -> ssh.NodeResult:
    # Through probe_nodes, as runs do: its event loop runs in a thread of its own, so a loop
    # running in this thread (the browser tests' Playwright) is no obstacle.
    (result,) = ssh.probe_nodes([target(node, timeout)], concurrency=1, commands=commands)
    assert not result.error, result.error
    return result


def compared(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: output[key] for key in COMPARED} for output in outputs]


@pytest.fixture
def channels(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the commands that ran on a channel of their own (not in the batch)."""
    ran: list[str] = []
    original = ssh._run

    async def counted(conn: Any, name: str, command: str, timeout: float) -> dict[str, Any]:
        ran.append(name)
        return await original(conn, name, command, timeout)

    monkeypatch.setattr(ssh, "_run", counted)
    return ran


def tool(node: SshNode, name: str, text: str) -> None:
    """Put a stand-in for a command on the node's PATH."""
    path = node.directory / "bin" / name
    path.write_text(text)
    path.chmod(0o755)


def test_one_session_gives_what_a_channel_per_command_gives(
    ssh_nodes: dict[str, SshNode], channels: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    batched = probe(ssh_nodes["gpu1"])
    assert channels == []  # hostname and every node command came from the one session
    assert batched.remote_host

    async def no_batch(conn: Any, steps: Any, timeout: float) -> ssh.Batch:
        return ssh.Batch(entries=[None] * len(steps), note="off for the comparison")

    monkeypatch.setattr(ssh, "_run_batch", no_batch)
    single = probe(ssh_nodes["gpu1"])
    assert channels == ["hostname"] + [o["name"] for o in single.outputs]
    assert compared(batched.outputs) == compared(single.outputs)
    assert batched.remote_host == single.remote_host
    names = [o["name"] for o in batched.outputs]
    assert names[0] == "nvidia-smi -q -x" and names[-2:] == [c[0] for c in ssh.KERNEL_LOG_COMMANDS]
    assert (
        batched.outputs[0]["stdout"].startswith("<?xml") and "H200" in batched.outputs[0]["stdout"]
    )
    assert [o["exit_code"] for o in batched.outputs[3:5]] == [3, 3]  # nvlink: no NVLink here
    assert all(o["duration_s"] >= 0 for o in batched.outputs)


def test_exit_statuses_and_streams_stay_with_their_command(
    ssh_nodes: dict[str, SshNode], channels: list[str]
) -> None:
    result = probe(
        ssh_nodes["gpu1"],
        [
            ("a", "echo out-a; echo err-a >&2; exit 3"),
            ("b", "printf 'no newline'"),
            ("c", "echo only-err >&2"),
            ("d", "printf '\\n\\n'; printf 'x' >&2"),
            ("e", "kill -SEGV $$"),
            ("f", "echo $((6 * 7))"),  # read by the login shell, as on a channel of its own
        ],
    )
    got = [
        (o["name"], o["exit_code"], o["stdout"], o["stderr"], o["error"]) for o in result.outputs
    ]
    # The script's shell reports a command killed by a signal on stderr, within its frame.
    assert got[4][2:4] == ("", "Segmentation fault\n")
    got[4] = (*got[4][:3], "", got[4][4])
    assert got == [
        ("a", 3, "out-a\n", "err-a\n", None),
        ("b", 0, "no newline", "", None),
        ("c", 0, "", "only-err\n", None),
        ("d", 0, "\n\n", "x", None),
        ("e", 139, "", "", "killed by signal SEGV"),
        ("f", 0, "42\n", "", None),
    ]
    assert channels == []


def test_output_that_looks_like_the_markers_does_not_break_the_split(
    ssh_nodes: dict[str, SshNode], channels: list[str]
) -> None:
    # The first command prints the batch script itself (its shell's command line, nonce and
    # all); the second prints markers of a made-up nonce.
    own_script = "tr '\\0' '\\n' < /proc/$PPID/cmdline"
    forged = "printf '%s\\n' 'x' '0123456789abcdef0123456789abcdef:2:e:0' 'beef:3:b' ':h:1' 'y'"
    commands = [("script", own_script), ("forged", forged), ("after", "echo after")]
    first, second = probe(ssh_nodes["gpu1"], commands), probe(ssh_nodes["gpu1"], commands)
    nonces = []
    for result in (first, second):
        script, fake, after = result.outputs
        found = re.search(r"_wb_n=([0-9a-f]{32})\n", script["stdout"])
        assert found and script["exit_code"] == 0 and "_wb_r 2 " in script["stdout"]
        nonces.append(found.group(1))
        assert fake["stdout"] == "x\n0123456789abcdef0123456789abcdef:2:e:0\nbeef:3:b\n:h:1\ny\n"
        assert (fake["exit_code"], after["stdout"], after["exit_code"]) == (0, "after\n", 0)
    assert nonces[0] != nonces[1]  # drawn per run: no command can know it beforehand
    assert channels == []


def test_a_command_past_its_limit_is_reported_and_the_next_ones_still_run(
    ssh_nodes: dict[str, SshNode], channels: list[str]
) -> None:
    result = probe(
        ssh_nodes["gpu1"], [("slow", "echo started; sleep 30"), ("next", "echo next")], timeout=1
    )
    slow, after = result.outputs
    assert (slow["error"], slow["exit_code"], slow["stdout"]) == (
        "timed out after 1 s",
        None,
        "started\n",
    )
    assert 0.9 <= slow["duration_s"] < 5
    assert (after["error"], after["exit_code"], after["stdout"]) == (None, 0, "next\n")
    assert result.seconds < 8 and channels == []
    # A node whose nvidia-smi hangs: each GPU command is cut at its limit, the kernel log
    # is still read, all in the one session.
    hung = probe(ssh_nodes["hang"], timeout=1)
    smi = [o for o in hung.outputs if o["name"].startswith("nvidia-smi")]
    assert len(smi) == 5 and all(o["error"] == "timed out after 1 s" for o in smi)
    assert hung.outputs[5]["name"] == "dmesg" and hung.outputs[5]["error"] == "permission denied"
    assert channels == []


def test_a_command_that_ignores_its_term_is_killed_and_the_batch_goes_on(
    ssh_nodes: dict[str, SshNode], channels: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ssh, "KILL_GRACE", 1)
    deaf = "trap '' TERM; echo before; sleep 30"  # its sleep ignores TERM too
    result = probe(ssh_nodes["gpu1"], [("deaf", deaf), ("next", "echo next")], timeout=1)
    first, after = result.outputs
    assert (first["error"], first["stdout"]) == ("timed out after 1 s", "before\n")
    assert 1.9 <= first["duration_s"] < 4  # TERM at 1 s did nothing; KILL a second later
    assert (after["stdout"], after["exit_code"], channels) == ("next\n", 0, [])


def test_what_a_command_past_its_limit_left_running_does_not_reach_the_next(
    ssh_nodes: dict[str, SshNode], channels: list[str]
) -> None:
    # `slow` is ended at its limit; the background part it started would print into the next
    # command's output a fifth of a second later, were it not stopped with it.
    slow = "(sleep 1.2; echo late; echo late >&2) & exec sleep 30"
    result = probe(ssh_nodes["gpu1"], [("slow", slow), ("next", "sleep 0.6; echo next")], timeout=1)
    first, after = result.outputs
    assert first["error"] == "timed out after 1 s"
    assert (after["stdout"], after["stderr"], after["exit_code"]) == ("next\n", "", 0)
    assert channels == []


def test_a_command_past_its_limit_on_a_channel_of_its_own_is_stopped_on_the_node(
    ssh_nodes: dict[str, SshNode], channels: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where the batch is not used, a command past its limit is signalled through the channel
    # (OpenSSH sends it to the command's process group), not left running on the node.
    async def no_batch(conn: Any, steps: Any, timeout: float) -> ssh.Batch:
        return ssh.Batch(entries=[None] * len(steps), note="off for this test")

    monkeypatch.setattr(ssh, "_run_batch", no_batch)
    pids = ssh_nodes["gpu1"].directory / "pids"
    pids.mkdir(mode=0o777, exist_ok=True)
    pids.chmod(0o777)
    slow = f"sleep 40 & echo $! > {pids}/child; echo $$ > {pids}/shell; wait"
    result = probe(ssh_nodes["gpu1"], [("slow", slow), ("next", "echo next")], timeout=1)
    first, after = result.outputs
    assert first["error"] == "timed out after 1 s" and after["stdout"] == "next\n"
    assert channels == ["hostname", "slow", "next"]
    deadline = time.monotonic() + 5
    alive = ["shell", "child"]
    while alive and time.monotonic() < deadline:
        alive = [n for n in alive if Path(f"/proc/{(pids / n).read_text().strip()}").exists()]
        time.sleep(0.05)
    assert alive == []


def test_a_command_that_outlives_its_kill_cuts_the_batch_and_the_rest_run_on_their_own(
    ssh_nodes: dict[str, SshNode], channels: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client gives up on a running command half a second past its limit, before the
    # node's KILL would come: as with a command stuck in the kernel, which no signal ends.
    deadline = ssh._deadline

    def impatient(out: ssh.Splitter, timeout: float) -> float:
        if out.current is None:
            return deadline(out, timeout)
        return out.last + timeout + 0.5

    monkeypatch.setattr(ssh, "_deadline", impatient)
    result = probe(
        ssh_nodes["gpu1"],
        [("stuck", "trap '' TERM; echo before; sleep 20"), ("next", "echo next")],
        timeout=1,
    )
    stuck, after = result.outputs
    assert (stuck["error"], stuck["exit_code"], stuck["stdout"]) == (
        "timed out after 1 s",
        None,
        "before\n",
    )
    assert (after["stdout"], after["exit_code"]) == ("next\n", 0)
    assert channels == ["next"]
    assert "run on a channel of its own: the batch was cut at `stuck`" in after["note"]
    assert result.seconds < 4


def test_output_past_the_limits_is_cut_and_the_split_goes_on(
    ssh_nodes: dict[str, SshNode], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ssh, "OUTPUT_LIMIT", 1000)
    monkeypatch.setattr(ssh, "STDERR_LIMIT", 100)
    big = "head -c 300000 /dev/zero | tr '\\0' x; head -c 5000 /dev/zero | tr '\\0' y >&2"
    result = probe(ssh_nodes["gpu1"], [("big", big), ("after", "echo after")])
    first, after = result.outputs
    assert (first["stdout"], first["stderr"], first["exit_code"]) == ("x" * 1000, "y" * 100, 0)
    assert (after["stdout"], after["stderr"]) == ("after\n", "")


def test_the_kernel_log_commands_run_in_order_until_one_succeeds(
    fresh_node: SshNode, channels: list[str]
) -> None:
    seen = fresh_node.directory / "seen"
    seen.mkdir(mode=0o777)
    seen.chmod(0o777)
    tool(
        fresh_node,
        "journalctl",
        f"#!/bin/sh\necho ran >> {seen}/journalctl\nprintf '%s\\n' 'other line' '{XID_LINE}'\n",
    )
    # dmesg cannot read the log (the node's default): journalctl is next, Xid lines only.
    outputs = probe(fresh_node).outputs
    dmesg, journal = outputs[-2:]
    assert (dmesg["name"], dmesg["exit_code"], dmesg["error"]) == ("dmesg", 1, "permission denied")
    assert (journal["exit_code"], journal["error"], journal["stdout"]) == (0, None, XID_LINE + "\n")
    assert agent.KERNEL_LOG_NOTE in journal["note"]
    assert channels == []
    # dmesg reads it: journalctl never runs.
    tool(fresh_node, "dmesg", f"#!/bin/sh\nprintf '%s\\n' 'boot line' '{XID_LINE}'\n")
    outputs = probe(fresh_node).outputs
    assert outputs[-1]["name"] == "dmesg" and outputs[-1]["stdout"] == XID_LINE + "\n"
    assert (seen / "journalctl").read_text() == "ran\n"
    # dmesg exits 0 yet says it was refused: not a success, so journalctl runs after the
    # batch, on a channel of its own.
    tool(fresh_node, "dmesg", "#!/bin/sh\necho 'dmesg: klogctl: Operation not permitted' >&2\n")
    outputs = probe(fresh_node).outputs
    assert [o["name"] for o in outputs[-2:]] == [c[0] for c in ssh.KERNEL_LOG_COMMANDS]
    assert outputs[-2]["error"] == "permission denied" and outputs[-1]["stdout"] == XID_LINE + "\n"
    assert channels == [ssh.KERNEL_LOG_COMMANDS[1][0]]


RESTRICTED = """#!/bin/sh
case "$SSH_ORIGINAL_COMMAND" in
  hostname|dmesg|"nvidia-smi "*|"journalctl "*) exec /bin/sh -c "$SSH_ORIGINAL_COMMAND" ;;
esac
echo "only the GPU commands may run here" >&2
exit 1
"""


@pytest.fixture
def restricted_node(node_root: Path) -> Iterator[SshNode]:
    """A node whose sshd forces every session through an allow-list of commands."""
    directory = node_root / "restricted"
    directory.mkdir(exist_ok=True)
    (directory / "restricted").write_text(RESTRICTED)
    (directory / "restricted").chmod(0o755)
    node = start_node(directory, extra_config=f"ForceCommand {directory / 'restricted'}\n")
    yield node
    node.stop()


def test_a_shell_that_does_not_run_the_script_is_read_a_channel_a_command(
    ssh_nodes: dict[str, SshNode], restricted_node: SshNode, channels: list[str]
) -> None:
    expected = probe(ssh_nodes["gpu1"]).outputs
    result = probe(restricted_node)
    assert compared(result.outputs) == compared(expected)
    assert result.remote_host
    assert channels == ["hostname"] + [o["name"] for o in result.outputs]
    for output in result.outputs:
        assert (
            "run on a channel of its own: the node's shell did not run the batch"
            in (output["note"])
        )
        assert "it said: only the GPU commands may run here" in output["note"]


def test_the_limits_need_no_timeout_command_on_the_node(
    fresh_node: SshNode, channels: list[str]
) -> None:
    # As an old BusyBox's timeout, which knows no -k: the session never calls it.
    tool(fresh_node, "timeout", "#!/bin/sh\necho \"timeout: invalid option -- 'k'\" >&2\nexit 1\n")
    result = probe(fresh_node, [("slow", "sleep 30"), ("next", "echo next")], timeout=1)
    assert [o["error"] for o in result.outputs] == ["timed out after 1 s", None]
    assert result.outputs[1]["stdout"] == "next\n" and channels == []
    assert not [o for o in probe(fresh_node).outputs if "note" in o and "channel" in o["note"]]


def test_a_run_reads_its_key_once(
    ssh_nodes: dict[str, SshNode], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    original = asyncssh.import_private_key

    def counted(data: str, passphrase: str | None = None) -> asyncssh.SSHKey:
        reads.append(data)
        return original(data, passphrase)

    monkeypatch.setattr(asyncssh, "import_private_key", counted)
    nodes = [target(ssh_nodes[name]) for name in ("gpu1", "gpu2", "gpu1")]
    results = list(ssh.probe_nodes(nodes, concurrency=2))
    assert [r.error for r in results] == ["", "", ""]
    assert len(reads) == 1
    list(ssh.probe_nodes(nodes[:1], concurrency=1))
    assert len(reads) == 2  # a run's keys are not kept for the next


SHELLS = ["dash", "bash", "zsh", "mksh", "busybox sh", "sh"]


def run_script(shell: str, script: str, *, timeout: float = 30) -> tuple[bytes, bytes]:
    """Run a batch script as sshd would: in a session of its own, its stdin kept open (the
    client's side of the session) until it ends."""
    read_end, write_end = os.pipe()
    try:
        done = subprocess.run(
            [*shell.split(), "-c", script],
            stdin=read_end,
            capture_output=True,
            env={"PATH": "/usr/bin:/bin", "SHELL": "/bin/sh"},
            timeout=timeout,
            check=False,
            start_new_session=True,
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    return done.stdout, done.stderr


@pytest.mark.parametrize("shell", SHELLS)
def test_the_script_is_plain_posix_sh(shell: str) -> None:
    assert shutil.which(shell.split()[0]), f"{shell} is missing: .ci/run and the README install it"
    steps = [
        ssh.Step("a", "echo out-a; echo err-a >&2; exit 3", plain=False),
        ssh.Step("b", "printf 'no newline'", plain=False),
        ssh.Step("plain", "uname -s"),
        ssh.Step("g1", "false", group="g"),
        ssh.Step("g2", "true", group="g"),
        ssh.Step("g3", "echo never", group="g"),
        ssh.Step("bg", "sleep 60 & echo left-running", plain=False),
    ]
    nonce = "0123456789abcdef0123456789abcdef"
    started = time.monotonic()
    stdout, stderr = run_script(shell, ssh._batch_script(nonce, steps))
    # The command left running in the background is stopped with the session: its end came
    # at once, not after the minute.
    assert time.monotonic() - started < 20
    out, err = ssh.Splitter(nonce, 1000), ssh.Splitter(nonce, 1000)
    out.feed(stdout, 0.0)
    err.feed(stderr, 0.0)
    out.finish()
    err.finish()
    assert out.header == b"1" and not out.stray and not err.stray
    assert out.status == {0: 3, 1: 0, 2: 0, 3: 1, 4: 0, 6: 0}  # the group stopped at g2
    assert [out.text(i) for i in (0, 1, 2, 3, 4, 6)] == [
        "out-a\n",
        "no newline",
        "Linux\n",
        "",
        "",
        "left-running\n",
    ]
    assert [err.text(i) for i in range(5)] == ["err-a\n", "", "", "", ""]
    # Each command named the process it ran in, a process of its own.
    assert len(set(out.pids.values())) == 6 and all(pid > 1 for pid in out.pids.values())


@pytest.mark.parametrize("shell", SHELLS)
def test_the_script_ends_when_its_client_is_gone(
    shell: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client's end of stdin closes (a lost worker, a cut batch): the session's processes
    # stop, the one running (TERM, then KILL for one that ignores TERM) and the ones to come.
    monkeypatch.setattr(ssh, "KILL_GRACE", 1)
    mark = tmp_path / "ran"
    steps = [
        ssh.Step("long", "trap '' TERM; sleep 60; echo", plain=False),
        ssh.Step("after", f"echo after > {mark}", plain=False),
    ]
    nonce = "0123456789abcdef0123456789abcdef"
    started = time.monotonic()
    done = subprocess.run(
        [*shell.split(), "-c", ssh._batch_script(nonce, steps)],
        stdin=subprocess.DEVNULL,
        capture_output=True,  # returns once every process holding the streams is gone
        env={"PATH": "/usr/bin:/bin", "SHELL": "/bin/sh"},
        timeout=30,
        check=False,
        start_new_session=True,
    )
    assert time.monotonic() - started < 10 and not mark.exists()
    assert done.stdout.startswith(f"{nonce}:h:1\n".encode())


@pytest.mark.parametrize("shell", ["dash", "bash"])
def test_a_script_whose_shell_leads_no_process_group_runs_nothing(shell: str) -> None:
    # Its reader could not stop what it started without signalling processes not its own.
    nonce = "0123456789abcdef0123456789abcdef"
    done = subprocess.run(
        [*shell.split(), "-c", ssh._batch_script(nonce, [ssh.Step("a", "echo ran")])],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "SHELL": "/bin/sh"},
        timeout=30,
        check=False,
    )
    assert done.stdout == f"{nonce}:h:0\n".encode() and done.returncode == 0


def test_the_kernel_log_keeps_switch_errors_and_failed_gpu_initialisations(fresh_node) -> None:
    """Beside Xid lines, a node's NVSwitch SXid lines and the driver's RmInitAdapter failures
    leave the node (the health rules judge them); nothing else of the log does."""
    sxid = (
        "[ 812.250000] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 32 "
        "egress non-posted PRIV error"
    )
    init = "[   20.125000] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1463)"
    lines = ["boot line", XID_LINE, sxid, "usb 1-1: new device", init]
    script = "#!/bin/sh\nprintf '%s\\n' " + " ".join(f"'{x}'" for x in lines) + "\n"
    tool(fresh_node, "dmesg", script)
    dmesg = probe(fresh_node).outputs[-1]
    assert dmesg["name"] == "dmesg"
    assert dmesg["stdout"] == f"{XID_LINE}\n{sxid}\n{init}\n"
    facts = parse_outputs([("dmesg", dmesg["stdout"])])
    assert [e["code"] for e in facts["xid_events"]] == [79]
    assert [(e["code"], e["severity"]) for e in facts["sxid_events"]] == [(12028, "Non-fatal")]
    assert [f["pci_bus_id"] for f in facts["init_failures"]] == ["0000:3b:00.0"]
    codes = {p["code"] for p in health.judge_node(facts)["problems"]}
    assert {"sxid_non_fatal", "gpu_init_failed"} <= codes
