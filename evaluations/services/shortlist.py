"""The shortlist: candidates in tiers with the reason that put them there."""

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max, ProtectedError
from django.utils.translation import gettext as _

from evaluations.history_labels import candidate_part
from evaluations.models import (
    Candidate,
    FilterStep,
    Project,
    Solution,
    Tier,
)
from evaluations.services.freeze import scope_edit_guard
from evaluations.services.history import event_record
from workbench.text import first_free


def _candidate_state(candidate: Candidate) -> dict[str, object]:
    return {
        "tier": candidate.tier,
        "reason": candidate.reason,
        "version": candidate.version,
        "decided_by_step": candidate.decided_by_step,
    }


def _unique_candidate_slug(project: Project, base: str) -> str:
    taken = set(Candidate.objects.filter(project=project).values_list("slug", flat=True))
    return first_free(base, taken)


@transaction.atomic
def candidate_add(
    *,
    project: Project,
    solution: Solution,
    actor: User | None,
    tier: str = Tier.FIRST,
    version: str = "",
    decided_by_step: str = FilterStep.INFRASTRUCTURE,
    reason: str = "",
    slug: str = "",
) -> Candidate:
    """Put a catalog solution on a project's shortlist (once: a solution already there is
    refused, naming the candidate that holds it)."""
    scope_edit_guard(project)
    Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()  # serialise adds
    held = Candidate.objects.filter(project=project, solution=solution).first()
    if held is not None:
        raise ValidationError(
            {
                "solution": _(
                    "%(solution)s is already on the shortlist (%(slug)s): edit that candidate's "
                    "version or tier instead of adding it twice."
                )
                % {"solution": solution.name, "slug": held.slug}
            }
        )
    last = Candidate.objects.filter(project=project).aggregate(m=Max("position"))["m"]
    candidate = Candidate(
        project=project,
        solution=solution,
        slug=slug or _unique_candidate_slug(project, solution.key),
        version=version.strip(),
        tier=tier,
        decided_by_step=decided_by_step,
        reason=reason.strip(),
        position=(last or 0) + 1,
    )
    candidate.full_clean()
    try:
        with transaction.atomic():
            candidate.save()
    except IntegrityError:
        raise ValidationError({"slug": _("This slug is already used in the project.")}) from None
    event_record(
        project=project,
        actor=actor,
        verb="candidate.added",
        parts=[candidate_part(candidate)],
        after=_candidate_state(candidate),
    )
    return candidate


@transaction.atomic
def candidate_update(
    *,
    candidate: Candidate,
    actor: User | None,
    tier: str | None = None,
    reason: str | None = None,
    version: str | None = None,
    decided_by_step: str | None = None,
) -> Candidate:
    """Move a candidate between tiers and/or change its reason, version or deciding step.

    Moving to "not applicable for now" without a reason is refused and nothing changes.
    """
    scope_edit_guard(candidate.project_id)
    candidate = (
        Candidate.objects.select_for_update().select_related("solution").get(pk=candidate.pk)
    )
    before = _candidate_state(candidate)
    if tier is not None:
        candidate.tier = tier
    if reason is not None:
        candidate.reason = reason.strip()
    if version is not None:
        candidate.version = version.strip()
    if decided_by_step is not None:
        candidate.decided_by_step = decided_by_step
    candidate.full_clean()
    after = _candidate_state(candidate)
    if after == before:
        return candidate
    candidate.save()
    verb = "candidate.moved" if before["tier"] != after["tier"] else "candidate.updated"
    changed = [k for k in after if after[k] != before[k]]
    event_record(
        project=candidate.project,
        actor=actor,
        verb=verb,
        parts=[candidate_part(candidate)],
        before={k: before[k] for k in changed},
        after={k: after[k] for k in changed},
    )
    return candidate


@transaction.atomic
def candidate_remove(*, candidate: Candidate, actor: User) -> None:
    scope_edit_guard(candidate.project_id)
    event_record(
        project=candidate.project,
        actor=actor,
        verb="candidate.removed",
        parts=[candidate_part(candidate)],
        before=_candidate_state(candidate),
    )
    try:
        with transaction.atomic():
            candidate.delete()
    except ProtectedError:
        raise ValidationError(
            _(
                "This candidate has recorded PoC results, which are never deleted. "
                "Move it to “not applicable for now” with a reason instead."
            )
        ) from None
