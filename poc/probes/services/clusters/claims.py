"""A worker's claim on a run (`work_started_at`, as sheets do): a late or
duplicate delivery that does not hold it writes nothing."""

import time

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from poc.probes.models import (
    Cluster,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
    ProbeStatus,
)
from poc.probes.services.clusters.common import RunTimedOut
from poc.probes.services.clusters.storing import (
    Collected,
    ConnectorFacts,
    gpu_nodes_of,
    keep_facts,
    store_gpu_nodes,
)


def claim_run(run_id: int) -> ProbeRun | None:
    """Take up a queued run under a row lock; None when it is not waiting for a worker."""
    with transaction.atomic():
        run = (
            ProbeRun.objects.select_for_update(of=("self",))
            .select_related("cluster", "project", "candidate")
            .filter(pk=run_id)
            .first()
        )
        if run is None or run.status != ProbeStatus.QUEUED or run.work_started_at is not None:
            return None
        if run.cancel_requested:
            return None
        if run.attempts:
            # An earlier attempt's worker was lost part way: what it stored goes, so that the
            # run ends with each node once.
            ProbeNode.objects.filter(run=run).delete()
            ProbeOutput.objects.filter(run=run).delete()
            run.progress_done = 0
            run.cluster_facts = {}
        run.status = ProbeStatus.RUNNING
        run.work_started_at = timezone.now()
        run.attempts += 1
        run.error = ""
        run.unsent = False
        run.save(
            update_fields=[
                "unsent",
                "status",
                "work_started_at",
                "attempts",
                "error",
                "progress_done",
                "cluster_facts",
            ]
        )
        return run


class Claim:
    """The run's row, only while this worker's claim on it stands, and the run's deadline.

    Celery enforces time limits only in its prefork pool (not under `--pool=solo`, which
    `make run` uses, nor threads), so the run keeps its own: past PROBE_SOFT_TIME_LIMIT no
    further node or step is started and the run ends timed out with what it read.
    """

    def __init__(self, run: ProbeRun) -> None:
        self.run = run
        self.deadline = time.monotonic() + settings.PROBE_SOFT_TIME_LIMIT

    def past_deadline(self) -> bool:
        return time.monotonic() >= self.deadline

    def check_deadline(self) -> None:
        if self.past_deadline():
            raise RunTimedOut()

    def keep_before_deadline(
        self, cluster: Cluster, collected: "Collected", facts: "ConnectorFacts"
    ) -> None:
        """Past the deadline, keep what the probe read and end the run timed out."""
        if self.past_deadline():
            keep_facts(self.run, facts)
            store_gpu_nodes(self.run, cluster, collected, gpu_nodes_of(facts))
            raise RunTimedOut()

    def rows(self) -> QuerySet[ProbeRun]:
        return ProbeRun.objects.filter(
            pk=self.run.pk, status=ProbeStatus.RUNNING, work_started_at=self.run.work_started_at
        )

    def holds(self) -> bool:
        return self.rows().filter(cancel_requested=False).exists()

    def advance(self) -> bool:
        return bool(self.rows().update(progress_done=F("progress_done") + 1))
