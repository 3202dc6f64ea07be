"""Real SSH nodes (OpenSSH on 127.0.0.1, the fake nvidia-smi replaying the H200 captures) and
a project with the GPU node evidence actions, for the cluster probe tests."""

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.probes.helpers import apply_gpu_templates
from tests.sshd import SshNode, keygen, start_node


@pytest.fixture(scope="session")
def node_root() -> Iterator[Path]:
    # Under /tmp, not pytest's tmp_path: the node's user must be able to reach its folder.
    root = Path(tempfile.mkdtemp(prefix="wb-ssh-nodes-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def ssh_nodes(node_root: Path) -> Iterator[dict[str, SshNode]]:
    """Two healthy H200 nodes, one whose nvidia-smi hangs, one whose driver is gone; all
    accept one client key, as a cluster's nodes do."""
    key = node_root / "cluster_ed25519"
    keygen(key)
    nodes = {
        "gpu1": start_node(node_root / "gpu1", key),
        "gpu2": start_node(node_root / "gpu2", key),
        "hang": start_node(node_root / "hang", key, FAKE_NVIDIA_SMI_HANG="1"),
        "gone": start_node(node_root / "gone", key, FAKE_NVIDIA_SMI_FAIL="1"),
    }
    yield nodes
    for node in nodes.values():
        node.stop()


@pytest.fixture
def fresh_node(node_root: Path, request: pytest.FixtureRequest) -> Iterator[SshNode]:
    """A node of this test's own (its host key may be changed)."""
    node = start_node(node_root / f"own-{request.node.name[:40]}")
    yield node
    node.stop()


@pytest.fixture
def gpu_suite(personas: dict[str, Any]) -> dict[str, Any]:
    return {**personas, "actions": apply_gpu_templates(personas["alpha"])}
