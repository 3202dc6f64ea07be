"""Every write about a revision frozen before the review was ready: a member's
acknowledgement of its gaps, with the reason every signer then reads."""

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.models import Membership, TeamRole
from evaluations.services import event_record
from reports.models import Sheet, SheetStatus

CLOSED = (SheetStatus.SEALING, SheetStatus.SEALED, SheetStatus.WITHDRAWN)


@transaction.atomic
def sheet_acknowledge(*, sheet: Sheet, user: User, reason: str) -> Sheet:
    """A project member (not an observer) acknowledges what the revision lacked, with a
    reason. Refused: no reason, a revision that lacked nothing or was acknowledged already, one
    that is being sealed, sealed or withdrawn."""
    locked = (
        Sheet.objects.select_for_update(of=("self",)).select_related("project").get(pk=sheet.pk)
    )
    member = (
        Membership.objects.filter(project=locked.project, user=user)
        .exclude(role=TeamRole.OBSERVER)
        .exists()
    )
    if not member:
        raise PermissionDenied(_("Only a member of this project who may edit it can do this."))
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": _("Say why the revision goes to sign-off as it is.")})
    if not locked.gaps:
        raise ValidationError(_("This revision lacked nothing: there is nothing to acknowledge."))
    if locked.gaps_acknowledged_at is not None:
        raise ValidationError(_("The gaps of this revision were acknowledged already."))
    if locked.status in CLOSED:
        raise ValidationError(
            _("This revision is closed (%(status)s).") % {"status": locked.get_status_display()}
        )
    Sheet.objects.filter(pk=locked.pk).update(
        gaps_reason=reason[:2000], gaps_acknowledged_by=user, gaps_acknowledged_at=timezone.now()
    )
    event_record(
        project=locked.project,
        actor=user,
        verb="sheet.gaps_acknowledged",
        subject=f"r{locked.revision}",
        after={"gaps": len(locked.gaps), "reason": reason[:2000]},
    )
    return Sheet.objects.select_related("project", "gaps_acknowledged_by").get(pk=locked.pk)
