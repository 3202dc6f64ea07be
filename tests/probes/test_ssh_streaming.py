"""probe_nodes streams: a node's result is handed on and then let go, so a run over many nodes
never holds every node's raw outputs (the SSH side is faked here: this is about memory)."""

import gc
import weakref
from typing import Any

import pytest

from poc.probes.connectors import ssh


def test_results_already_handed_on_are_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    async def fake_probe(node: ssh.SshNode, commands: Any = None) -> ssh.NodeResult:
        return ssh.NodeResult(node=node, outputs=[{"name": "x", "stdout": "y" * 100_000}])

    monkeypatch.setattr(ssh, "probe_node", fake_probe)
    nodes = [
        ssh.SshNode(host=f"n{i}", port=22, address="127.0.0.1", username="u") for i in range(40)
    ]
    seen: list[weakref.ref[ssh.NodeResult]] = []
    alive_midway = None
    for position, result in enumerate(ssh.probe_nodes(nodes, concurrency=4), 1):
        seen.append(weakref.ref(result))
        del result
        if position == 30:
            gc.collect()
            # All but the few the queue and the in-flight slots may hold are gone.
            alive_midway = sum(1 for ref in seen[:20] if ref() is not None)
    assert len(seen) == 40
    assert alive_midway == 0
