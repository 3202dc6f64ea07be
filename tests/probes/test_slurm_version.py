"""Slurm's version read from every place it appears: `scontrol show config` (the controller),
`scontrol version` / `--version` (the login node), `Version=` of `scontrol show node` and the
nodes of slurmrestd (each slurmd), and the meta block of slurmrestd's answers, whose shape
differs by API version. The controller's is preferred; nodes that differ keep a warning.

slurmrestd answers start from the recorded `sinfo --json` / `squeue --json` of Slurm 21.08.5
(shared/fixtures/slurm/, the v0.0.37 shape slurmrestd serves) with their meta block changed the
way other API versions write it; command outputs are small texts in the format Slurm prints."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from poc.probes.connectors import slurm as s
from poc.probes.connectors.slurm.versions import meta_version
from tests.probes.test_slurm import Guard, plain_target, serve

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "slurm"
NODES = json.loads((FIXTURES / "sinfo-json-v0.0.37-slurm-21.08.5-nodes.json").read_text())
JOBS = json.loads((FIXTURES / "squeue-json-v0.0.37-jobs.json").read_text())
V37 = "v0.0.37"


def node_line(name: str, version: str | None, gpus: int = 4) -> str:
    """One `scontrol show node -o` line (Slurm 23.x field order)."""
    line = (
        f"NodeName={name} Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUTot=64 CPULoad=0.10 "
        f"AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:h100:{gpus} "
        f"NodeAddr={name} NodeHostName={name} "
    )
    if version is not None:
        line += f"Version={version} "
    return line + (
        "OS=Linux 5.15.0-91-generic #101-Ubuntu SMP RealMemory=515000 State=IDLE "
        "Partitions=gpu CfgTRES=cpu=64,mem=515000M,billing=64,gres/gpu=4\n"
    )


def show_config(version: str) -> str:
    """The lines around SLURM_VERSION in `scontrol show config`."""
    return (
        "Configuration data as of 2024-03-01T10:00:00\n"
        "AccountingStorageBackupHost = (null)\n"
        "ClusterName             = hpc\n"
        f"SLURM_VERSION           = {version}\n"
        "SlurmctldHost[0]        = ctl01\n"
    )


# --- the commands on a login node -----------------------------------------------------------


def test_node_versions_give_the_version_when_no_version_command_ran() -> None:
    facts = s.facts_from_cli(
        {s.SCONTROL_NODES_COMMAND: node_line("gpu01", "23.02.7") + node_line("gpu02", "23.02.7")}
    )
    assert facts["slurm_version"] == "23.02.7"
    assert [n["version"] for n in facts["nodes"]] == ["23.02.7", "23.02.7"]
    assert facts["slurm_versions"]["taken_from"] == "nodes"
    assert facts["warnings"] == []
    json.dumps(facts)


def test_the_controllers_version_wins_and_a_differing_node_is_warned_about() -> None:
    nodes = node_line("gpu01", "23.11.4") + node_line("gpu02", "23.02.7") + node_line("c1", None)
    facts = s.facts_from_cli(
        {
            s.VERSION_COMMAND: "slurm 23.11.1\n",  # the login node's own build
            s.SCONTROL_CONFIG_COMMAND: show_config("23.11.4"),
            s.SCONTROL_NODES_COMMAND: nodes,
        }
    )
    assert facts["slurm_version"] == "23.11.4"
    said = facts["slurm_versions"]
    assert (said["controller"], said["client"], said["taken_from"]) == (
        "23.11.4",
        "23.11.1",
        "controller",
    )
    assert said["nodes"] == {"23.11.4": ["gpu01"], "23.02.7": ["gpu02"]}
    assert facts["warnings"] == [
        "slurmd on 1 node reports Slurm 23.02.7, not 23.11.4 as slurmctld (scontrol show "
        "config) does: gpu02"
    ]
    documents = {d["host"]: d for d in facts["gpu_nodes"]}
    assert documents["gpu02"]["warnings"][-1] == (
        "slurmd here reports Slurm 23.02.7, not 23.11.4 as slurmctld (scontrol show config) does"
    )
    assert not any("reports Slurm" in w for w in documents["gpu01"]["warnings"])


def test_without_a_controller_the_newest_slurmd_is_taken_and_the_older_ones_named() -> None:
    """slurmctld is at least as new as every slurmd it accepts: the newest node is closest."""
    lines = "".join(node_line(f"n{i}", "23.02.7") for i in range(1, 8))
    facts = s.facts_from_cli({s.SCONTROL_NODES_COMMAND: lines + node_line("n8", "23.11.4")})
    assert facts["slurm_version"] == "23.11.4"
    assert facts["warnings"] == [
        "slurmd on 7 nodes reports Slurm 23.02.7, not 23.11.4 as the newest nodes' slurmd "
        "does: n1, n2, n3, n4, n5 and 2 more"
    ]


@pytest.mark.parametrize(
    ("command", "text", "expected"),
    [
        ("scontrol version", "slurm 23.11.4\n", "23.11.4"),
        ("scontrol --version", "slurm 23.11.4\n", "23.11.4"),
        ("scontrol version", "slurm-wlm 22.05.8\n", "22.05.8"),  # Debian's build
        ("scontrol version", "slurm 24.05.0-0rc1\n", "24.05.0-0rc1"),
    ],
)
def test_the_version_commands_output(command: str, text: str, expected: str) -> None:
    facts = s.facts_from_cli({command: text})
    assert facts["slurm_version"] == expected
    assert "slurm_version" in {c["what"] for c in facts["could_not_check"]}  # no show config


def test_a_version_command_that_printed_an_error_gives_no_version() -> None:
    text = "scontrol: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
    facts = s.facts_from_cli({s.VERSION_COMMAND: text, s.SCONTROL_CONFIG_COMMAND: ""})
    assert facts["slurm_version"] is None


# --- slurmrestd's meta block ----------------------------------------------------------------


def recorded_meta_as(shape: str) -> dict[str, Any]:
    """The recorded v0.0.37 meta block (Slurm 21.08.5), written as another shape says."""
    meta = copy.deepcopy(NODES["meta"])
    if shape == "v0.0.37":
        return meta
    numbers = meta["Slurm"]["version"]
    if shape == "numbers only":  # release left out: only {major, micro, minor}
        del meta["Slurm"]["release"]
    elif shape == "release null":
        meta["Slurm"]["release"] = None
    elif shape == "v0.0.40":  # meta.slurm, the numbers as strings, minor zero-padded
        meta["slurm"] = {
            "version": {
                "major": str(numbers["major"]),
                "micro": str(numbers["micro"]),
                "minor": f"{numbers['minor']:02d}",
            },
            "release": "21.08.5",
            "cluster": "hpc",
        }
        del meta["Slurm"]
        meta["plugin"] = {
            "type": "openapi/slurmctld",
            "name": "Slurm OpenAPI slurmctld",
            "data_parser": "data_parser/v0.0.40",
            "accounting_storage": "",
        }
    elif shape == "v0.0.40 numbers only":
        meta = recorded_meta_as("v0.0.40")
        del meta["slurm"]["release"]
    return meta


@pytest.mark.parametrize(
    "shape", ["v0.0.37", "numbers only", "release null", "v0.0.40", "v0.0.40 numbers only"]
)
def test_meta_blocks_of_every_api_version(shape: str) -> None:
    assert meta_version({"meta": recorded_meta_as(shape)}) == "21.08.5"


def rest_facts(routes: dict[str, tuple[int, str, str]]) -> dict[str, Any]:
    with serve({"/openapi/v3": (404, "text/plain", "no"), **routes}) as (port, _seen):
        return s.probe_slurm_rest(plain_target(port), resolve=Guard())


def answer(data: dict[str, Any], status: int = 200) -> tuple[int, str, str]:
    return status, "application/json", json.dumps(data)


@pytest.mark.parametrize("shape", ["numbers only", "release null", "v0.0.40 numbers only"])
def test_slurmrestd_answers_without_a_release_still_give_the_version(shape: str) -> None:
    meta = recorded_meta_as(shape)
    nodes = copy.deepcopy(NODES) | {"meta": meta}
    for node in nodes["nodes"]:
        del node["slurmd_version"]  # only the meta block says it
    facts = rest_facts(
        {
            f"/slurm/{V37}/ping": answer({"meta": meta, "errors": [], "pings": []}),
            f"/slurm/{V37}/nodes": answer(nodes),
        }
    )
    assert facts["slurm_version"] == "21.08.5"
    assert facts["slurm_versions"]["slurmrestd"] == "21.08.5"


def test_slurmd_versions_of_the_nodes_give_the_version_when_no_meta_says_it() -> None:
    """A proxy in front of slurmrestd that strips the meta block; the nodes still say."""
    nodes = {key: value for key, value in NODES.items() if key != "meta"}
    facts = rest_facts(
        {
            f"/slurm/{V37}/ping": answer({"errors": [], "pings": []}),
            f"/slurm/{V37}/nodes": answer(nodes),
        }
    )
    assert facts["slurm_version"] == "21.08.5"
    assert {n["version"] for n in facts["nodes"]} == {"21.08.5"}
    assert facts["slurm_versions"]["taken_from"] == "nodes"


def test_a_refused_answer_still_names_slurmrestds_version() -> None:
    """Every answer but the jobs' is refused; the refusals carry the meta block."""
    meta = recorded_meta_as("numbers only")
    refusal = {"meta": meta, "errors": [{"error": "Access denied", "error_number": 1}]}
    jobs = {key: value for key, value in JOBS.items() if key != "meta"}
    facts = rest_facts(
        {
            f"/slurm/{V37}/ping": answer(refusal, 403),
            f"/slurm/{V37}/nodes": answer(refusal, 403),
            f"/slurm/{V37}/jobs": answer(jobs),
        }
    )
    assert facts["slurm_version"] == "21.08.5"
    assert facts["jobs_pending_reasons"] == {"Dependency": 1}


def test_nodes_behind_slurmrestd_are_warned_about() -> None:
    """The recorded cluster with one node's slurmd still on the release before."""
    nodes = copy.deepcopy(NODES)
    nodes["nodes"][1]["slurmd_version"] = "20.11.9"
    facts = rest_facts(
        {
            f"/slurm/{V37}/ping": answer({"meta": NODES["meta"], "errors": [], "pings": []}),
            f"/slurm/{V37}/nodes": answer(nodes),
        }
    )
    assert facts["slurm_version"] == "21.08.5"
    assert facts["slurm_versions"]["taken_from"] == "slurmrestd"
    assert facts["warnings"] == [
        "slurmd on 1 node reports Slurm 20.11.9, not 21.08.5 as slurmrestd does: "
        "cs3.example.company.com"
    ]


def test_the_connection_test_reads_a_ping_without_a_release() -> None:
    meta = recorded_meta_as("v0.0.40 numbers only")
    with serve(
        {
            "/openapi/v3": (404, "text/plain", "no"),
            f"/slurm/{V37}/ping": answer({"meta": meta, "errors": [], "pings": []}),
        }
    ) as (port, _seen):
        checked = s.check_slurm_rest(plain_target(port), resolve=Guard())
    assert checked["slurm_version"] == "21.08.5" and checked["accepted"] is True
