"""Starting, cancelling, resending and recovering probe runs, and the schedules
that start them."""

import functools
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.services import event_record
from poc.probes import parsers
from poc.probes.facts import FACTS_FORMAT
from poc.probes.models import (
    FINISHED_STATUSES,
    Cluster,
    ClusterKind,
    ProbeRun,
    ProbeSource,
    ProbeStatus,
)
from workbench.queue import send

if TYPE_CHECKING:
    pass
from poc.probes.services.clusters.common import hard_time_limit

log = logging.getLogger(__name__)

PROBE_RUN_TASK = "poc.tasks.probe_run_task"
MAX_ATTEMPTS = 3
LOST_AFTER = timedelta(seconds=60)  # past the hard time limit: the worker is gone

SOURCE_OF_KIND: dict[str, str] = {
    ClusterKind.SSH: ProbeSource.SSH,
    ClusterKind.SLURM_SSH: ProbeSource.SLURM,
    ClusterKind.SLURM_REST: ProbeSource.SLURM,
    ClusterKind.KUBERNETES: ProbeSource.KUBERNETES,
}


def _queue(run: ProbeRun) -> bool:
    """Send the run to the workers; when the broker cannot take it, the run waits, queued and
    marked unsent, and the beat sends it again once the broker answers. True when sent."""
    try:
        send(PROBE_RUN_TASK, run.pk)
    except Exception as exc:  # an unreachable broker is recorded, not an error page
        log.warning("could not queue probe run %s: %s: %s", run.pk, type(exc).__name__, exc)
        ProbeRun.objects.filter(pk=run.pk, status=ProbeStatus.QUEUED).update(
            unsent=True,
            error=_(
                "The worker queue could not be reached (%(error)s): the run waits and is sent "
                "as soon as it answers."
            )
            % {"error": type(exc).__name__},
        )
        return False
    ProbeRun.objects.filter(pk=run.pk, status=ProbeStatus.QUEUED, unsent=True).update(
        unsent=False, error=""
    )
    return True


def probe_runs_resend() -> list[int]:
    """Send again the runs the broker could not take (called by the beat each minute)."""
    sent = []
    for run in ProbeRun.objects.filter(status=ProbeStatus.QUEUED, unsent=True).order_by("pk"):
        if not _queue(run):
            break  # still unreachable: the next tick tries again
        sent.append(run.pk)
    return sent


def probe_run_start(
    *, cluster: Cluster, actor: User | None, with_failures: bool | None = None
) -> ProbeRun:
    """Queue a probe run of a cluster; the worker takes it up after the commit."""
    if cluster.kind == ClusterKind.AGENT:
        raise ValidationError(
            _("This cluster is reached by its push agent only: run workbench-probe on its nodes.")
        )
    failures = cluster.controlled_failures if with_failures is None else with_failures
    if failures and not cluster.controlled_failures:
        raise ValidationError(_("Controlled failures are not enabled for this cluster."))
    if failures and cluster.kind == ClusterKind.SSH:
        failures = False  # plain SSH nodes have no scheduler to refuse a job
    active = ProbeRun.objects.filter(
        cluster=cluster, status__in=[ProbeStatus.QUEUED, ProbeStatus.RUNNING]
    ).first()
    if active is not None:
        return active
    total = len(cluster.node_addresses()) if cluster.uses_ssh else 1
    with transaction.atomic():
        run = ProbeRun.objects.create(
            project=cluster.project,
            candidate=cluster.candidate,
            cluster=cluster,
            source=SOURCE_OF_KIND[cluster.kind],
            status=ProbeStatus.QUEUED,
            parser_version=parsers.PARSER_VERSION,
            facts_format=FACTS_FORMAT,
            created_by=actor if actor is not None and actor.is_authenticated else None,
            queued_at=timezone.now(),
            progress_total=total,
            with_failures=failures,
        )
        event_record(
            project=cluster.project,
            actor=actor,
            verb="probe.started",
            subject=f"{cluster.name} · probe {run.pk}",
            after={"controlled failures": failures},
        )
        transaction.on_commit(lambda: _queue(run))
    return run


def probe_run_cancel(*, run: ProbeRun, actor: User | None) -> ProbeRun:
    """Ask a queued or running probe to stop: a queued one ends at once, a running one after
    the node it is reading (objects it created are still cleaned up)."""
    with transaction.atomic():
        row = ProbeRun.objects.select_for_update().get(pk=run.pk)
        if row.status in FINISHED_STATUSES:
            return row
        if row.status == ProbeStatus.QUEUED:
            row.status = ProbeStatus.CANCELLED
            row.finished_at = timezone.now()
            row.error = _("Cancelled before a worker took it up.")
        row.cancel_requested = True
        row.save(update_fields=["status", "finished_at", "error", "cancel_requested"])
        event_record(
            project=row.project, actor=actor, verb="probe.cancelled", subject=f"probe {row.pk}"
        )
    return row


def probe_runs_recover(*, now: datetime | None = None) -> list[int]:
    """Runs whose worker was lost (running past the hard time limit, or queued and never
    taken up for as long): queued again while attempts remain, else failed with the reason."""
    now = now or timezone.now()
    limit = timedelta(seconds=hard_time_limit()) + LOST_AFTER
    stuck = ProbeRun.objects.filter(
        Q(status=ProbeStatus.RUNNING, work_started_at__lt=now - limit)
        | Q(status=ProbeStatus.QUEUED, unsent=False, queued_at__lt=now - limit)
    ).values_list("pk", flat=True)
    touched = []
    for pk in stuck:
        with transaction.atomic():
            row = ProbeRun.objects.select_for_update().filter(pk=pk).first()
            if row is None or row.status not in (ProbeStatus.QUEUED, ProbeStatus.RUNNING):
                continue
            if row.attempts >= MAX_ATTEMPTS or row.cancel_requested:
                row.status = ProbeStatus.FAILED
                row.error = _(
                    "The worker running this probe was lost %(count)s times: the run was given up."
                ) % {"count": row.attempts}
                row.finished_at = now
                row.work_started_at = None
                row.save(update_fields=["status", "error", "finished_at", "work_started_at"])
            else:
                row.status = ProbeStatus.QUEUED
                row.queued_at = now
                row.work_started_at = None
                row.save(update_fields=["status", "queued_at", "work_started_at"])
                transaction.on_commit(functools.partial(_queue, row))
            touched.append(pk)
    return touched


def probe_schedule_due(*, now: datetime | None = None) -> list[int]:
    """Start a run for every cluster whose schedule is due (called by Celery beat)."""
    now = now or timezone.now()
    started = []
    for cluster in Cluster.objects.filter(schedule_minutes__isnull=False).select_related(
        "project", "candidate"
    ):
        if cluster.kind == ClusterKind.AGENT:
            continue
        due = cluster.last_scheduled_at is None or cluster.last_scheduled_at <= now - timedelta(
            minutes=cluster.schedule_minutes or 0
        )
        if not due:
            continue
        updated = Cluster.objects.filter(
            pk=cluster.pk, last_scheduled_at=cluster.last_scheduled_at
        ).update(last_scheduled_at=now)
        if updated:  # another beat or worker did not take it first
            started.append(probe_run_start(cluster=cluster, actor=None).pk)
    return started
