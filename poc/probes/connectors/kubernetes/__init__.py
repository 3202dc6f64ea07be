"""Read a Kubernetes cluster's GPU facts through its API server; provoke two refusals on request.

`probe_kubernetes` only reads: the server version, the nodes (GPU resources and the labels of
NVIDIA's GPU feature discovery, or else the cloud provider's), the NVIDIA GPU Operator
(ClusterPolicy, NVIDIADriver resources and the operand DaemonSets), a DCGM exporter sample
read through the API server's service proxy, Volcano and KAI / Run:ai queues, OpenShift AI /
Open Data Hub, Slinky (Slurm on Kubernetes) and GPU ResourceQuotas. API groups are discovered
with `GET /apis`; no version of a custom resource is assumed. A read the credentials may not
make (403, or any failure but 404) lands in `could_not_check`: a product is reported absent
only when its API group is not served or its resource answers 404. Every body read is kept in
`raw` as the evidence.

`over_quota` creates objects (opt-in): a Job asking for more GPUs than any node allocates, and,
where the namespace has a ResourceQuota on `requests.nvidia.com/gpu`, a Pod over that quota. It
waits for the scheduler's or the quota's refusal and deletes everything it created, whatever
happens. `planned_objects` shows those manifests beforehand; `sweep` removes leftovers.

The caller's `resolve(host, port)` is the network guard: it is called once per session for the
API server, and the client connects to the address it returns (TLS is still verified against
the name). A kubeconfig is read as data: exec plugins, auth providers and file references are
refused, never run or opened. No Django here: the module runs inside a Celery task as well.


The package by topic: `target` (URL, token, kubeconfig), `api` (the HTTP session), `values`,
`discovery` (API groups, products), `nodes` (GPUs, MIG, labels), `gpu_operator`,
`dcgm` (DCGM exporter metrics), `schedulers` (Volcano, KAI, Run:ai), `platforms` (OpenShift AI,
Slinky), `quotas`, `probe` (the read and the connection test) and `failure` (the controlled
failure, the sweep); `documents` (the same readers over objects saved with kubectl, for a
cluster the workbench cannot reach) and `describe` (kubectl's text for people: describe pod, a
quota refusal).
"""

from poc.probes.connectors.kubernetes.dcgm import parse_prometheus
from poc.probes.connectors.kubernetes.failure import (
    PAUSE_IMAGE,
    over_quota,
    planned_objects,
    sweep,
)
from poc.probes.connectors.kubernetes.probe import FORMAT, check_kubernetes, probe_kubernetes
from poc.probes.connectors.kubernetes.target import (
    ConnectorError,
    KubeTarget,
    Resolve,
    target_host,
)

__all__ = [
    "FORMAT",
    "PAUSE_IMAGE",
    "ConnectorError",
    "KubeTarget",
    "Resolve",
    "check_kubernetes",
    "over_quota",
    "parse_prometheus",
    "planned_objects",
    "probe_kubernetes",
    "sweep",
    "target_host",
]
