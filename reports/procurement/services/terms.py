"""Every write of procurement: terms recorded with their basis (append-only, one history entry
per save), and the chase of what is still to be confirmed. Each call is all or nothing and
checks everything before the first write.

An open item closes when its term is recorded on a basis other than "to be confirmed": the
entry's reference (or where it was read) is what closed it."""

from dataclasses import dataclass
from datetime import date, datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.history_labels import candidate_part, words_part
from evaluations.models import Candidate, TeamRole
from evaluations.services import event_record, scope_edit_guard
from reports.procurement.models import Basis, Confirmation, TermEntry
from reports.procurement.selectors.subjects import subject_label
from reports.procurement.terms import Term, clean, term_of
from workbench.people import stored_user
from workbench.typing import JSON

MAX_REFERENCE = 300
MAX_SOURCE = 500
MAX_REASON = 2000


@dataclass(frozen=True)
class TermChange:
    """A term as a form or the API sent it: the raw value (cleaned here) and its basis."""

    key: str
    value: JSON
    basis: str = Basis.TBC
    reference: str = ""
    source: str = ""
    valid_until: date | None = None


def _checked(term: Term, change: TermChange, today: date) -> dict[str, object]:
    value = clean(term, change.value)
    return {"value": value, **basis_fields(str(term.label), value, change, today)}


def basis_fields(label: str, value: object, change: TermChange, today: date) -> dict[str, object]:
    """The basis of a figure or term, checked: a quote has its reference and a valid-until date
    not past, a published figure where it was read; a basis other than "to be confirmed" needs
    the value it states. `label` names the figure in the messages."""
    if change.basis not in Basis.values:
        raise ValidationError(
            _("%(basis)s is not a basis (one of %(choices)s).")
            % {"basis": change.basis, "choices": ", ".join(Basis.values)}
        )
    reference, source = change.reference.strip(), change.source.strip()
    if len(reference) > MAX_REFERENCE or len(source) > MAX_SOURCE:
        raise ValidationError(
            _("%(term)s: a reference has at most %(ref)s characters, a source %(src)s.")
            % {"term": label, "ref": MAX_REFERENCE, "src": MAX_SOURCE}
        )
    if change.basis != Basis.TBC and value is None:
        raise ValidationError(
            _("%(term)s: give the value its basis states, or leave it to be confirmed.")
            % {"term": label}
        )
    if change.basis == Basis.QUOTE:
        if not reference or change.valid_until is None:
            raise ValidationError(
                _("%(term)s: a vendor quote needs its reference and its valid-until date.")
                % {"term": label}
            )
        if change.valid_until < today:
            raise ValidationError(
                _(
                    "%(term)s: the quote expired on %(date)s; record a current quote, or the "
                    "figure as an estimate."
                )
                % {"term": label, "date": change.valid_until.isoformat()}
            )
    elif change.valid_until is not None:
        raise ValidationError(
            _("%(term)s: only a vendor quote has a valid-until date.") % {"term": label}
        )
    if change.basis == Basis.LIST_PRICE and not source:
        raise ValidationError(
            _("%(term)s: say where the public list price was read.") % {"term": label}
        )
    return {
        "basis": change.basis,
        "reference": reference,
        "source": source,
        "valid_until": change.valid_until,
    }


def _same(entry: TermEntry | None, fields: dict[str, object]) -> bool:
    if entry is None:
        return fields["value"] is None and fields["basis"] == Basis.TBC
    return all(getattr(entry, name) == value for name, value in fields.items())


@transaction.atomic
def terms_record(
    *,
    candidate: Candidate,
    changes: list[TermChange],
    actor: User | None,
    reason: str = "",
) -> list[TermEntry]:
    """Record the terms that changed (unchanged ones are skipped); the new entries. Raises
    ValidationError naming the first term that is wrong; nothing is written then."""
    if len(reason) > MAX_REASON:
        raise ValidationError(_("The reason has at most %(max)s characters.") % {"max": MAX_REASON})
    if len({change.key for change in changes}) != len(changes):
        raise ValidationError(_("Each term may be given once."))
    today = timezone.localdate()
    checked = [
        (term_of(change.key), _checked(term_of(change.key), change, today)) for change in changes
    ]
    scope_edit_guard(candidate.project_id)
    Candidate.objects.select_for_update().filter(pk=candidate.pk).first()  # one editor at a time
    current = {
        entry.key: entry
        for entry in TermEntry.objects.filter(
            candidate=candidate, key__in=[c.key for c in changes], current=True
        )
    }
    actor = stored_user(actor)
    now = timezone.now()
    made, before, after = [], {}, {}
    for term, fields in checked:
        previous = current.get(term.key)
        if _same(previous, fields):
            continue
        if previous is not None:
            previous.current = False
            previous.save(update_fields=["current"])
        made.append(
            TermEntry.objects.create(
                project_id=candidate.project_id,
                candidate=candidate,
                key=term.key,
                previous=previous,
                recorded_by=actor,
                recorded_at=now,
                reason=reason.strip(),
                **fields,  # type: ignore[arg-type]
            )
        )
        before[term.key] = _logged(previous)
        after[term.key] = _logged(made[-1])
        if fields["basis"] != Basis.TBC:
            close_chase(candidate, f"term:{term.key}", _closing(made[-1]), actor, now)
    if made:
        event_record(
            project=candidate.project,
            actor=actor,
            verb="terms.changed",
            parts=[candidate_part(candidate)],
            before=before,
            after={**after, **({"reason": reason.strip()} if reason.strip() else {})},
        )
    return made


def _logged(entry: TermEntry | None) -> object:
    if entry is None:
        return None
    logged = {"value": entry.value, "basis": entry.basis}
    if entry.reference:
        logged["reference"] = entry.reference
    if entry.valid_until:
        logged["valid_until"] = entry.valid_until.isoformat()
    return logged


def _closing(entry: TermEntry) -> str:
    label = str(Basis(entry.basis).label)
    detail = entry.reference or entry.source
    return f"{label}: {detail}" if detail else label


def close_chase(
    candidate: Candidate, subject: str, reference: str, actor: User | None, now: datetime
) -> int:
    """Close the open chase of `subject` with what closed it; how many were open (0 or 1)."""
    return Confirmation.objects.filter(candidate=candidate, subject=subject, closed_at=None).update(
        closed_at=now, closing_reference=reference[:MAX_REFERENCE], closed_by=actor, updated_at=now
    )


def _subject_term(subject: str) -> Term:
    kind, _sep, key = subject.partition(":")
    if kind != "term":
        raise ValidationError(
            _("There is nothing to confirm called %(subject)s.") % {"subject": subject}
        )
    term = term_of(key)
    if not term.confirmable:
        raise ValidationError(
            _("%(term)s is a note: it is never to be confirmed.") % {"term": term.label}
        )
    return term


def _open_subject(candidate: Candidate, subject: str, today: date) -> str:
    """What `subject` is, in words, if it is still to be confirmed; else ValidationError."""
    if not subject.startswith("term:"):
        try:
            return subject_label(candidate.project, candidate, subject, today)
        except Http404:
            raise ValidationError(
                _("%(subject)s is not still to be confirmed for this candidate.")
                % {"subject": subject}
            ) from None
    term = _subject_term(subject)
    entry = TermEntry.objects.filter(candidate=candidate, key=term.key, current=True).first()
    if entry is not None and entry.basis != Basis.TBC and not entry.quote_expired(today):
        raise ValidationError(
            _("%(term)s is not to be confirmed: it stands on %(basis)s.")
            % {"term": term.label, "basis": Basis(entry.basis).label}
        )
    return str(term.label)


@transaction.atomic
def confirmation_set(
    *,
    candidate: Candidate,
    subject: str,
    actor: User | None,
    owner_team: str = "",
    owner: User | None = None,
    due: date | None = None,
    request: str = "",
    requested_at: date | None = None,
) -> Confirmation:
    """Who chases an open item, by when, and what was asked (the open row, made if needed).
    The sheet prints it: refused while a revision is frozen for sign-off, as terms are."""
    today = timezone.localdate()
    _open_subject(candidate, subject, today)  # refused unless it is still to be confirmed
    scope_edit_guard(candidate.project_id)
    if owner_team and owner_team not in TeamRole.values:
        raise ValidationError(_("%(team)s is not a team.") % {"team": owner_team})
    if owner is not None and not candidate.project.memberships.filter(user=owner).exists():
        raise ValidationError(_("The owner must be a member of the project."))
    if len(request) > MAX_REASON:
        raise ValidationError(
            _("The request has at most %(max)s characters.") % {"max": MAX_REASON}
        )
    if requested_at is not None and requested_at > today:
        raise ValidationError(_("The request cannot have been sent in the future."))
    row = Confirmation.objects.select_for_update().filter(
        candidate=candidate, subject=subject, closed_at=None
    ).first() or Confirmation(project_id=candidate.project_id, candidate=candidate, subject=subject)
    before = {"owner_team": row.owner_team, "due": row.due, "request": row.request}
    row.owner_team, row.owner, row.due = owner_team, owner, due
    row.request, row.requested_at = request.strip(), requested_at
    row.save()
    event_record(
        project=candidate.project,
        actor=actor,
        verb="confirmation.updated",
        parts=[
            candidate_part(candidate),
            words_part(lambda: _open_subject(candidate, subject, today)),
        ],
        before=before,
        after={"owner_team": row.owner_team, "due": row.due, "request": row.request},
    )
    return row
