"""E-mail notices about revisions: who hears of what, written with the event, sent by a worker.

- a revision is ready: each member holding a role that signs it is asked for a decision;
- a revision is rejected: whoever generated it, the other signers and the signing roles;
- a revision is sealed: the same people;
- an open revision has become outdated (found by the beat task): those who have not decided;
- a sealed decision is due for review (its review-by date came, or the workbench saw something
  that reopens it: reports.review): whoever generated it, its signers and the signing roles.

Notices are rows (`Notice`) written in the transaction of the event, one per person, kind and
role, never twice. `notices_send` delivers them in each person's language and records failures;
a person who turned e-mail off gets none.
"""

import logging
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from evaluations.models import Membership, TeamRole
from reports.models import Decision, Notice, NoticeKind, Sheet, SheetStatus, SignOff
from reports.review import decision_review, latest_sealed
from reports.selectors import sheet_generators, sheet_is_stale
from workbench.models import UserPreference
from workbench.queue import send

NOTICES_TASK = "reports.tasks.notices_task"

log = logging.getLogger(__name__)

MAX_ATTEMPTS = Notice.MAX_ATTEMPTS
SEND_BATCH = 200
SCAN_BATCH = 50


def _muted() -> set[int]:
    return set(
        UserPreference.objects.filter(email_notifications=False).values_list("user_id", flat=True)
    )


def _holders(sheet: Sheet) -> list[tuple[int, str]]:
    """(user id, role) for each active member holding a role this revision needs."""
    return list(
        Membership.objects.filter(
            project_id=sheet.project_id, role__in=sheet.required_roles, user__is_active=True
        ).values_list("user_id", "role")
    )


def _write(sheet: Sheet, kind: str, recipients: Iterable[tuple[int, str]]) -> int:
    muted = _muted()
    rows = [
        Notice(sheet=sheet, recipient_id=user_id, kind=kind, role=role)
        for user_id, role in dict.fromkeys(recipients)
        if user_id not in muted
    ]
    Notice.objects.bulk_create(rows, ignore_conflicts=True)
    if rows:
        transaction.on_commit(_kick)
    return len(rows)


def _everyone(sheet: Sheet, *, but: int | None = None) -> list[tuple[int, str]]:
    """Generators, signers and the holders of the signing roles, once each."""
    people = set(sheet_generators(sheet))
    people |= set(SignOff.objects.filter(sheet=sheet).values_list("user_id", flat=True))
    people |= {user_id for user_id, _role in _holders(sheet)}
    active = set(User.objects.filter(pk__in=people, is_active=True).values_list("pk", flat=True))
    return [(user_id, "") for user_id in sorted(active) if user_id != but]


def notices_for_ready(sheet: Sheet) -> int:
    return _write(sheet, NoticeKind.AWAITING, _holders(sheet))


def notices_for_rejection(sheet: Sheet, signoff: SignOff) -> int:
    return _write(sheet, NoticeKind.REJECTED, _everyone(sheet, but=signoff.user_id))


def notices_for_seal(sheet: Sheet) -> int:
    return _write(sheet, NoticeKind.SEALED, _everyone(sheet))


def notices_for_outdated(sheet: Sheet) -> int:
    decided = set(SignOff.objects.filter(sheet=sheet).values_list("user_id", flat=True))
    waiting = [(u, "") for u, _r in _holders(sheet) if u not in decided]
    waiting += [(u, "") for u in sorted(sheet_generators(sheet))]
    return _write(sheet, NoticeKind.OUTDATED, waiting)


def notices_scan_outdated() -> int:
    """Open revisions that have become outdated since they were frozen, noticed once each."""
    rejected = SignOff.objects.filter(sheet=OuterRef("pk"), decision=Decision.REJECT)
    candidates = (
        Sheet.objects.filter(status=SheetStatus.READY, outdated_noticed_at=None)
        .exclude(Exists(rejected))
        .select_related("project", "generated_by_token")
        .order_by("pk")[:SCAN_BATCH]
    )
    found = 0
    for sheet in candidates:
        if not sheet_is_stale(sheet):
            continue
        with transaction.atomic():
            claimed = Sheet.objects.filter(pk=sheet.pk, outdated_noticed_at=None).update(
                outdated_noticed_at=timezone.now()
            )
            if claimed:
                notices_for_outdated(sheet)
                found += 1
    return found


def notices_scan_review() -> int:
    """Each project's latest sealed revision whose decision is due for review, noticed once."""
    sealed = (
        Sheet.objects.filter(status=SheetStatus.SEALED, review_noticed_at=None)
        .defer("snapshot", "snapshot_json")
        .select_related("project")
        .order_by("pk")[:SCAN_BATCH]
    )
    found = 0
    for sheet in sealed:
        latest = latest_sealed(sheet.project)
        if latest is None or latest.pk != sheet.pk:
            # A later revision was sealed: this one is no longer the decision.
            Sheet.objects.filter(pk=sheet.pk).update(review_noticed_at=timezone.now())
            continue
        review = decision_review(sheet.project)
        if review is None or not review.due:
            continue
        with transaction.atomic():
            claimed = Sheet.objects.filter(pk=sheet.pk, review_noticed_at=None).update(
                review_noticed_at=timezone.now()
            )
            if claimed:
                _write(sheet, NoticeKind.REVIEW, _everyone(sheet))
                found += 1
    return found


def _subject(notice: Notice) -> str:
    sheet = notice.sheet
    names = {
        NoticeKind.AWAITING: _("%(project)s r%(revision)s awaits your decision as %(role)s"),
        NoticeKind.REJECTED: _("%(project)s r%(revision)s was rejected"),
        NoticeKind.SEALED: _("%(project)s r%(revision)s is signed and sealed"),
        NoticeKind.OUTDATED: _("%(project)s r%(revision)s is outdated: the project changed"),
        NoticeKind.REVIEW: _("%(project)s: the decision sealed in r%(revision)s is due for review"),
    }
    role = str(TeamRole(notice.role).label) if notice.role else ""
    return names[NoticeKind(notice.kind)] % {
        "project": sheet.project.name,
        "revision": sheet.revision,
        "role": role,
    }


def _body(notice: Notice) -> str:
    sheet = notice.sheet
    path = reverse("reports:sheet", kwargs={"slug": sheet.project.slug, "revision": sheet.revision})
    rejections = list(
        SignOff.objects.filter(sheet=sheet, decision=Decision.REJECT).select_related("user")
    )
    return render_to_string(
        "reports/email/notice.txt",
        {
            "notice": notice,
            "sheet": sheet,
            "project": sheet.project,
            "role": TeamRole(notice.role).label if notice.role else "",
            "rejections": [(TeamRole(r.role).label, r) for r in rejections],
            "review": _review_for(notice),
            "url": settings.WORKBENCH_BASE_URL + path,
            "preferences_url": settings.WORKBENCH_BASE_URL + reverse("preferences"),
        },
    )


def _review_for(notice: Notice) -> object:
    if notice.kind != NoticeKind.REVIEW:
        return None
    return decision_review(notice.sheet.project)


def notices_send(*, limit: int = SEND_BATCH) -> int:
    """Deliver pending notices; returns how many were sent. Each is claimed under a row lock
    (skip locked: two workers never send one twice) and sent in its recipient's language."""
    sent = 0
    with transaction.atomic():
        pending = list(
            Notice.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(sent_at=None, attempts__lt=MAX_ATTEMPTS)
            .select_related("sheet__project", "recipient", "recipient__preference")
            .order_by("pk")[:limit]
        )
        for notice in pending:
            sent += _send_one(notice)
    return sent


def _send_one(notice: Notice) -> int:
    person = notice.recipient
    preference = getattr(person, "preference", None)
    if preference is not None and not preference.email_notifications:
        notice.delete()  # turned off after the notice was written
        return 0
    if not person.is_active or not person.email:
        Notice.objects.filter(pk=notice.pk).update(
            attempts=MAX_ATTEMPTS,
            last_error="no e-mail address" if person.is_active else "account deactivated",
        )
        return 0
    language = (preference.language if preference else "") or settings.LANGUAGE_CODE
    try:
        with translation.override(language):
            message = EmailMessage(subject=_subject(notice), body=_body(notice), to=[person.email])
        message.send()
    except Exception as exc:  # noqa: BLE001 - any failure is kept on the row and retried
        log.warning("notice %s to %s not sent: %s", notice.pk, person.pk, exc)
        Notice.objects.filter(pk=notice.pk).update(
            attempts=notice.attempts + 1, last_error=f"{type(exc).__name__}: {exc}"[:1000]
        )
        return 0
    Notice.objects.filter(pk=notice.pk).update(
        sent_at=timezone.now(), attempts=notice.attempts + 1, last_error=""
    )
    return 1


def _kick() -> None:
    """Ask a worker to send now; the beat task sends what this could not queue."""
    try:
        send(NOTICES_TASK)
    except Exception:  # noqa: BLE001 - the notices wait in their table
        log.warning("could not queue notices; the beat task will send them", exc_info=True)
