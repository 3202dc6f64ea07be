"""Writes for the workbench's own rows."""

import logging

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from workbench.models import UserPreference, WorkerCheck
from workbench.people import stored_user
from workbench.queue import send

WORKER_CHECK_TASK = "workbench.tasks.worker_check_task"

log = logging.getLogger(__name__)


@transaction.atomic
def worker_check_request(*, user: User | AnonymousUser) -> WorkerCheck:
    """Create a check row and send it to the queue once the row is committed."""
    check = WorkerCheck.objects.create(requested_by=stored_user(user))
    transaction.on_commit(lambda: send(WORKER_CHECK_TASK, check.pk))
    return check


@transaction.atomic
def worker_check_complete(*, check_id: int, hostname: str) -> WorkerCheck | None:
    """Mark a check as answered by a worker; a check deleted meanwhile is ignored."""
    check = WorkerCheck.objects.select_for_update().filter(pk=check_id).first()
    if check is None:
        return None
    log.info("worker check %s answered by %s", check_id, hostname[:255])
    check.completed_at = timezone.now()
    check.worker_hostname = hostname[:255]
    check.save(update_fields=["completed_at", "worker_hostname"])
    return check


@transaction.atomic
def preference_set(*, user: User, email_notifications: bool, language: str) -> UserPreference:
    """A person's e-mail choices (theirs alone to make)."""
    if language and language not in dict(settings.LANGUAGES):
        raise ValidationError({"language": _("Choose one of the offered languages.")})
    preference, _created = UserPreference.objects.select_for_update().get_or_create(user=user)
    preference.email_notifications = email_notifications
    preference.language = language
    preference.save()
    return preference
