"""Every write to a project's phase: judged from its state, moved with a history entry."""

import logging

from django.db import transaction
from django.db.models import F

from evaluations.models import AuditHead, Phase, Project
from evaluations.services import event_record
from reports.selectors import evaluation_progress

log = logging.getLogger(__name__)


def project_phase_refresh(*, project_id: int) -> str | None:
    """Judge one project's phase from its state (the steps of `evaluation_progress`) and
    store it when it moved, with a history entry of no actor saying from what to what. An
    archived project stays where a person put it. Returns the new phase, or None when it did
    not move."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    # The history position read before judging: whatever is written after it is judged again.
    seen = AuditHead.objects.filter(project=project).values_list("seq", flat=True).first() or 0
    if project.phase == Phase.ARCHIVED:
        Project.objects.filter(pk=project.pk).update(phase_seen_seq=seen)
        return None
    phase = evaluation_progress(project).phase
    if phase == project.phase:
        Project.objects.filter(pk=project.pk, phase=phase).update(phase_seen_seq=seen)
        return None
    with transaction.atomic():
        moved = Project.objects.filter(pk=project.pk, phase=project.phase).update(phase=phase)
        if not moved:
            return None  # a person archived it meanwhile: the next refresh judges again
        event = event_record(
            project=project,
            actor=None,
            verb="project.phase",
            subject=project.name,
            before={"phase": project.phase},
            after={"phase": phase},
        )
        # This judgement's own entry needs no judging; one written beside it does.
        Project.objects.filter(pk=project.pk).update(
            phase_seen_seq=event.seq if event.seq == seen + 1 else seen
        )
    project.phase = phase
    log.info("project %s moved on to the %s phase", project.slug, phase)
    return phase


def project_phases_refresh() -> int:
    """Judge the phase of every project whose history moved since its phase was last judged
    (archived ones aside): one query when nothing changed. Returns how many phases moved."""
    due = (
        Project.objects.exclude(phase=Phase.ARCHIVED)
        .filter(audit_head__seq__gt=F("phase_seen_seq"))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return sum(project_phase_refresh(project_id=pk) is not None for pk in list(due))
