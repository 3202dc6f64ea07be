"""Claims about the combinations a candidate must run on: a vendor's document, a failure seen
outside the probes, or an open question. "Verified" is never typed: it is read from probe runs
(poc/probes/combinations.py). Every claim is kept; the matrix shows the strongest."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.models import Candidate
from evaluations.services import event_record, scope_edit_guard
from poc.probes.combinations import FIELDS
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
        subject=f"{candidate.slug} · {combination}",
        after={"status": status, "reference": reference},
    )
    return claim
