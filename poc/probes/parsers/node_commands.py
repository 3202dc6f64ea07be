"""The commands run on a GPU node, in order, with the format each prints: the one list the push
agent, the SSH probe, the upload form's help and docs/probes.md ("Node commands") follow.

The agent (poc/probes/node/agent.py) is one standard-library file copied to the nodes and
cannot import this module: it keeps the same list as `agent.COMMANDS`, and
tests/probes/test_node_commands.py holds the two equal entry by entry (and docs/probes.md to
this list). The --query-gpu fields are the agent's `QUERY_FIELDS`, adapted to each driver by
`agent.QueryFields` in both probes.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _

from poc.probes.node import agent

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise as Promise

EVERY_TIME = "always"
KERNEL_LOG = "kernel log"  # in order until one succeeds
WITH_DCGM = "dcgm"  # only when asked for (the agent's --dcgm LEVEL)


@dataclass(frozen=True)
class NodeCommand:
    """One command: its line (FIELDS stands for the --query-gpu field list, LEVEL for the DCGM
    diagnostic's level, 1 to 4), the format of what it prints (a key of formats.KINDS) and when
    it runs (EVERY_TIME, KERNEL_LOG or WITH_DCGM)."""

    line: str
    format: str
    when: str = EVERY_TIME

    @property
    def shown(self) -> str:
        """The line as a person would run it: FIELDS written out, LEVEL left to choose."""
        return self.line.replace("FIELDS", ",".join(agent.QUERY_FIELDS))

    @property
    def note(self) -> "str | Promise":
        """When it runs, for the upload help ("" for the commands that always run)."""
        if self.when == WITH_DCGM:
            return _("only when asked for, where DCGM is installed; LEVEL is 1 to 4")
        group = [c for c in NODE_COMMANDS if c.when == self.when]
        if self.when == KERNEL_LOG and group.index(self) > 0:
            return _("only where the command above fails")
        return ""


NODE_COMMANDS = (
    NodeCommand("nvidia-smi -q -x", "smi-xml"),
    NodeCommand("nvidia-smi --query-gpu=FIELDS --format=csv", "query-csv"),
    NodeCommand("nvidia-smi -L", "smi-list"),
    NodeCommand("nvidia-smi nvlink -s", "nvlink-status"),
    NodeCommand("nvidia-smi nvlink -e", "nvlink-errors"),
    NodeCommand("dmesg", "kernel-log", KERNEL_LOG),
    NodeCommand("journalctl -k -b --no-pager -o short-iso", "kernel-log", KERNEL_LOG),
    NodeCommand("dcgmi diag -r LEVEL -j", "dcgm-json", WITH_DCGM),
)
