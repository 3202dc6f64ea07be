"""What the demo project's people recorded by hand: outcomes with their notes, failure causes,
integration needs and reasons for not covering an action, and the evidence they attached (real
captures from poc/probes/demo_captures, stored as an upload is). Each is recorded only in a cell
that has no result yet, so nothing a person changed since is touched. Illustrative, like every
figure of the demo."""

from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.files.base import ContentFile

from evaluations.models import AcceptanceAction, Candidate, Project
from poc import services
from poc.models import Evidence, Outcome, Result, ResultCell, Source
from poc.probes.demo import capture_bytes

K, V, S, R = "k8s-gpu-operator", "volcano", "slurm", "runai"


@dataclass(frozen=True)
class Said:
    """One outcome as a person records it."""

    outcome: str
    note: str = ""
    failure_cause: str = ""
    what: str = ""
    team: str = ""
    days: str = ""
    delivery: str = ""
    delivered_by: str = ""

    def fields(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "note": self.note,
            "failure_cause": self.failure_cause,
            "integration_what": self.what,
            "integration_owner_team": self.team,
            "integration_effort_days": Decimal(self.days) if self.days else None,
            "integration_delivery": self.delivery,
            "integration_delivered_by": self.delivered_by,
        }


def ok(note: str = "") -> Said:
    return Said(Outcome.PASSED, note)


def fail(cause: str, note: str = "") -> Said:
    return Said(Outcome.FAILED, note, failure_cause=cause)


def nc(reason: str) -> Said:
    return Said(Outcome.NOT_COVERED, reason)


def gap(what: str, team: str, days: str, delivery: str = "", by: str = "") -> Said:
    return Said(
        Outcome.NEEDS_INTEGRATION, what=what, team=team, days=days, delivery=delivery,
        delivered_by=by,
    )  # fmt: skip


NO_QUEUES = nc("Without a queue layer there is nothing to borrow or reclaim; tested under Volcano.")
NOT_CONTAINER = nc("Slurm is not a container-native candidate: see the batch queue actions.")
NO_MIG = nc("MIG is not planned in this phase: the pool shares GPUs by time-slicing.")
SAME_AS_K8S = "Same as the GPU Operator candidate: Volcano runs on the same Kubernetes."
DEX = "Dex in front of the API server for OIDC logins; a disabled account loses access within 1 h."

# By action, then candidate; an action or a candidate left out is still open.
PEOPLE: dict[str, dict[str, Said]] = {
    "tenancy-project-create": {
        K: gap("A namespace, RBAC and quota template per team, created from the request ticket.",
               "platform", "5", "custom", "Platform team"),
        V: gap("A Volcano queue and namespace template per team; approval stays in the ticket "
               "system.", "platform", "3", "custom", "Platform team"),
        S: ok("A Slurm account and partition access per team: two `sacctmgr` commands by ops."),
        R: ok("A department admin creates the project in the Run:ai console in minutes."),
    },
    "tenancy-gpu-allocation": {
        K: fail("Only a fixed ResourceQuota per namespace: idle GPUs cannot be borrowed."),
        V: ok("Deserved share and capability per queue; idle GPUs lent up to the capability."),
        S: ok("Fair share with `GrpTRES=gres/gpu` limits per account."),
        R: ok("Guaranteed quota per project, with over-quota borrowing."),
    },
    "tenancy-quota-reached": {
        K: gap("GPU quotas per team need a queue layer on top of ResourceQuota.", "platform", "8"),
        V: ok("Queue capability refused the 9th GPU with a clear *Unschedulable* reason."),
        S: ok("The job waits with reason `QOSGrpGRES`, which the user sees in `squeue`."),
        R: ok("Over-quota jobs wait as pending, with the reason shown in the project view."),
    },
    "tenancy-borrow-reclaim": {
        K: NO_QUEUES,
        V: ok("The owner's job got its GPUs back in 40 s: the borrowing job was evicted and "
              "requeued."),
        S: fail("Borrowed nodes come back only when the running job ends (up to 48 h)."),
        R: ok("Over-quota workloads were preempted within a minute of the owner's submission."),
    },
    "tenancy-audit-trail": {
        K: gap("Forward the API server's audit log and keep quota changes in Git.", "ops", "4",
               "third_party", "Fluent Bit"),
        V: gap("As for plain Kubernetes: the API server's audit log, forwarded.", "ops", "4",
               "third_party", "Fluent Bit"),
        S: fail("Limit changes made with `sacctmgr` leave no audit record naming who made them."),
        R: ok("The audit log lists project, quota and role changes with who made them."),
    },
    "gpu-inventory-discovery": {K: ok(), V: ok(), S: ok(), R: ok("The L40S shows with 48 GB.")},
    "gpu-stack-versions": {
        K: ok("GPU Operator v25.3 pins driver 580 and the container toolkit on Kubernetes 1.33."),
        V: ok(SAME_AS_K8S),
        S: ok("Slurm 24.05 with the node's driver; GPUs found by NVML autodetection."),
        R: gap("Run:ai 2.21 certifies Kubernetes up to 1.32: the pool would stay one minor "
               "version behind until the vendor certifies 1.33.", "platform", "2", "product",
               "Run:ai"),
    },
    "gpu-real-training-job": {
        K: ok("The 8-GPU fine-tuning job ran at 98 % of its bare-metal step time."),
        V: ok("Gang-scheduled: all eight workers started together, 97 % of bare metal."),
        S: fail("The training image needs a container runtime the batch nodes lack."),
        R: ok("Ran at the expected step time, 2 % slower than bare metal."),
    },
    "gpu-multinode-network": {
        S: ok("NCCL all-reduce reached 92 % of the InfiniBand line rate across two nodes."),
    },
    "gpu-sharing-isolation": {
        K: ok("Time-slicing set through the operator; no memory isolation, as documented."),
        V: ok("The same time-slicing; Volcano's vGPU scheduling was not tried."),
        S: nc("The training group does not share GPUs between batch jobs."),
        R: ok("Fractional GPUs, with the memory limit enforced per workload."),
    },
    "gpu-unhealthy-device": {
        K: ok("After Xid 48 the device plugin marked the GPU unhealthy; no new pod went to it."),
        V: ok("The same device plugin health check as the GPU Operator candidate."),
        S: gap("A node health check that drains a node on an actionable Xid.", "ops", "3",
               "custom", "Ops team"),
        R: ok("The console marks the GPU unhealthy and nothing more is scheduled on it."),
    },
    "gpu-inference-service": {
        K: ok("A KServe deployment served the model on one H200."),
        V: ok("Inference runs beside Volcano, on the default scheduler."),
        S: nc("Slurm is kept for batch training; inference stays on Kubernetes."),
        R: ok("Deployed as an inference workload that scales to zero when idle."),
    },
    "cn-gpu-device-discovery": {
        K: ok("A new node was labelled and schedulable within 4 minutes, with no hand edits."),
        V: ok(SAME_AS_K8S),
        S: NOT_CONTAINER,
        R: ok("The node joined its node pool by itself."),
    },
    "cn-queue-quota-enforced": {
        K: fail("ResourceQuota refuses pods at creation, but there is no queue: jobs fail "
                "instead of waiting."),
        V: ok("Jobs over the queue's capability wait in the queue (see the attached queue)."),
        S: NOT_CONTAINER,
        R: ok("The project quota is enforced before admission."),
    },
    "cn-job-failure-feedback": {
        K: ok("`kubectl describe` gives the reason; users need read access to the namespace."),
        V: ok("The PodGroup's conditions say why a job is pending."),
        S: NOT_CONTAINER,
        R: ok("The workload page shows the failure reason with its events."),
    },
    "cn-metrics-logs-events": {
        K: gap("A Grafana view joining DCGM metrics, logs and events per job.", "ops", "6",
               "custom", "Ops team"),
        V: gap("The same dashboard work as plain Kubernetes, plus Volcano's job labels.", "ops",
               "7", "custom", "Ops team"),
        S: NOT_CONTAINER,
        R: ok("Built-in dashboards show a workload's GPU use, logs and events together."),
    },
    "hpc-multi-queue-jobs": {
        K: nc("No partitions or queues: queue behaviour is tested under Volcano."),
        V: ok("Two queues weighted 2:1 received GPUs in that ratio under contention."),
        S: ok("Partition priorities held: the high-priority partition preempted the low one."),
    },
    "hpc-job-requeue": {
        V: ok("After a node drain Volcano restarted the job's pods from the last checkpoint."),
        S: ok("The job was requeued and resumed from its checkpoint after the node drain."),
    },
    "hpc-data-path-access": {
        K: ok("The dataset volume is mounted read-only through the CSI driver."),
        V: ok("The same volumes as plain Kubernetes."),
        S: ok("The same Lustre paths as today; 2.1 GB/s read per node."),
        R: ok("Volume templates per project mount the datasets."),
    },
    "hpc-container-image-run": {
        K: ok(), V: ok(), R: ok(),
        S: fail("The image needs Apptainer, which the batch nodes do not have."),
    },  # fmt: skip
    "int-sso-login": {
        K: gap(DEX, "architecture", "5", "third_party", "Dex"),
        V: gap(DEX, "architecture", "5", "third_party", "Dex"),
        S: ok("Linux accounts already come from the enterprise directory."),
        R: ok("OIDC login with our identity provider; a disabled account is out at the next "
              "token refresh."),
    },
    "int-role-mapping": {
        K: gap("Map enterprise groups to role bindings per namespace.", "architecture", "4",
               "custom", "Platform team"),
        V: gap("The same group mapping as plain Kubernetes.", "architecture", "4", "custom",
               "Platform team"),
        S: ok("Slurm accounts follow directory groups through a nightly sync."),
        R: ok("Identity provider groups map to Run:ai roles per project."),
    },
    "int-audit-forwarding": {
        K: gap("Ship the API server's audit log to the SIEM.", "ops", "3", "third_party",
               "Fluent Bit"),
        V: gap("Ship the API server's audit log to the SIEM.", "ops", "3", "third_party",
               "Fluent Bit"),
        S: fail("slurmctld writes plain log lines, not audit records the SIEM can parse."),
        R: gap("Poll the audit API and forward its records to the SIEM.", "ops", "4", "custom",
               "Ops team"),
    },
    "int-coexist-boundary": {
        K: ok("Runs on the existing cluster; the GPU nodes are a node pool of their own."),
        V: ok("Volcano schedules only the pods that name it; the default scheduler keeps the "
              "rest."),
        S: ok("A separate batch group: no node is shared with Kubernetes."),
        R: fail("Run:ai takes over scheduling on every GPU node pool, the existing inference "
                "nodes included."),
    },
    "int-existing-pipeline": {
        K: ok("Pipelines apply Job manifests as they do today."),
        V: gap("Pipelines must submit Volcano jobs instead of Jobs.", "platform", "2", "custom",
               "Platform team"),
        S: ok("Job scripts unchanged: the CI runner calls `sbatch`."),
        R: gap("Pipelines must call the Run:ai CLI or API instead of `kubectl`.", "platform",
               "3", "custom", "Platform team"),
    },
    "int-metrics-export": {
        K: ok("DCGM exporter, scraped by our Prometheus."),
        V: ok("The same exporter; Volcano's metrics added to the scrape."),
        S: gap("A Slurm exporter and DCGM on the batch nodes.", "ops", "3", "third_party",
               "prometheus-slurm-exporter"),
        R: ok("Metrics exposed in the Prometheus format."),
    },
    "int-logs-events-export": {
        K: ok("Logs and events reach the central log system through Fluent Bit."),
        V: ok("The same log shipping as plain Kubernetes."),
        S: ok("Job output files are shipped by the existing log agent."),
    },
    "int-alert-routing": {
        K: ok("Alertmanager routes to the on-call rotation."),
        V: ok("The same Alertmanager routes."),
        S: gap("Alert rules for drained nodes and stuck jobs.", "ops", "2", "custom", "Ops team"),
    },
    "int-dataset-storage": {
        K: ok(), V: ok(), R: ok(), S: ok("The same Lustre file system as today."),
    },  # fmt: skip
    "int-model-registry": {R: ok("Workloads log their models to our MLflow.")},
    "int-image-registry": {
        K: ok("An admission policy allows images from our Harbor only."),
        V: ok("The same admission policy."),
        S: gap("Apptainer pulls from Harbor with per-user credentials.", "platform", "2",
               "custom", "Platform team"),
        R: ok("Registry credentials per project point at our Harbor."),
    },
    "int-config-versioning": {
        K: ok("Quotas and templates kept in Git and applied by Argo CD."),
        V: ok("Queues are custom resources kept in Git."),
        S: fail("Limits live in the Slurm database; nothing versions their changes."),
        R: gap("Projects and quotas are set in the console; exporting them to Git needs a "
               "script.", "platform", "4", "custom", "Platform team"),
    },
    "int-upgrade-ownership": {
        K: ok("The platform team upgrades Kubernetes each quarter; the operator follows."),
        V: ok("Volcano upgraded with the cluster, by the platform team."),
        S: ok("Ops upgrades Slurm twice a year."),
        R: ok("The vendor ships the control plane; we upgrade the cluster components."),
    },
    "int-backup-restore": {
        K: ok("Velero backs up the namespaces and quota objects."),
        V: ok("Velero, with the queues included."),
    },
    "int-capacity-expansion": {K: ok("A node pool grows by one node in 20 minutes.")},
    "gpu-probe-mig-layout": {K: NO_MIG, V: NO_MIG, S: NO_MIG, R: NO_MIG},
}  # fmt: skip

# Evidence people attached: (candidate, action, capture file). The file goes on the cell's
# latest result, once (a cell with evidence is left alone).
EVIDENCE_FILES = (
    (K, "gpu-unhealthy-device", "device-plugin-xid-48-unhealthy.log"),
    (V, "cn-queue-quota-enforced", "queue-gpu-capability-describe.txt"),
    (S, "cf-gpu-shape-mismatch", "sbatch-gres-rejected-requested-node-config.txt"),
    (K, "cluster-probe-gpu-operator", "kubectl-get-clusterpolicy-ready.txt"),
)
EVIDENCE_LINKS = (
    (K, "gpu-real-training-job", "https://mlflow.example.com/#/experiments/12/runs/gpu-pool-k8s",
     "Fine-tuning run, Kubernetes"),
    (V, "gpu-real-training-job", "https://mlflow.example.com/#/experiments/12/runs/gpu-pool-vc",
     "Fine-tuning run, Volcano"),
)  # fmt: skip
# A probe could not read what a person then checked by hand: (candidate, action, outcome,
# why it changes). Recorded when the cell still holds the probe's verdict.
BY_HAND = (
    (
        K,
        "cluster-probe-gpu-operator",
        ok("`kubectl get clusterpolicies` reports the ClusterPolicy ready (attached)."),
        "Checked by hand: the probe read the node, not the cluster's ClusterPolicy.",
    ),
)


def _owner(action: AcceptanceAction, people: dict[str, User]) -> User | None:
    return people.get(action.requirement.owner_team) or people.get("platform")


def people_results(project: Project, people: dict[str, User]) -> int:
    """Record what people decided in every cell of PEOPLE that has no result; how many."""
    candidates = {c.slug: c for c in Candidate.objects.filter(project=project)}
    actions = {
        a.key: a
        for a in AcceptanceAction.objects.filter(project=project).select_related("requirement")
    }
    done = set(
        ResultCell.objects.filter(project=project).values_list("candidate__slug", "action__key")
    )
    recorded = 0
    for key, by_candidate in PEOPLE.items():
        action = actions.get(key)
        if action is None:
            continue
        for slug, said in by_candidate.items():
            if (slug, key) in done or slug not in candidates:
                continue
            services.result_record(
                candidate=candidates[slug],
                action=action,
                actor=_owner(action, people),
                **said.fields(),  # type: ignore[arg-type]
            )
            recorded += 1
    recorded += _by_hand(candidates, actions, people)
    _evidence(project, people)
    return recorded


def _by_hand(
    candidates: dict[str, Candidate], actions: dict[str, AcceptanceAction], people: dict[str, User]
) -> int:
    recorded = 0
    for slug, key, said, reason in BY_HAND:
        candidate, action = candidates.get(slug), actions.get(key)
        if candidate is None or action is None:
            continue
        cell = ResultCell.objects.filter(candidate=candidate, action=action).first()
        latest = Result.objects.get(pk=cell.result_id) if cell else None
        if latest is None or latest.source != Source.PROBE or latest.outcome == said.outcome:
            continue
        services.result_record(
            candidate=candidate,
            action=action,
            actor=_owner(action, people),
            change_reason=reason,
            **said.fields(),  # type: ignore[arg-type]
        )
        recorded += 1
    return recorded


def _evidence(project: Project, people: dict[str, User]) -> None:
    """Attach the demo evidence to the latest result of its cell, unless the cell already
    holds an item of that name."""
    cells = {
        (slug, key): result_id
        for slug, key, result_id in ResultCell.objects.filter(project=project).values_list(
            "candidate__slug", "action__key", "result_id"
        )
    }
    held = set(
        Evidence.objects.filter(project=project).values_list(
            "result__candidate__slug", "result__action__key", "name"
        )
    )
    wanted = [(s, k, name, "") for s, k, name in EVIDENCE_FILES] + [
        (s, k, name, url) for s, k, url, name in EVIDENCE_LINKS
    ]
    results = Result.objects.in_bulk([cells[(s, k)] for s, k, *_rest in wanted if (s, k) in cells])
    actor = people.get("platform")
    for slug, key, name, url in wanted:
        result = results.get(cells.get((slug, key), 0))
        if result is None or (slug, key, name) in held:
            continue
        if url:
            services.evidence_attach_link(result=result, url=url, name=name, actor=actor)
        else:
            upload = ContentFile(capture_bytes(name), name=name)
            services.evidence_attach_file(result=result, upload=upload, actor=actor)
