"""Claims about the combinations a candidate must run on: a vendor's document, a failure seen
outside the probes, or an open question. "Verified" is never typed: it is read from probe runs
(poc/probes/combinations.py). Every claim is kept; the matrix shows the strongest."""

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.history_labels import candidate_part, text_part
from evaluations.models import Candidate
from evaluations.services import event_record, scope_edit_guard
from poc.probes.combinations import FIELDS, observed
from poc.probes.models import ProbeRun
from reports.procurement.models import Combination, CompatibilityClaim, Support
from reports.procurement.services.terms import close_chase
from workbench.people import stored_user

MAX_PART = 120
MAX_REFERENCE = 300
MAX_NOTE = 2000


@dataclass(frozen=True)
class Stack:
    gpu_model: str = ""
    driver: str = ""
    cuda: str = ""
    runtime: str = ""
    platform: str = ""
    scheduler: str = ""


def _parts(stack: Stack) -> dict[str, str]:
    parts = {name: str(getattr(stack, name) or "").strip() for name in FIELDS}
    long = [name for name, value in parts.items() if len(value) > MAX_PART]
    if long:
        raise ValidationError(
            _("%(parts)s: at most %(max)s characters each.")
            % {"parts": ", ".join(long), "max": MAX_PART}
        )
    if not any(parts.values()):
        raise ValidationError(
            _("Name at least one part of the combination (GPU model, driver, CUDA, …).")
        )
    return parts


@transaction.atomic
def compatibility_claim(
    *,
    candidate: Candidate,
    stack: Stack,
    status: str,
    reference: str = "",
    note: str = "",
    actor: User | None,
) -> CompatibilityClaim:
    """Record a claim about one combination of `candidate` (made on its first claim)."""
    parts = _parts(stack)
    reference, note = reference.strip(), note.strip()
    if status == Support.VERIFIED:
        raise ValidationError(
            _(
                "Verified comes only from a probe run on the candidate's cluster; record a "
                "vendor claim, a failure or an open question."
            )
        )
    if status not in Support.values:
        raise ValidationError(
            _("%(status)s is not a status (vendor, failed or tbc).") % {"status": status}
        )
    if len(reference) > MAX_REFERENCE or len(note) > MAX_NOTE:
        raise ValidationError(
            _("A reference has at most %(ref)s characters, a note %(note)s.")
            % {"ref": MAX_REFERENCE, "note": MAX_NOTE}
        )
    if status == Support.VENDOR and not reference:
        raise ValidationError(_("A vendor claim needs the document it is made in."))
    if status == Support.FAILED and not (reference or note):
        raise ValidationError(_("Say how it failed, or where that is recorded."))
    scope_edit_guard(candidate.project_id)
    combination = Combination.objects.filter(candidate=candidate, **parts).first()
    if combination is None:
        combination = Combination.objects.create(
            project_id=candidate.project_id,
            candidate=candidate,
            **parts,  # type: ignore[arg-type]
        )
    claim = CompatibilityClaim.objects.create(
        combination=combination,
        status=status,
        reference=reference,
        note=note,
        recorded_by=stored_user(actor),
    )
    if status != Support.TBC:  # the question is answered: its chase closes with the answer
        close_chase(
            candidate,
            f"combo:{combination.pk}",
            f"{Support(status).label}: {reference or note}",
            stored_user(actor),
            timezone.now(),
        )
    event_record(
        project=candidate.project,
        actor=actor,
        verb="compatibility.claimed",
        parts=[candidate_part(candidate), text_part(str(combination))],
        after={"status": status, "reference": reference},
    )
    return claim


# A run in these states read its nodes; one that failed or was cancelled answers nothing.
ANSWERING_RUNS = ("done", "partial")


def chases_answered_by_run(*, run: ProbeRun, actor: User | None, **_signal: Any) -> int:
    """Close the chase of every combination of the run's candidate that the run saw (verified
    or failed): the run is the reference that answered it. Connected to
    poc.probes.recording.run_stored; returns how many chases it closed."""
    if run.candidate_id is None or run.status not in ANSWERING_RUNS:
        return 0
    seen = {o.key: o for o in observed(run)}
    if not seen:
        return 0
    subjects = {}
    for combination in Combination.objects.filter(candidate_id=run.candidate_id):
        found = seen.get(tuple(getattr(combination, name) for name in FIELDS))
        if found is not None:
            status = Support.FAILED if found.failed else Support.VERIFIED
            subjects[f"combo:{combination.pk}"] = _("%(status)s: probe run %(id)s") % {
                "status": Support(status).label,
                "id": run.pk,
            }
    if not subjects:
        return 0
    closed = 0
    now = timezone.now()
    for subject, reference in subjects.items():
        closed += close_chase(run.candidate, subject, reference, stored_user(actor), now)
    return closed
