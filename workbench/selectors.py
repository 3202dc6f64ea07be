"""Reads for the workbench's own pages."""

from django.http import Http404

from workbench.models import WorkerCheck


def recent_worker_checks(limit: int = 10) -> list[WorkerCheck]:
    return list(WorkerCheck.objects.select_related("requested_by")[:limit])


def worker_check(check_id: int) -> WorkerCheck:
    check = WorkerCheck.objects.filter(pk=check_id).first()
    if check is None:
        raise Http404
    return check
