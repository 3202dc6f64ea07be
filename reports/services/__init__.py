"""Every write to procurement sheets: generation, rendering, sign-off and sealing."""

import hashlib
import logging
from collections.abc import Callable

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import F, Max, Q, QuerySet
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from evaluations.history_labels import choice_part, phrase_part, revision_part
from evaluations.models import ApiToken, Membership, Project
from evaluations.selectors import audit_head
from evaluations.services import event_record
from reports import rendering, signing
from reports.decision import readiness
from reports.models import (
    WITHDRAWABLE_STATUSES,
    Decision,
    Layout,
    Sheet,
    SheetStatus,
    SignOff,
)
from reports.render_caps import TooManyRenders, render_room_check
from reports.selectors import (
    STUCK_AFTER,
    open_revision,
    sheet_candidates,
    sheet_generators,
    sheet_is_stale,
    sheet_missing,
    sheet_work_is_stuck,
    signer_refusal,
)
from reports.services import notices
from reports.services.acknowledgements import sheet_acknowledge
from reports.services.phases import project_phase_refresh, project_phases_refresh
from reports.snapshot import snapshot_with_fingerprint
from workbench.queue import send
from workbench.storage import files_removed_on_failure

log = logging.getLogger(__name__)
LANGUAGES = ("en", "zh-hans")
SHEET_RENDER_TASK = "reports.tasks.sheet_render_task"
SHEET_SEAL_TASK = "reports.tasks.sheet_seal_task"
MAX_PENDING_RENDERS = 3  # per project: more waits until the worker has caught up


@transaction.atomic
def sheet_generate(
    *,
    project: Project,
    language: str,
    actor: User | None,
    candidate_slugs: list[str] | None = None,
    token: ApiToken | None = None,
    layout: str = Layout.DECISION,
    acknowledgement: str = "",
) -> Sheet:
    """Freeze the project now as a new revision and queue its PDF. `token`: the CI token that
    asked for it (its creator then counts as the generator). `layout`: the decision document,
    or every result printed (the full record is attached to the PDF either way). A review that
    is not ready (reports.decision.readiness) is frozen with its gaps: a person generating it
    says why in `acknowledgement` (refused without); a token's revision waits for a member's
    acknowledgement (reports.services.acknowledgements) before anyone approves it."""
    if language not in LANGUAGES:
        raise ValidationError({"language": _("Choose en or zh-hans.")})
    if layout not in Layout.values:
        raise ValidationError({"layout": _("Choose decision or full.")})
    known = set(project.candidates.values_list("slug", flat=True))
    unknown = sorted(set(candidate_slugs or []) - known)
    if unknown:
        raise ValidationError(
            {"candidates": _("Unknown candidates: %(slugs)s.") % {"slugs": ", ".join(unknown)}}
        )
    locked = Project.objects.select_for_update(no_key=True).get(
        pk=project.pk
    )  # serialise revisions
    slugs = sheet_candidates(locked, candidate_slugs or [])
    missing = sheet_missing(locked, slugs)
    if missing:
        raise ValidationError(missing)
    render_room_check(project, actor, token, per_project=MAX_PENDING_RENDERS)
    snapshot, text, digest, fingerprint = snapshot_with_fingerprint(
        locked, language=language, candidate_slugs=slugs
    )
    with translation.override(language):
        gaps = readiness(snapshot)
    reason = acknowledgement.strip()
    if gaps and token is None and not reason:
        raise ValidationError(
            {
                "acknowledgement": _(
                    "The review is not ready: %(gaps)s. Say why this revision is generated "
                    "anyway; the reason is printed with the gaps and shown to every signer."
                )
                % {
                    "gaps": "; ".join(gaps[:5])
                    + (_(" and %(n)s more") % {"n": len(gaps) - 5} if len(gaps) > 5 else "")
                }
            }
        )
    acknowledged = bool(gaps and reason)
    revision = (Sheet.objects.filter(project=project).aggregate(m=Max("revision"))["m"] or 0) + 1
    sheet = Sheet.objects.create(
        project=project,
        revision=revision,
        language=language,
        candidate_slugs=slugs,
        layout=layout,
        snapshot=snapshot,
        snapshot_json=text,
        sha256=digest,
        fingerprint=fingerprint,
        required_roles=list(locked.signing_roles),
        one_signer_many_roles=locked.one_signer_many_roles,
        queued_at=timezone.now(),
        generated_by=actor if actor is not None and actor.is_authenticated else None,
        generated_by_token=token,
        gaps=gaps,
        gaps_reason=reason[:2000] if acknowledged else "",
        gaps_acknowledged_by=actor if acknowledged and actor and actor.is_authenticated else None,
        gaps_acknowledged_at=timezone.now() if acknowledged else None,
    )
    freeze_refresh(project_id=project.pk)
    event_record(
        project=project,
        actor=actor,
        verb="sheet.generated",
        parts=[revision_part(revision), choice_part(Sheet, "language", language)],
        after={
            "sha256": digest,
            **({"gaps": len(gaps), "acknowledgement": reason[:2000]} if gaps else {}),
        },
    )
    transaction.on_commit(lambda: _queue_render(sheet.pk))
    return sheet


# Failures that pass: the database connection dropped, storage was briefly unwritable. The
# worker releases its claim and the task retries with backoff; once its tries are spent the
# failure is recorded on the row like any other.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (OperationalError, InterfaceError, OSError)


class TransientSheetError(Exception):
    """Sheet work met a failure that passes; the claim is released for the task's retry."""


def _release_for_retry(
    claim: QuerySet[Sheet], sheet: Sheet, exc: BaseException, **row: object
) -> None:
    """Give the work back to the queue for the task's retry (best effort: if the database is
    the failure, the claim stays and the beat's recovery takes the work up later)."""
    log.warning("sheet %s: %s: %s; the task retries", sheet.pk, type(exc).__name__, exc)
    try:
        claim.update(work_started_at=None, queued_at=timezone.now(), **row)
    except TRANSIENT_ERRORS:
        log.warning("sheet %s: the claim could not be released; recovery will take it", sheet.pk)
    raise TransientSheetError(f"{type(exc).__name__}: {exc}") from exc


def _queue(sheet_id: int, status: str, send: Callable[[], object]) -> bool:
    """Hand a sheet's work to the worker queue after the commit. When the queue cannot be
    reached, the work waits in the sheet's row (marked unsent; the page says so) and the beat
    sends it once the broker answers: a saved decision never turns into an error page, and
    nobody has to press "try again". True when sent."""
    try:
        send()
    except Exception as exc:
        log.warning("could not queue sheet %s work: %s: %s", sheet_id, type(exc).__name__, exc)
        Sheet.objects.filter(pk=sheet_id, status=status).update(unsent=True)
        return False
    Sheet.objects.filter(pk=sheet_id, unsent=True).update(unsent=False)
    return True


def _queue_render(sheet_id: int) -> bool:
    return _queue(sheet_id, SheetStatus.PENDING, lambda: send(SHEET_RENDER_TASK, sheet_id))


def _queue_seal(sheet_id: int) -> bool:
    return _queue(sheet_id, SheetStatus.SEALING, lambda: send(SHEET_SEAL_TASK, sheet_id))


def sheets_resend(*, limit: int = 200) -> list[int]:
    """Send the renders and seals the broker could not take (the beat, each minute). Stops at
    the first that still cannot be sent: the next tick tries again."""
    sent: list[int] = []
    waiting = Sheet.objects.filter(
        unsent=True, status__in=(SheetStatus.PENDING, SheetStatus.SEALING)
    ).order_by("pk")
    for sheet_id, status in waiting.values_list("pk", "status")[:limit]:
        queue = _queue_render if status == SheetStatus.PENDING else _queue_seal
        if not queue(sheet_id):
            break
        sent.append(sheet_id)
    return sent


def _claim(sheet_id: int, *, waiting: str, becomes: str) -> Sheet | None:
    """Take up a sheet's work under a row lock: when it waits for a worker, or when the worker
    that took it was lost. The returned sheet's work_started_at is this worker's claim; a
    worker whose claim was taken over (or reset by a retry) must not write its result."""
    with transaction.atomic():
        current = (
            Sheet.objects.select_for_update(of=("self",))
            .select_related("project")
            .defer("snapshot_json")  # read when the record is made; sealing needs none of it
            .filter(pk=sheet_id)
            .first()
        )
        if current is None:
            return None
        queued = current.status == waiting and current.work_started_at is None
        lost = current.status == becomes and sheet_work_is_stuck(current)
        if not (queued or lost):
            return None
        current.status = becomes
        current.work_started_at = timezone.now()
        current.seal_error = ""  # a new attempt: the last one's failure is history
        current.save(update_fields=["status", "work_started_at", "seal_error"])
        return current


def _holding(sheet: Sheet, status: str) -> QuerySet[Sheet]:
    """The sheet's row, only while this worker's claim on it stands."""
    return Sheet.objects.filter(pk=sheet.pk, status=status, work_started_at=sheet.work_started_at)


def sheet_render(*, sheet_id: int, final_try: bool = True) -> Sheet | None:
    """Render the draft PDF of a sheet (run by the worker); a failure is kept on the row. A
    passing failure (TRANSIENT_ERRORS) raises TransientSheetError instead, with the sheet
    queued again, unless this is the task's final try."""
    sheet = _claim(sheet_id, waiting=SheetStatus.PENDING, becomes=SheetStatus.RENDERING)
    if sheet is None:
        return Sheet.objects.select_related("project").filter(pk=sheet_id).first()
    claim = _holding(sheet, SheetStatus.RENDERING)
    claim.update(progress=10, error="")
    try:
        claim.update(progress=40)
        rendered = rendering.sheet_pdf(sheet)
        with files_removed_on_failure() as stored, transaction.atomic():
            if not claim.select_for_update().exists():
                log.warning("sheet %s: rendering was taken over; result dropped", sheet.pk)
                return Sheet.objects.get(pk=sheet.pk)
            sheet.pdf.save(
                f"{sheet.project.slug}-r{sheet.revision}.pdf",
                ContentFile(rendered.pdf),
                save=False,
            )
            stored.append(sheet.pdf.name or "")
            claim.update(
                pdf=sheet.pdf.name,
                page_count=rendered.pages,
                status=SheetStatus.READY,
                work_started_at=None,
                progress=100,
                rendered_at=timezone.now(),
            )
            notices.notices_for_ready(sheet)
    except TRANSIENT_ERRORS as exc:
        if not final_try:
            _release_for_retry(claim, sheet, exc, status=SheetStatus.PENDING, progress=0)
        _render_failed(claim, sheet, exc)
    except Exception as exc:  # the worker must record why, whatever broke
        _render_failed(claim, sheet, exc)
    return Sheet.objects.get(pk=sheet.pk)


def _render_failed(claim: QuerySet[Sheet], sheet: Sheet, exc: BaseException) -> None:
    log.error("rendering sheet %s failed", sheet.pk, exc_info=exc)
    claim.update(
        status=SheetStatus.FAILED,
        progress=0,
        work_started_at=None,
        error=f"{type(exc).__name__}: {exc}"[:2000],
    )


@transaction.atomic
def signoff_record(
    *, sheet: Sheet, user: User, role: str, decision: str, sheet_sha256: str, comment: str = ""
) -> SignOff:
    """One role's decision on this exact revision. Refused: a role the signer does not hold or
    was granted after the revision, a second role for one person (unless the revision allows
    it), a second decision by a role, a rejection without a comment, a decision naming another
    revision's hash, a generator (or the creator of the token that generated it) approving alone."""
    sheet = (
        Sheet.objects.select_for_update(of=("self",))
        .select_related("project", "generated_by_token")
        .get(pk=sheet.pk)
    )
    if not Membership.objects.filter(project=sheet.project, user=user, role=role).exists():
        raise PermissionDenied(
            _("You do not hold the %(role)s role in this project.") % {"role": role}
        )
    if role not in sheet.required_roles:
        raise ValidationError(_("The %(role)s role does not sign this sheet.") % {"role": role})
    if decision not in Decision.values:
        raise ValidationError(_("Decide approve or reject."))
    if sheet_sha256 != sheet.sha256:
        raise ValidationError(_("This decision names another revision: reload the sheet."))
    if sheet.status != SheetStatus.READY:
        raise ValidationError(
            _("This revision is not open for sign-off (%(status)s).")
            % {"status": sheet.get_status_display()}
        )
    # An outdated revision is still signed for what it froze: the signer was shown what changed
    # since, and the decision records that it came after those changes.
    after_changes = sheet_is_stale(sheet)
    if decision == Decision.REJECT and not comment.strip():
        raise ValidationError(_("A rejection needs a comment saying why."))
    if decision == Decision.APPROVE and sheet.gaps_open:
        raise ValidationError(
            _(
                "This revision was generated before the review was ready and nobody has "
                "acknowledged its gaps yet: a project member must do so, with a reason, before "
                "anyone approves it."
            )
        )
    refusal = signer_refusal(sheet, user, role)
    if refusal is not None:
        raise ValidationError(refusal)
    approvals = {s.role: s.user_id for s in sheet.signoffs.filter(decision=Decision.APPROVE)}
    if decision == Decision.APPROVE:
        after = {**approvals, role: user.pk}
        complete = all(r in after for r in sheet.required_roles)
        if complete and any(set(after.values()) == {g} for g in sheet_generators(sheet)):
            raise ValidationError(
                _(
                    "Separation of duties: the person who generated this "
                    "revision cannot be its only approver."
                )
            )
    try:
        with transaction.atomic():
            signoff = SignOff.objects.create(
                sheet=sheet,
                role=role,
                user=user,
                decision=decision,
                comment=comment.strip(),
                sheet_sha256=sheet.sha256,
                after_changes=after_changes,
            )
    except IntegrityError:
        raise ValidationError(
            _("The %(role)s role has already decided on this revision.") % {"role": role}
        ) from None
    event_record(
        project=sheet.project,
        actor=user,
        verb=f"sheet.{decision}",
        parts=[revision_part(sheet.revision), choice_part(SignOff, "role", role)],
        after={"comment": signoff.comment, "after_changes": after_changes},
    )
    if decision == Decision.REJECT:
        freeze_refresh(project_id=sheet.project_id)  # a rejected revision holds no freeze
        if not sheet.signoffs.filter(decision=Decision.REJECT).exclude(pk=signoff.pk).exists():
            notices.notices_for_rejection(sheet, signoff)  # the first rejection closes it
    if decision == Decision.APPROVE and all(
        r in {**approvals, role: user.pk} for r in sheet.required_roles
    ):
        # Every role approved: no more decisions, the worker seals it.
        Sheet.objects.filter(pk=sheet.pk).update(
            status=SheetStatus.SEALING, seal_error="", queued_at=timezone.now()
        )
        transaction.on_commit(lambda: _queue_seal(sheet.pk))
    return signoff


def sheet_seal(*, sheet_id: int, final_try: bool = True) -> Sheet | None:
    """Put the sign-off page into the draft and sign the whole file (run by the worker). A
    failure is kept on the sheet (seal_error) and the sheet stays approved, to be sealed again;
    a passing failure raises TransientSheetError for the task's retry, as for rendering."""
    sheet = _claim(sheet_id, waiting=SheetStatus.SEALING, becomes=SheetStatus.SEALING)
    if sheet is None:
        return Sheet.objects.select_related("project").filter(pk=sheet_id).first()
    claim = _holding(sheet, SheetStatus.SEALING)
    try:
        sealed = _sealed_pdf(sheet)
        with files_removed_on_failure() as stored, transaction.atomic():
            if not claim.select_for_update().exists():
                log.warning("sheet %s: sealing was taken over; result dropped", sheet.pk)
                return Sheet.objects.get(pk=sheet.pk)
            sheet.sealed_pdf.save(
                f"{sheet.project.slug}-r{sheet.revision}-signed.pdf",
                ContentFile(sealed),
                save=False,
            )
            stored.append(sheet.sealed_pdf.name or "")
            digest = hashlib.sha256(sealed).hexdigest()
            claim.update(
                sealed_pdf=sheet.sealed_pdf.name,
                sealed_sha256=digest,
                audit_seq=sheet.audit_seq,
                audit_hash=sheet.audit_hash,
                status=SheetStatus.SEALED,
                seal_error="",
                work_started_at=None,
                sealed_at=timezone.now(),
            )
            freeze_refresh(project_id=sheet.project_id)
            notices.notices_for_seal(sheet)
            event_record(
                project=sheet.project,
                actor=None,
                verb="sheet.sealed",
                subject=f"r{sheet.revision}",
                after={"sha256": digest, "history_entry": sheet.audit_seq},
            )
    except Exception as exc:  # whatever broke, the page must say why and offer a retry
        if isinstance(exc, TRANSIENT_ERRORS) and not final_try:
            _release_for_retry(claim, sheet, exc)
        log.exception("sealing sheet %s failed", sheet.pk)
        claim.update(seal_error=f"{type(exc).__name__}: {exc}"[:2000], work_started_at=None)
    return Sheet.objects.get(pk=sheet.pk)


def _sealed_pdf(sheet: Sheet) -> bytes:
    signoffs = list(sheet.signoffs.select_related("user"))
    approved = {s.role for s in signoffs if s.decision == Decision.APPROVE}
    missing = [r for r in sheet.required_roles if r not in approved]
    if missing:
        raise ValueError(_("not approved by %(roles)s") % {"roles": ", ".join(missing)})
    identity = signing.signing_identity()
    head = audit_head(sheet.project)  # printed on the sign-off page: the history's anchor
    sheet.audit_seq, sheet.audit_hash = (head.seq, head.hash) if head else (None, "")

    def pdf(*, signoff_only: bool) -> rendering.Rendered:
        return rendering.sheet_pdf(
            sheet,
            signoffs=signoffs,
            signer_subject=identity.subject,
            self_signed=identity.self_signed,
            signoff_only=signoff_only,
            total_pages=sheet.page_count,
        )

    # Usually only the sign-off page is rendered, in place of the draft's placeholder page.
    # When long comments make it run over one page, every page number after it changes, so
    # the whole sheet is rendered again with the decisions in it.
    signoff_page = pdf(signoff_only=True)
    if signoff_page.pages == 1:
        with sheet.pdf.open("rb") as handle:
            final = rendering.replace_last_page(handle.read(), signoff_page.pdf)
    else:
        final = pdf(signoff_only=False).pdf
    return signing.sign_pdf(
        final, identity, reason=f"{sheet.project.slug} r{sheet.revision} approved"
    )


@transaction.atomic
def sheet_retry(*, sheet: Sheet, actor: User | None) -> str:
    """Queue again whatever a sheet is stuck on: rendering that failed or whose message or
    worker was lost, or a seal that failed or was lost. Returns what was queued ("render",
    "seal" or "")."""
    sheet = Sheet.objects.select_for_update(of=("self",)).select_related("project").get(pk=sheet.pk)
    stuck = sheet_work_is_stuck(sheet)
    now = timezone.now()
    if sheet.status == SheetStatus.FAILED or (
        sheet.status in (SheetStatus.PENDING, SheetStatus.RENDERING) and stuck
    ):
        Sheet.objects.filter(pk=sheet.pk).update(
            status=SheetStatus.PENDING, error="", queued_at=now, work_started_at=None, progress=0
        )
        what = "render"
        transaction.on_commit(lambda: _queue_render(sheet.pk))
    elif sheet.status == SheetStatus.SEALING and (sheet.seal_error or stuck):
        Sheet.objects.filter(pk=sheet.pk).update(seal_error="", queued_at=now, work_started_at=None)
        what = "seal"
        transaction.on_commit(lambda: _queue_seal(sheet.pk))
    else:
        return ""
    event_record(
        project=sheet.project,
        actor=actor,
        verb=f"sheet.retry_{what}",
        subject=f"r{sheet.revision}",
    )
    return what


MAX_RECOVERIES = 3


def sheets_recover_stuck(*, limit: int = 50) -> int:
    """Queue again the work of revisions whose message or worker was lost (what the page's
    "Try again" does, done by the beat task so nobody has to notice). A revision is taken up
    at most MAX_RECOVERIES times; after that it waits for a person, who sees why on its page.
    Failed renders and failed seals are not retried here: they failed for a reason."""
    cutoff = timezone.now() - STUCK_AFTER
    suspects = (
        Sheet.objects.filter(
            status__in=(SheetStatus.PENDING, SheetStatus.RENDERING, SheetStatus.SEALING),
            recoveries__lt=MAX_RECOVERIES,
            seal_error="",
            unsent=False,  # not lost: waiting for the broker (sheets_resend)
        )
        .filter(Q(work_started_at__lt=cutoff) | Q(work_started_at=None, queued_at__lt=cutoff))
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    taken = 0
    for pk in list(suspects):
        with transaction.atomic():
            sheet = Sheet.objects.select_for_update(of=("self",)).filter(pk=pk).first()
            if sheet is None or not sheet_work_is_stuck(sheet):
                continue
            if sheet_retry(sheet=sheet, actor=None):
                Sheet.objects.filter(pk=pk).update(recoveries=F("recoveries") + 1)
                taken += 1
    return taken


def freeze_refresh(*, project_id: int) -> None:
    """Point the project's freeze at its open revision (or at none). Called whenever a
    revision opens or closes, and when a project admin turns the freeze on or off."""
    project = Project.objects.select_for_update(no_key=True).get(pk=project_id)
    held = open_revision(project_id) if project.review_freeze else None
    revision, at = (held.revision, held.created_at) if held is not None else (None, None)
    if (project.frozen_revision, project.frozen_at) != (revision, at):
        Project.objects.filter(pk=project_id).update(frozen_revision=revision, frozen_at=at)


@transaction.atomic
def review_freeze_set(*, project: Project, frozen: bool, actor: User) -> Project:
    """Freeze for sign-off (project admins): while a revision is open, edits to what it froze
    are refused until it is sealed, rejected or withdrawn."""
    locked = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    if locked.review_freeze != frozen:
        Project.objects.filter(pk=project.pk).update(review_freeze=frozen)
        event_record(
            project=locked,
            actor=actor,
            verb="project.review_freeze",
            parts=[phrase_part("review.frozen" if frozen else "review.lifted")],
            before={"review_freeze": locked.review_freeze},
            after={"review_freeze": frozen},
        )
    freeze_refresh(project_id=project.pk)
    return Project.objects.get(pk=project.pk)


@transaction.atomic
def sheet_withdraw(*, sheet: Sheet, actor: User, reason: str) -> Sheet:
    """Take an open revision out of sign-off (a project admin or whoever generated it): no
    more decisions, and it holds the freeze no longer. Decisions already made are kept."""
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": _("Say why the revision is withdrawn.")})
    locked = Sheet.objects.select_for_update(of=("self",)).get(pk=sheet.pk)
    if locked.status not in WITHDRAWABLE_STATUSES:
        raise ValidationError(
            _("This revision cannot be withdrawn (%(status)s).")
            % {"status": locked.get_status_display()}
        )
    Sheet.objects.filter(pk=sheet.pk).update(
        status=SheetStatus.WITHDRAWN, withdrawn_reason=reason[:2000], work_started_at=None
    )
    freeze_refresh(project_id=locked.project_id)
    event_record(
        project=sheet.project,
        actor=actor,
        verb="sheet.withdrawn",
        subject=f"r{locked.revision}",
        after={"reason": reason[:2000]},
    )
    return Sheet.objects.select_related("project").get(pk=sheet.pk)


__all__ = [
    "TooManyRenders",
    "sheets_recover_stuck",
    "freeze_refresh",
    "review_freeze_set",
    "sheet_withdraw",
    "sheet_generate",
    "sheet_is_stale",
    "sheet_render",
    "sheet_retry",
    "sheet_seal",
    "signoff_record",
    "project_phase_refresh",
    "sheet_acknowledge",
    "project_phases_refresh",
]
