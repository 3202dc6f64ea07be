"""Slurm: what the cluster declares about its GPUs, read through slurmrestd or Slurm's commands.

Two ways in, one result. `probe_slurm_rest` asks slurmrestd (JWT in `X-SLURM-USER-NAME` /
`X-SLURM-USER-TOKEN`); an SSH connector runs `CLI_COMMANDS` on a login node and hands their
output to `facts_from_cli`. Both return the same facts document (FACTS_FORMAT):

    {"format", "api_version" (None from the CLI), "slurm_version",
     "slurm_versions": {"controller", "slurmrestd", "client", "nodes": {version: [names]},
                        "taken_from"}, "warnings": [str, ...],
     "nodes": [{"name", "state", "state_flags", "reason", "partitions", "gres", "gres_used",
                "gpus_total", "gpus_used", "cpus", "real_memory_mb", "version"}],
     "partitions": [{"name", "state", "nodes", "default", "total_cpus", "total_nodes",
                     "gpus_total", "max_gpus_per_job"}],
     "jobs_pending_reasons": {reason: count}, "controllers": [...], "diag": {...} | None,
     "could_not_check": [{"what", "reason"}], "raw": [{"name", "status", "text"}],
     "gpu_nodes": [NodeFacts, ...]}

`slurm_version` is the controller's (`scontrol show config`), else slurmrestd's (its answers'
meta block), else the login node's `scontrol version`, else the newest slurmd's; `warnings` names
nodes whose slurmd reports another (module `versions`).

`state` is the base state in lower case ("idle", "mixed", "allocated", "down"), `state_flags`
the rest in upper case ("DRAIN", "NOT_RESPONDING"), whatever the source spelled ("drng",
"RESERVED", "IDLE+DRAIN", ["IDLE", "DRAIN"]); `state` is None where a one-word spelling hides a
base state it does not pin down ("INVAL", "REBOOT^"). A partition's `default` is None where the
source does not say (slurmrestd v0.0.39 and later leave partition flags out). GRES entries
are `{"name", "type", "count", "indexes"}` ("gpu:h200:3(IDX:0-2)" -> gpu, h200, 3, "0-2").
`gpus_total` / `gpus_used` are None where the source did not say (never 0 for unknown); a node
Slurm declares no GRES on has 0. `max_gpus_per_job` is always None here: Slurm keeps per-job
GPU limits in QOS records, which only slurmdbd serves. `gpu_nodes` holds one GPU fact document
(poc/probes/facts.py) per node with GPUs: one GPU per declared GRES gpu, named by its type,
everything else unknown, because Slurm knows no more about them.

The controlled failure (`over_quota_rest`, `over_quota_command` + `parse_over_quota_output`)
submits a real job asking for more GPUs than any node has; a healthy controller refuses it at
submit ("Requested node configuration is not available"). A job accepted nonetheless is
cancelled and the result says so. (22.05 still keeps a FAILED record of the refused request,
Reason=BadConstraints, until MinJobAge passes: nothing runs or waits.)

Measured against slurmrestd 22.05 (openapi/v0.0.36-v0.0.38): a token slurmctld rejects is not
a 401 there but a 500 on every path ("Unspecified error"; "Zero Bytes were transmitted or
received" on submit); only a request without credentials gets 401. The reasons say so.
Shapes of v0.0.39 and later (lists for states, numbers as {"set", "number"}) are read where
they are known from Slurm's documentation; they were not measured.

Pure Python but for Django's gettext (warnings are in the reader's language): the network
guard is the caller's `resolve(host, port)`.

The package by topic: `target`, `values` (states, GRES, the facts document), `versions` (Slurm's
version from each source), `refusals`, `cli` (the commands' outputs), `rest` (slurmrestd),
`failure` (the controlled failure) and `documents` (outputs and answers saved to files, for a
cluster the workbench cannot reach).
"""

from poc.probes.connectors.slurm.cli import (
    CLI_COMMANDS,
    SCONTROL_CONFIG_COMMAND,
    SCONTROL_NODES_COMMAND,
    SCONTROL_PARTITIONS_COMMAND,
    SINFO_COMMAND,
    SQUEUE_PENDING_COMMAND,
    VERSION_COMMAND,
    VERSION_COMMANDS,
    facts_from_cli,
    parse_key_values,
    parse_scontrol_nodes,
    parse_scontrol_partitions,
    parse_sinfo_nodes,
)
from poc.probes.connectors.slurm.failure import (
    SCENARIO,
    over_quota_command,
    over_quota_rest,
    oversized_request,
    parse_over_quota_output,
    scancel_command,
)
from poc.probes.connectors.slurm.rest import check_slurm_rest, probe_slurm_rest
from poc.probes.connectors.slurm.target import ConnectorError, SlurmRestTarget
from poc.probes.connectors.slurm.values import FACTS_FORMAT, gpu_nodes, parse_gres

__all__ = [
    "CLI_COMMANDS",
    "ConnectorError",
    "FACTS_FORMAT",
    "SCENARIO",
    "SCONTROL_CONFIG_COMMAND",
    "SCONTROL_NODES_COMMAND",
    "SCONTROL_PARTITIONS_COMMAND",
    "SINFO_COMMAND",
    "SQUEUE_PENDING_COMMAND",
    "SlurmRestTarget",
    "VERSION_COMMAND",
    "VERSION_COMMANDS",
    "check_slurm_rest",
    "facts_from_cli",
    "gpu_nodes",
    "over_quota_command",
    "over_quota_rest",
    "oversized_request",
    "parse_gres",
    "parse_key_values",
    "parse_over_quota_output",
    "parse_scontrol_nodes",
    "parse_scontrol_partitions",
    "parse_sinfo_nodes",
    "probe_slurm_rest",
    "scancel_command",
]
