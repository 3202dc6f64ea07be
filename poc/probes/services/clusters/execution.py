"""Executing a claimed run with its cluster's executor and finishing it: the
results of the bound actions, or the reason it failed."""

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.history_labels import candidate_part, phrase_part, text_part
from evaluations.services import event_record
from poc.probes import credentials
from poc.probes.models import (
    Cluster,
    ClusterKind,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
    ProbeStatus,
)
from poc.probes.recording import run_record
from poc.probes.selectors.clusters import probe_run_cancel_requested, probe_run_has_facts
from poc.probes.services.probes import worst

if TYPE_CHECKING:
    pass
from poc.probes.services.clusters.claims import Claim, claim_run
from poc.probes.services.clusters.common import ClusterUnreachable, RunFailed, RunTimedOut
from poc.probes.services.clusters.executors import (
    execute_kubernetes,
    execute_slurm_rest,
    execute_slurm_ssh,
    execute_ssh,
)
from poc.probes.services.clusters.storing import Collected

log = logging.getLogger(__name__)


type Executor = Callable[[ProbeRun, Cluster, dict[str, str], Claim, Collected], None]

EXECUTORS: dict[str, Executor] = {
    ClusterKind.SSH: execute_ssh,
    ClusterKind.KUBERNETES: execute_kubernetes,
    ClusterKind.SLURM_REST: execute_slurm_rest,
    ClusterKind.SLURM_SSH: execute_slurm_ssh,
}


def _finish(
    run: ProbeRun, claim: Claim, status: str, error: str = "", collected: Collected | None = None
) -> None:
    with transaction.atomic():
        row = ProbeRun.objects.select_for_update().filter(pk=run.pk).first()
        if (
            row is None
            or row.status != ProbeStatus.RUNNING
            or row.work_started_at != run.work_started_at
        ):
            return  # the claim was taken over: write nothing
        row.status = status
        row.error = error[:4000]
        row.finished_at = timezone.now()
        row.work_started_at = None
        if collected is not None:
            row.node_count = collected.position
            row.gpu_count = sum(len(f["gpus"]) for f in collected.facts)
            row.verdict = worst(collected.verdicts) if collected.verdicts else ""
        row.save()
        if collected is not None and (collected.facts or row.cluster_facts):
            run_record(
                row,
                collected.facts,
                collected.cited,
                actor=run.created_by,
                cluster_facts=row.cluster_facts or None,
            )
        event_record(
            project=row.project,
            actor=None,
            verb="probe.finished",
            parts=[
                text_part(row.cluster.name) if row.cluster else candidate_part(row.candidate),
                phrase_part("probe.run", n=row.pk),
            ],
            after={"status": status, "nodes": row.node_count, "gpus": row.gpu_count},
        )


def probe_run_execute(*, run_id: int, final_attempt: bool = True) -> ProbeRun | None:
    """Run a queued probe (called by the worker). Raises ClusterUnreachable when nothing
    answered and another attempt may follow; every other failure ends the run with its reason."""
    run = claim_run(run_id)
    if run is None:
        return ProbeRun.objects.filter(pk=run_id).first()
    claim = Claim(run)
    collected = Collected(facts=[], cited=[], verdicts=[], failed=[])
    cluster = run.cluster
    if cluster is None:
        _finish(run, claim, ProbeStatus.FAILED, _("The cluster was removed."))
        return run
    try:
        secrets = cluster.read_secrets()
    except credentials.CredentialsUnavailable as exc:
        _finish(
            run, claim, ProbeStatus.FAILED, _("The credentials cannot be read: %(e)s") % {"e": exc}
        )
        return run
    executor = EXECUTORS.get(cluster.kind)
    if executor is None:
        _finish(run, claim, ProbeStatus.FAILED, _("This kind of cluster cannot be probed yet."))
        return run
    try:
        executor(run, cluster, secrets, claim, collected)
    except ClusterUnreachable as exc:
        if not final_attempt:
            ProbeRun.objects.filter(pk=run.pk, work_started_at=run.work_started_at).update(
                status=ProbeStatus.QUEUED,
                work_started_at=None,
                error=str(exc)[:4000],
                progress_done=0,
                queued_at=timezone.now(),
            )
            ProbeNode.objects.filter(run=run).delete()
            ProbeOutput.objects.filter(run=run).delete()
            raise
        _finish(run, claim, ProbeStatus.FAILED, str(exc), collected)
        return run
    except RunFailed as exc:
        _finish(run, claim, ProbeStatus.FAILED, str(exc), collected)
        return run
    except Exception as exc:
        from celery.exceptions import SoftTimeLimitExceeded

        if isinstance(exc, RunTimedOut | SoftTimeLimitExceeded):
            _finish(
                run,
                claim,
                ProbeStatus.TIMED_OUT,
                _("The probe ran past its time limit (%(s)s s); the nodes read so far are kept.")
                % {"s": settings.PROBE_SOFT_TIME_LIMIT},
                collected,
            )
            return run
        log.exception("probe run %s failed", run.pk)
        _finish(run, claim, ProbeStatus.FAILED, f"{type(exc).__name__}: {exc}"[:500], collected)
        return run
    if probe_run_cancel_requested(run):
        _finish(
            run,
            claim,
            ProbeStatus.CANCELLED,
            _("Cancelled; the nodes read so far are kept."),
            collected,
        )
    elif not collected.facts and (cluster.uses_ssh or not probe_run_has_facts(run)):
        reasons = "; ".join(collected.failed[:3]) or _("no node was read")
        if collected.unreachable == collected.position and collected.position and not final_attempt:
            ProbeRun.objects.filter(pk=run.pk, work_started_at=run.work_started_at).update(
                status=ProbeStatus.QUEUED,
                work_started_at=None,
                error=reasons[:4000],
                progress_done=0,
                queued_at=timezone.now(),
            )
            ProbeNode.objects.filter(run=run).delete()
            raise ClusterUnreachable(reasons)
        _finish(
            run,
            claim,
            ProbeStatus.FAILED,
            _("No node could be read: %(r)s") % {"r": reasons},
            collected,
        )
    elif collected.failed:
        _finish(
            run,
            claim,
            ProbeStatus.PARTIAL,
            _("%(count)s of %(total)s nodes could not be read: %(r)s")
            % {
                "count": len(collected.failed),
                "total": collected.position,
                "r": "; ".join(collected.failed[:3]),
            },
            collected,
        )
    else:
        _finish(run, claim, ProbeStatus.DONE, "", collected)
    return run
