"""Registered clusters and the probe runs workers make on them.

A cluster row holds where a candidate's GPUs are and, encrypted, how to get in. Starting a run
queues it (after the commit); a worker claims it (`work_started_at`, as sheets do: a late or
duplicate delivery that does not hold the claim writes nothing), reads every node through the
cluster's connector, stores each node as it comes (raw outputs as evidence, facts, health), and
finishes with the results of the bound acceptance actions. A node that cannot be read is that
node's outcome; the run finishes partially. A run whose worker was lost is taken up again, or
ends failed with the reason: none stays running.

A module per step: `registry` (registering), `connection` (connection tests, host keys), `runs`
(starting, cancelling, recovering, schedules), `claims` (a worker's claim), `executors` (one per
kind of cluster), `storing` (what a run read, node by node), `execution` (running a claimed run
and finishing it) and `common`. What a controlled failure would create is a read
(poc.probes.selectors.plans).
"""

from poc.probes.services.clusters.common import (
    UNREACHABLE_WORDS,
    ClusterUnreachable,
    RunFailed,
    RunTimedOut,
    hard_time_limit,
)
from poc.probes.services.clusters.connection import (
    NodeCheck,
    cluster_confirm_host_keys,
    cluster_test_connection,
    failure_hint,
)
from poc.probes.services.clusters.execution import Executor, probe_run_execute
from poc.probes.services.clusters.executors import CANCEL_POLL_SECONDS, RELEASE_EVERY
from poc.probes.services.clusters.registry import (
    ClusterData,
    KeyRotation,
    cluster_credentials_rotate,
    cluster_delete,
    cluster_save,
)
from poc.probes.services.clusters.runs import (
    LOST_AFTER,
    MAX_ATTEMPTS,
    PROBE_RUN_TASK,
    probe_run_cancel,
    probe_run_start,
    probe_runs_recover,
    probe_runs_resend,
    probe_schedule_due,
)
from poc.probes.services.clusters.storing import MAX_CITED, ConnectorFacts

__all__ = [
    "CANCEL_POLL_SECONDS",
    "ClusterData",
    "ClusterUnreachable",
    "ConnectorFacts",
    "Executor",
    "KeyRotation",
    "LOST_AFTER",
    "MAX_ATTEMPTS",
    "MAX_CITED",
    "NodeCheck",
    "failure_hint",
    "PROBE_RUN_TASK",
    "RELEASE_EVERY",
    "RunFailed",
    "RunTimedOut",
    "UNREACHABLE_WORDS",
    "cluster_confirm_host_keys",
    "cluster_credentials_rotate",
    "cluster_delete",
    "cluster_save",
    "cluster_test_connection",
    "hard_time_limit",
    "probe_run_cancel",
    "probe_run_execute",
    "probe_run_start",
    "probe_runs_recover",
    "probe_runs_resend",
    "probe_schedule_due",
]
