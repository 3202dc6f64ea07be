"""GPU evidence: registered clusters and their credentials, probe runs, the nodes and raw outputs
they read, and which acceptance actions a check of the catalogue judges."""

from poc.probes.models.clusters import SECRET_FIELDS, Cluster, ClusterKind
from poc.probes.models.probes import (
    FINISHED_STATUSES,
    ProbeBinding,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
    ProbeSource,
    ProbeStatus,
    Verdict,
    probe_output_upload_to,
)

__all__ = [
    "FINISHED_STATUSES",
    "SECRET_FIELDS",
    "Cluster",
    "ClusterKind",
    "ProbeBinding",
    "ProbeNode",
    "ProbeOutput",
    "ProbeRun",
    "ProbeSource",
    "ProbeStatus",
    "Verdict",
    "probe_output_upload_to",
]
