"""The Slurm connector against output shapes that real clusters print and the other Slurm tests
do not cover: node states spelled as one word that stands for a flag, GPU TRES tracked by type
only, GPU use that the TRES strings cannot tell, slurmrestd v0.0.40+ partitions, and submit
refusals that are not about the GPU count. Every input is written by hand in the documented
format; the comment beside it names the Slurm version or document whose shape it reproduces."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

import pytest

from poc.probes.connectors import slurm as s
from tests.probes.test_connectors_public import _loopback
from tests.probes.test_connectors_public import _serve as serve_json

# --- node states ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "base", "flags"),
    [
        # Words node_state_string() prints (scontrol up to 21.08, sinfo %T, slurmrestd v0.0.36)
        # and node_state_string_compact() (sinfo %t) where a flag hides the base state.
        ("RESERVED", "idle", ["RESERVED"]),
        ("resv", "idle", ["RESERVED"]),
        ("MAINT", "idle", ["MAINTENANCE"]),
        ("maint*", "idle", ["NOT_RESPONDING", "MAINTENANCE"]),
        ("PLANNED", "idle", ["PLANNED"]),
        ("plnd", "idle", ["PLANNED"]),
        ("npc", "idle", ["PERFCTRS"]),
        ("FAILING", "allocated", ["FAIL"]),
        ("failg*", "allocated", ["NOT_RESPONDING", "FAIL"]),
        # Words whose base state Slurm does not print: none is made up.
        ("INVAL", None, ["INVALID_REG"]),
        ("inval", None, ["INVALID_REG"]),
        ("FAIL", None, ["FAIL"]),
        ("REBOOT", None, ["REBOOT_REQUESTED"]),
        ("REBOOT^", None, ["REBOOT_ISSUED"]),
        ("boot*", None, ["NOT_RESPONDING", "REBOOT_REQUESTED"]),
        ("COMPLETING", None, ["COMPLETING"]),
        # A flag alone is printed only when the base state is UNKNOWN (node_state_string).
        ("POWERED_DOWN", "unknown", ["POWERED_DOWN"]),
        ("powered_dn", "unknown", ["POWERED_DOWN"]),
        ("CLOUD", "unknown", ["CLOUD"]),
        # "+" after the word: completing (sinfo %T "ALLOCATED+", %t "alloc+").
        ("ALLOCATED+", "allocated", ["COMPLETING"]),
        ("alloc+", "allocated", ["COMPLETING"]),
        # scontrol of Slurm 20.11 and older: "+POWER" was the flag later named POWERED_DOWN.
        ("IDLE+CLOUD+POWER", "idle", ["CLOUD", "POWERED_DOWN"]),
    ],
)
def test_state_words_that_stand_for_a_flag(raw: str, base: str | None, flags: list[str]) -> None:
    (node,) = s.parse_scontrol_nodes(f"NodeName=gpu01 Gres=gpu:a100:4 State={raw} Partitions=gpu\n")
    assert (node["state"], node["state_flags"]) == (base, flags)
    (listed,) = s.parse_sinfo_nodes(
        f"gpu01|gpu*|{raw.lower()}|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|64|500000|none|"
    )
    assert (listed["state"], listed["state_flags"]) == (base, flags)


# --- GPUs in TRES strings -------------------------------------------------------------------


def test_gpu_tres_tracked_by_type_only() -> None:
    """AccountingStorageTRES=gres/gpu:tesla (the example of SchedMD's TRES documentation) tracks
    typed GPUs without a plain gres/gpu: TRES then reads "gres/gpu:tesla=4"."""
    (partition,) = s.parse_scontrol_partitions(
        # `scontrol show partition -o` layout of Slurm 22.05 to 24.x.
        "PartitionName=gpu AllowGroups=ALL Default=YES Nodes=g[01-02] State=UP TotalCPUs=128 "
        "TotalNodes=2 TRES=cpu=128,mem=1000G,node=2,billing=128,gres/gpu:a100=4,"
        "gres/gpu:tesla=4\n"
    )
    assert partition["gpus_total"] == 8
    # The same tracking on a node: AllocTRES counts the GPUs in use (no GresUsed without -d).
    (node,) = s.parse_scontrol_nodes(
        "NodeName=g01 Gres=gpu:tesla:4 State=MIXED Partitions=gpu "
        "CfgTRES=cpu=64,mem=500G,billing=64,gres/gpu:tesla=4 "
        "AllocTRES=cpu=8,mem=64G,gres/gpu:tesla=3\n"
    )
    assert (node["gpus_total"], node["gpus_used"]) == (4, 3)
    # A plain gres/gpu, when tracked too, is the total: typed entries are not added to it.
    (both,) = s.parse_scontrol_partitions(
        "PartitionName=gpu Nodes=g01 State=UP TRES=cpu=64,gres/gpu=4,gres/gpu:tesla=4\n"
    )
    assert both["gpus_total"] == 4


def test_gpus_in_use_are_unknown_when_tres_does_not_track_gpus() -> None:
    """`scontrol show node` without -d prints no GresUsed; where AccountingStorageTRES leaves
    GPUs out (its default), CfgTRES and AllocTRES never name them, so an empty AllocTRES says
    nothing about GPUs in use (Slurm 23.02 multi-line layout)."""
    text = """\
NodeName=g01 Arch=x86_64 CoresPerSocket=32
   CPUAlloc=16 CPUEfctv=64 CPUTot=64 CPULoad=7.95
   Gres=gpu:h100:8(S:0-1)
   RealMemory=1000000 AllocMem=256000 FreeMem=700000 Sockets=2 Boards=1
   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=gpu
   CfgTRES=cpu=64,mem=1000000M,billing=64
   AllocTRES=cpu=16,mem=256000M
"""
    (node,) = s.parse_scontrol_nodes(text)
    assert (node["gpus_total"], node["gpus_used"]) == (8, None)
    # sinfo's GresUsed then says how many are in use.
    sinfo = "g01|gpu*|mixed|gpu:h100:8(S:0-1)|gpu:h100:2(IDX:0-1)|64|1000000|none|\n"
    facts = s.facts_from_cli({s.SCONTROL_NODES_COMMAND: text, s.SINFO_COMMAND: sinfo})
    (merged,) = facts["nodes"]
    assert (merged["gpus_used"], merged["gres_used"][0]["indexes"]) == (2, "0-1")


# --- slurmrestd v0.0.40 and later: partitions -----------------------------------------------


def test_v0_0_41_partitions_say_nothing_about_the_default() -> None:
    """slurmrestd's data_parser (v0.0.39 and later) leaves a partition's flags out, so its
    answer cannot tell the default partition; numbers are {"set", "infinite", "number"} and
    TRES sits under "configured" (partition shape of the v0.0.41 OpenAPI schema)."""
    version = "v0.0.41"
    meta = {"slurm": {"release": "24.05.4", "version": {"major": "24", "minor": "05"}}}
    partition = {
        "name": "gpu",
        "nodes": {"allowed_allocation": "", "configured": "g[01-02]", "total": 2},
        "cpus": {"task_binding": 0, "total": 128},
        "tres": {"billing_weights": "", "configured": "cpu=128,mem=1000G,node=2,gres/gpu=16"},
        "maximums": {"nodes": {"set": False, "infinite": True, "number": 0}},
        "partition": {"state": ["UP"]},
    }
    node = {
        "name": "g01",
        "state": ["MIXED", "PLANNED"],
        "gres": "gpu:nvidia_h100_80gb_hbm3:8(S:0-1)",
        "gres_used": "gpu:nvidia_h100_80gb_hbm3:2(IDX:0-1)",
        "partitions": ["gpu"],
        "cpus": 64,
        "real_memory": 1000000,
        "reason": "",
    }
    routes = {
        f"/slurm/{version}/ping": {"meta": meta, "errors": [], "pings": []},
        f"/slurm/{version}/nodes": {"meta": meta, "errors": [], "nodes": [node]},
        f"/slurm/{version}/partitions": {"meta": meta, "errors": [], "partitions": [partition]},
    }
    with serve_json(routes) as (port, _seen):
        target = s.SlurmRestTarget(url=f"http://slurm.invalid:{port}", user="u", token="tok-1")
        facts = s.probe_slurm_rest(target, resolve=_loopback)
    (read,) = facts["partitions"]
    assert (read["name"], read["state"], read["nodes"]) == ("gpu", "UP", "g[01-02]")
    assert (read["total_cpus"], read["total_nodes"], read["gpus_total"]) == (128, 2, 16)
    assert read["default"] is None
    (got,) = facts["nodes"]
    assert (got["state"], got["state_flags"], got["gpus_total"], got["gpus_used"]) == (
        "mixed",
        ["PLANNED"],
        8,
        2,
    )


# --- submit refusals that are not about GPUs ------------------------------------------------

# Slurm's error texts (slurm_errno.c, unchanged from 20.11 to 25.x) for a request refused for
# its account, partition, QOS or time limit: the GPU count was never weighed.
NOT_ABOUT_GPUS = [
    "Invalid account or account/partition combination specified",
    "Invalid partition name specified",
    "Invalid qos specification",
    "Requested time limit is invalid (missing or exceeds some limit)",
    "Access/permission denied",
    "User's group not permitted to use this partition",
    "Required partition not available (inactive or drain)",
    "No partition specified or system default partition",
]


@pytest.mark.parametrize(
    "verdict",
    [
        "sbatch: error: Batch job submission failed: {}",
        "srun: error: Unable to allocate resources: {}",
        "salloc: error: Job submit/allocate failed: {}",
    ],
)
def test_a_refusal_for_another_reason_is_not_a_clean_refusal(verdict: str) -> None:
    for text in NOT_ABOUT_GPUS:
        result = s.parse_over_quota_output(1, "", verdict.format(text) + "\n")
        assert (result["state"], result["clean"]) == ("error", False), text
        assert text in result["reason"] and "not for the GPU count" in result["reason"]


def test_the_gpu_refusal_stays_clean_beside_a_qos_limit() -> None:
    """The QOS verdict names "time limits" too; it may be the GPU limit, and stays a refusal."""
    stderr = (
        "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
        "(job submit limit, user's size and/or time limits)\n"
    )
    assert s.parse_over_quota_output(1, "", stderr)["state"] == "refused"


class _Submit(http.server.BaseHTTPRequestHandler):
    """slurmrestd v0.0.40: ping answers, the submit is refused with `answer`."""

    answer: dict[str, Any] = {}

    def _send(self, body: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/slurm/v0.0.40/ping":
            self._send({"meta": {}, "errors": [], "pings": []})
        else:
            self._send({"errors": [{"error": "not found"}]}, 404)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(self.answer, 500)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize(
    ("error", "number", "state"),
    [
        # ESLURM_INVALID_ACCOUNT: a Slurm error number (2000-2999) that says nothing of GPUs.
        ("Invalid account or account/partition combination specified", 2045, "error"),
        ("Requested node configuration is not available", 2014, "refused"),
    ],
)
def test_rest_refusal_for_another_reason_is_not_clean(error: str, number: int, state: str) -> None:
    # Error object of the v0.0.40 OpenAPI schema: description, error_number, error, source.
    handler = type(
        "Handler",
        (_Submit,),
        {
            "answer": {
                "errors": [
                    {
                        "description": "",
                        "error_number": number,
                        "error": error,
                        "source": "slurm_submit_batch_job()",
                    }
                ]
            }
        },
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        target = s.SlurmRestTarget(url=f"http://slurm.invalid:{port}", user="u", token="tok-1")
        result = s.over_quota_rest(target, resolve=_loopback, gpus=9)
    finally:
        server.shutdown()
        server.server_close()
    assert (result["state"], result["clean"]) == (state, state == "refused")
    assert error in result["reason"]


# --- pending reasons ------------------------------------------------------------------------


def test_pending_jobs_held_for_unavailable_nodes_count_as_one_reason() -> None:
    """squeue's %r prints the scheduler's description where it has one: for ReqNodeNotAvail
    it names the nodes down at that moment (Slurm 20.11 to 24.x), which differ between jobs."""
    squeue = (
        "Resources\n"
        "ReqNodeNotAvail, UNAVAILABLE NODES:gpu[01-02]\n"
        "ReqNodeNotAvail, UNAVAILABLE NODES:gpu03\n"
        "ReqNodeNotAvail, Reserved for maintenance\n"
        "(Priority)\n"
    )
    facts = s.facts_from_cli({s.SQUEUE_PENDING_COMMAND: squeue})
    assert facts["jobs_pending_reasons"] == {
        "Resources": 1,
        "ReqNodeNotAvail": 2,
        "ReqNodeNotAvail, Reserved for maintenance": 1,
        "Priority": 1,
    }
