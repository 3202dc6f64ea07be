"""The SSH probe and the push agent ask an older driver for the same --query-gpu fields: both go
through the agent's QueryFields (OpenSSH on 127.0.0.1, the fake nvidia-smi refusing fields as
drivers before 535 do)."""

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from poc.probes.connectors import ssh
from poc.probes.node import agent
from tests.probes.clusters.test_ssh_batch import target as ssh_target
from tests.sshd import SshNode, start_node

REFUSED = "clocks_event_reasons.,fabric.,pcie.link.gen.gpumax"
FAKE_SMI = Path(__file__).resolve().parents[3] / "tests" / "fakes" / "nvidia-smi"


@pytest.fixture
def old_driver_node(node_root: Path) -> Iterator[SshNode]:
    node = start_node(node_root / "old-driver", FAKE_NVIDIA_SMI_INVALID_FIELDS=REFUSED)
    yield node
    node.stop()


def test_an_older_driver_is_asked_the_same_fields_over_ssh_as_by_the_agent(
    old_driver_node: SshNode, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = ssh_target(old_driver_node)
    (result,) = ssh.probe_nodes([target], concurrency=1)
    assert not result.error, result.error
    [over_ssh] = [o for o in result.outputs if "--query-gpu" in o["name"]]

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").symlink_to(FAKE_SMI)
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_NVIDIA_SMI_DIR", str(old_driver_node.directory / "captures"))
    monkeypatch.setenv("FAKE_NVIDIA_SMI_INVALID_FIELDS", REFUSED)
    by_agent = agent.query_gpu(["nvidia-smi"], 30)

    assert over_ssh["exit_code"] == by_agent["exit_code"] == 0
    assert over_ssh["name"] == by_agent["name"] == over_ssh["command"]
    assert "clocks_throttle_reasons.hw_slowdown" in over_ssh["name"]
    assert over_ssh["stdout"] == by_agent["stdout"]
    # The SSH probe names the fields left out, as the agent does (the agent also says which
    # names the clock event reasons took).
    dropped = "fields this driver does not know were left out: pcie.link.gen.gpumax, "
    assert over_ssh["note"] == dropped + "fabric.state, fabric.status"
    assert by_agent["note"].endswith(over_ssh["note"])
