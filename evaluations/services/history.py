"""The project history: every service appends what it changed, to a hash chain per project."""

from collections.abc import Mapping, Sequence

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from evaluations.audit import Break, current_key, entry_hash, normalised
from evaluations.history_labels import Part, parts_text
from evaluations.models import AuditHead, Project, ProjectEvent
from evaluations.selectors import audit_chain_break
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
    parts: Sequence[Part] = (),
    before: Mapping[str, object] | None = None,
    after: Mapping[str, object] | None = None,
) -> ProjectEvent:
    """Append to a project's history. Called inside the service that made the change, so the
    entry commits (or rolls back) with the change it records.

    `parts` say what the entry is about by kinds and keys (evaluations.history_labels:
    `candidate_part`, `choice_part`...), never by words in the writer's language: the history
    names them in each reader's. The stored `subject` is then their words in English, unless
    given."""
    user = stored_user(actor)
    actor_name = user.get_username() if user is not None else ""
    before, after = normalised(before), normalised(after)
    subject_parts = normalised(list(parts))
    subject = (subject or parts_text(subject_parts))[:255]
    # Inside the caller's transaction (no savepoint: a failure here fails the change with it).
    with transaction.atomic(savepoint=False):
        head = _locked_head(project)
        seq = head.seq + 1
        at = timezone.now()
        key_id, key = current_key()
        digest = entry_hash(
            seq=seq,
            at=at,
            actor_name=actor_name,
            verb=verb,
            subject=subject,
            before=before,
            after=after,
            prev_hash=head.hash,
            key_id=key_id,
            key=key,
            subject_parts=subject_parts,
        )
        event = ProjectEvent.objects.create(
            project=project,
            actor=user,
            actor_name=actor_name,
            at=at,
            verb=verb,
            subject=subject,
            subject_parts=subject_parts,
            before=before,
            after=after,
            seq=seq,
            prev_hash=head.hash,
            hash=digest,
            key_id=key_id,
        )
        AuditHead.objects.filter(pk=head.pk).update(seq=seq, hash=digest)
    return event


class ChainBroken(Exception):
    """The chain does not hold; `found` says where."""

    def __init__(self, found: Break) -> None:
        super().__init__(found.problem)
        self.found = found


def audit_chain_seal(*, project: Project) -> ProjectEvent | None:
    """Seal a chain that ends in entries written before it was keyed: append one keyed entry,
    whose keyed hash covers the last one's. None when there is nothing to seal; ChainBroken
    when the chain does not hold (sealing would vouch for a changed history)."""
    with transaction.atomic():
        head = _locked_head(project)  # writers wait until the seal is in
        found = audit_chain_break(project)
        if found is None:
            return None
        if not found.unsealed:
            raise ChainBroken(found)
        return event_record(
            project=project,
            actor=None,
            verb="audit.sealed",
            subject=f"{found.seq}-{head.seq}",
            after={"key_id": current_key()[0], "first": found.seq, "last": head.seq},
        )
