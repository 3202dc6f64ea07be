"""Probe work for Celery workers, on the `probes` queue. Tasks carry ids only (never a
credential); the run row holds the state, the claim and the reason of a failure.

The task names are the ones they had before GPU evidence became its own app, so that a run queued
before an upgrade still finds its task (and the `poc.tasks.*` route to the `probes` queue)."""

from celery import Task, shared_task
from django.conf import settings

from poc.probes.services import clusters


@shared_task(
    name="poc.tasks.probe_run_task",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=clusters.MAX_ATTEMPTS - 1,
    soft_time_limit=settings.PROBE_SOFT_TIME_LIMIT,
    time_limit=clusters.hard_time_limit(),
)
def probe_run_task(self: Task, run_id: int) -> None:
    """Probe a cluster; retried with backoff only when no node or endpoint answered."""
    final = self.request.retries >= self.max_retries
    try:
        clusters.probe_run_execute(run_id=run_id, final_attempt=final)
    except clusters.ClusterUnreachable as exc:
        raise self.retry(exc=exc, countdown=min(30 * 2**self.request.retries, 600)) from None


@shared_task(name="poc.tasks.probe_schedule_task", acks_late=True)
def probe_schedule_task() -> None:
    """Send the runs the broker could not take, take up runs whose worker was lost, and start
    the runs whose schedule is due."""
    clusters.probe_runs_resend()
    clusters.probe_runs_recover()
    clusters.probe_schedule_due()
