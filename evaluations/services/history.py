"""The project history: every service appends what it changed, to a hash chain per project."""

from collections.abc import Mapping

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from evaluations.audit import entry_hash, normalised
from evaluations.models import AuditHead, Project, ProjectEvent
from workbench.people import stored_user


def _locked_head(project: Project) -> AuditHead:
    """The project's chain head, locked until the transaction ends (created on first use)."""
    head = AuditHead.objects.select_for_update().filter(project=project).first()
    if head is None:
        try:
            with transaction.atomic():
                AuditHead.objects.create(project=project)
        except IntegrityError:
            pass  # another writer created it first; its row lock orders us after it
        head = AuditHead.objects.select_for_update().get(project=project)
    return head


def event_record(
    *,
    project: Project,
    actor: User | None,
    verb: str,
    subject: str = "",
    before: Mapping[str, object] | None = None,
    after: Mapping[str, object] | None = None,
) -> ProjectEvent:
    """Append to a project's history. Called inside the service that made the change, so the
    entry commits (or rolls back) with the change it records."""
    user = stored_user(actor)
    actor_name = user.get_username() if user is not None else ""
    before, after = normalised(before), normalised(after)
    subject = subject[:255]
    # Inside the caller's transaction (no savepoint: a failure here fails the change with it).
    with transaction.atomic(savepoint=False):
        head = _locked_head(project)
        seq = head.seq + 1
        at = timezone.now()
        digest = entry_hash(
            seq=seq,
            at=at,
            actor_name=actor_name,
            verb=verb,
            subject=subject,
            before=before,
            after=after,
            prev_hash=head.hash,
        )
        event = ProjectEvent.objects.create(
            project=project,
            actor=user,
            actor_name=actor_name,
            at=at,
            verb=verb,
            subject=subject,
            before=before,
            after=after,
            seq=seq,
            prev_hash=head.hash,
            hash=digest,
        )
        AuditHead.objects.filter(pk=head.pk).update(seq=seq, hash=digest)
    return event
