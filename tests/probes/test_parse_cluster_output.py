"""`manage.py parse_cluster_output FILE...` prints a cluster's facts and its GPU nodes' facts and
health as JSON, or one line of reason and a non-zero exit status, as parse_gpu_output does."""

import io
import json
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from poc.probes.management.commands.parse_cluster_output import Command
from tests.fakes.k8s_api import FIXTURES
from tests.probes.test_slurm import DOCUMENTED_NODES

T4 = FIXTURES / "node-2x-tesla-t4.yaml"
KAI = FIXTURES / "schedulers" / "kai-limited-queue-gpu-quota1-limit1.yaml"


def test_prints_the_clusters_facts_and_each_nodes_health(capsys) -> None:
    call_command("parse_cluster_output", str(T4), str(KAI), "--expected-gpus", "4")
    document = json.loads(capsys.readouterr().out)
    assert document["cluster"]["format"] == "workbench-k8s-facts/1"
    assert [q["name"] for q in document["cluster"]["kai"]["queues"]] == ["default", "test"]
    assert "raw" not in document["cluster"] and "gpu_nodes" not in document["cluster"]
    (node,) = document["nodes"]
    assert node["facts"]["host"] == "qa-mig-worker-gpu-1" and len(node["facts"]["gpus"]) == 2
    assert node["facts"]["expected_gpu_count"] == 4
    assert node["health"]["verdict"] == "failed"  # two GPUs where four are expected


def test_standard_input_and_facts_only(capsys, monkeypatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(DOCUMENTED_NODES.encode("utf-16")))
    monkeypatch.setattr(sys, "stdin", stdin)
    call_command("parse_cluster_output", "-", "--facts-only")
    document = json.loads(capsys.readouterr().out)
    assert [n["facts"]["host"] for n in document["nodes"]] == ["gpu01", "gpu02"]
    assert all("health" not in n for n in document["nodes"])
    assert document["cluster"]["format"] == "workbench-slurm-facts/1"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x01\xff binary", "binary data, not cluster documents"),
        (b"just some prose", "not recognised (it begins 'just some prose')"),
        (b"", "empty"),
        (b"apiVersion: v1\nkind: Secret\n", "a Kubernetes Secret (v1) is not read"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(tmp_path: Path, content, reason) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    with pytest.raises(CommandError) as caught:
        call_command("parse_cluster_output", str(path))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)) and reason in message


def test_a_missing_file_and_a_file_over_the_limit_are_named(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(CommandError, match="nope.yaml"):
        call_command("parse_cluster_output", str(tmp_path / "nope.yaml"))
    monkeypatch.setattr("poc.probes.parsers.MAX_INPUT_BYTES", 1024)
    big = tmp_path / "big.yaml"
    big.write_text("kind: List\nitems: []\n" + "#" * 4096)
    with pytest.raises(CommandError, match=r"big.yaml: too large \(0.0 MB, limit 0 MB\)"):
        call_command("parse_cluster_output", str(big))


def test_the_exit_status_is_not_zero_on_unknown_input(tmp_path: Path, capsys) -> None:
    path = tmp_path / "podgroup.txt"
    path.write_text((FIXTURES / "schedulers" / "podgroup-unschedulable-describe.txt").read_text())
    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "parse_cluster_output", "--skip-checks", str(path)])
    assert exited.value.code == 1
    stderr = capsys.readouterr().err.strip()
    assert len(stderr.splitlines()) == 1 and "Traceback" not in stderr
    assert "describe output of a PodGroup" in stderr
