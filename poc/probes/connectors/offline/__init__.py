"""Offline evidence of a cluster the workbench cannot reach: what its admins paste or upload,
read into the facts document a live probe of the cluster gives, by the live connectors' own
functions.

Accepted, recognised from the content: Kubernetes objects as YAML (several documents between
`---`) or JSON, a List, a `<Kind>List` or single objects (`kubectl get nodes -o yaml`, Volcano
and KAI queues, PodGroups, Pods, ResourceQuotas, the GPU Operator's ClusterPolicy, OpenShift
AI's DataScienceCluster), `kubectl describe pod` and the API server's quota refusal as kubectl
prints it; `scontrol show nodes` / `partitions` / `config` / `version`, `sinfo` (the layout the
live connector asks for, or the default partition summary), slurmrestd's JSON answers (`meta` with
`nodes`, `partitions`, `jobs`, `pings` or `statistics`), `sinfo --json` and a refused `sbatch`.

`kubernetes.documents` and `slurm.documents` build the facts; `recognise` tells what a document
is, `loading` reads its text, JSON and YAML (the safe schema, aliases bounded). No Django here.
"""

from poc.probes.connectors.offline.loading import DocumentError
from poc.probes.connectors.offline.reading import MAX_DOCUMENTS, read_documents
from poc.probes.connectors.offline.recognise import ACCEPTED

__all__ = ["ACCEPTED", "MAX_DOCUMENTS", "DocumentError", "read_documents"]
