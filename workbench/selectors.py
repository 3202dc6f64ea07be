"""Reads for the workbench's own pages."""

from django.contrib.auth.models import User
from django.http import Http404

from workbench.models import UserPreference, WorkerCheck


def recent_worker_checks(limit: int = 10) -> list[WorkerCheck]:
    return list(WorkerCheck.objects.select_related("requested_by")[:limit])


def worker_check(check_id: int) -> WorkerCheck:
    check = WorkerCheck.objects.filter(pk=check_id).first()
    if check is None:
        raise Http404
    return check


def preference_for(user: User) -> UserPreference | None:
    return UserPreference.objects.filter(user=user).first()
