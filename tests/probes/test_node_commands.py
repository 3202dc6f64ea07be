"""One list of the commands run on a GPU node: the workbench's (parsers.node_commands), the push
agent's own copy (agent.COMMANDS: the agent is one standard-library file and cannot import the
workbench's), the SSH probe's steps and the "Node commands" table of docs/probes.md agree entry
by entry; each command's output is read as the format the list names; the agent runs what its
list says; both probes adapt the --query-gpu fields through the one QueryFields."""

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from poc.probes.connectors import ssh
from poc.probes.node import agent
from poc.probes.parsers.formats import KINDS, command_kind
from poc.probes.parsers.node_commands import (
    EVERY_TIME,
    KERNEL_LOG,
    NODE_COMMANDS,
    WITH_DCGM,
)

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "probes.md"
FAKE_SMI = REPO / "tests" / "fakes" / "nvidia-smi"
H200 = REPO.parent / "shared" / "fixtures" / "gpu" / "h200"


def test_the_agent_keeps_the_workbench_list_entry_by_entry() -> None:
    listed = [(c.line, c.format, c.when) for c in NODE_COMMANDS]
    assert len(agent.COMMANDS) == len(listed)
    for position, (mine, theirs) in enumerate(zip(agent.COMMANDS, listed, strict=True)):
        assert mine == theirs, f"command {position + 1}: the agent runs {mine}, the list {theirs}"


def test_each_command_prints_the_format_it_names_and_the_parsers_read_it_so() -> None:
    for command in NODE_COMMANDS:
        assert command.format in KINDS
        assert command.when in (EVERY_TIME, KERNEL_LOG, WITH_DCGM)
        # A bundle's output is named by its command line: the parsers take its kind from it.
        assert command_kind(command.shown.replace("LEVEL", "1")) == (command.format, None)
    query = next(c for c in NODE_COMMANDS if c.format == "query-csv")
    assert query.shown == "nvidia-smi --query-gpu=" + ",".join(agent.QUERY_FIELDS) + " --format=csv"
    kernel_log = tuple(c.line.split() for c in NODE_COMMANDS if c.when == KERNEL_LOG)
    assert kernel_log == agent.KERNEL_LOG_COMMANDS


def test_the_ssh_probe_runs_the_list_but_the_dcgm_diagnostic() -> None:
    steps = ssh._gpu_steps()
    wanted = [c for c in NODE_COMMANDS if c.when != WITH_DCGM]
    assert [(s.name, s.command) for s in steps] == [(c.shown, c.shown) for c in wanted]
    assert [s.group for s in steps] == [
        "kernel log" if c.when == KERNEL_LOG else "" for c in wanted
    ]
    kernel_log = tuple((c.line, c.line) for c in NODE_COMMANDS if c.when == KERNEL_LOG)
    assert kernel_log == ssh.KERNEL_LOG_COMMANDS


def docs_table(heading: str) -> list[list[str]]:
    """The rows of the first table under `heading` in docs/probes.md, cells without backticks."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    rows: list[list[str]] = []
    for line in text[start:].split("\n")[2:]:
        if line.startswith("|"):
            rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
        elif rows:
            break
    assert rows and set(rows[1][0]) <= set("- "), f"no table under {heading}"
    return rows[2:]


def test_the_docs_list_the_node_commands_as_the_list_does() -> None:
    rows = [tuple(row) for row in docs_table("## Node commands")]
    listed = [(c.line, c.format, c.when) for c in NODE_COMMANDS]
    missing = [c for c in listed if c not in rows]
    extra = [row for row in rows if row not in listed]
    assert (missing, extra) == ([], [])
    assert rows == listed  # in the order they run


def test_query_fields_rename_the_reasons_once_then_leave_out_what_the_driver_refuses() -> None:
    def refused(field: str) -> dict[str, Any]:
        said = f'Field "{field}" is not a valid field to query.\n'
        return {"exit_code": 2, "stdout": said, "stderr": ""}

    query = agent.QueryFields(["index", "fabric.state", "clocks_event_reasons.active"])
    assert query.tries == 5
    line = " ".join(["nvidia-smi", *query.args()])
    assert (
        line == "nvidia-smi --query-gpu=index,fabric.state,clocks_event_reasons.active --format=csv"
    )
    assert query.adapt(refused("clocks_event_reasons.active"))
    assert query.fields == ["index", "fabric.state", "clocks_throttle_reasons.active"]
    assert query.adapt(refused("clocks_throttle_reasons.active"))  # renamed once: now left out
    assert query.adapt(refused("fabric.state"))
    assert query.fields == ["index"] and query.renamed
    assert query.dropped_note() == (
        "fields this driver does not know were left out: "
        "clocks_throttle_reasons.active, fabric.state"
    )
    assert not query.adapt({"exit_code": 0, "stdout": "index\n0\n", "stderr": ""})
    assert not query.adapt(refused("not.asked.for"))  # a field not asked for: nothing to adapt
    assert not agent.QueryFields(["index"]).adapt(refused("index"))  # none left to ask for


def test_the_agent_runs_its_list_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --dcgm and a dmesg that cannot read the kernel log, every command of the list runs,
    in order, named by its line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").symlink_to(FAKE_SMI)
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    tools = {
        "dmesg": "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2; exit 1",
        "journalctl": "echo '-- No entries --'",
        "dcgmi": 'echo "{\\"args\\": \\"$*\\"}"',
    }
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_NVIDIA_SMI_DIR", str(H200))
    args: argparse.Namespace = agent.build_parser().parse_args(["--output", "-", "--dcgm", "2"])
    outputs = agent.collect_outputs(args)
    assert [o["name"] for o in outputs] == [c.shown.replace("LEVEL", "2") for c in NODE_COMMANDS]
    assert [o["exit_code"] for o in outputs] == [0, 0, 0, 3, 3, 1, 0, 0]
    assert re.search(r"H200", outputs[0]["stdout"])


def test_the_upload_help_says_when_a_command_runs_only_where_it_does_not_always() -> None:
    notes = {c.line: str(c.note) for c in NODE_COMMANDS}
    assert [line for line, note in notes.items() if note] == [
        "journalctl -k -b --no-pager -o short-iso",
        "dcgmi diag -r LEVEL -j",
    ]
