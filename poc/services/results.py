"""Results, evidence and responsibilities: the writes behind the browser pages."""

import hashlib
import mimetypes
import re
import unicodedata
from decimal import Decimal
from typing import TypedDict, Unpack

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.base import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext as _

from evaluations.history_labels import action_part, candidate_part, choice_part
from evaluations.models import AcceptanceAction, Candidate
from evaluations.services import event_record
from evaluations.services.freeze import scope_edit_guard
from poc.models import (
    Delivery,
    Evidence,
    EvidenceKind,
    Outcome,
    Responsibility,
    Result,
    ResultCell,
    Source,
)
from poc.services.cells import lock_cells
from workbench.people import stored_user

# --- results -----------------------------------------------------------------------------


@transaction.atomic
def result_record(
    *,
    candidate: Candidate,
    action: AcceptanceAction,
    outcome: str,
    actor: User | None,
    note: str = "",
    failure_cause: str = "",
    integration_what: str = "",
    integration_owner_team: str = "",
    integration_effort_days: Decimal | None = None,
    integration_delivery: str = "",
    integration_delivered_by: str = "",
    change_reason: str = "",
    source: str = Source.MANUAL,
    run_reference: str = "",
) -> Result:
    """Record an outcome for one cell. Nothing is overwritten: a new row is added and the cell
    points at it. Changing a cell's outcome by hand needs a reason, kept in the history."""
    if candidate.project_id != action.project_id:
        raise ValidationError({"action": _("The action belongs to another project.")})
    if outcome not in Outcome.values:
        raise ValidationError(
            {
                "outcome": _("The outcome must be one of: %(values)s.")
                % {"values": ", ".join(Outcome.values)}
            }
        )
    lock_cells([(candidate.pk, action.pk)])  # also when the cell has no row yet
    cell = (
        ResultCell.objects.select_for_update()
        .select_related("result")
        .filter(candidate=candidate, action=action)
        .first()
    )
    previous = cell.result if cell else None
    if (
        source == Source.MANUAL
        and previous is not None
        and previous.outcome != outcome
        and not change_reason.strip()
    ):
        raise ValidationError(
            {
                "change_reason": _("This cell already reads “%(outcome)s”: say why it changes.")
                % {"outcome": previous.get_outcome_display()}
            }
        )
    delivery, delivered_by = carried_delivery(
        outcome, integration_delivery, integration_delivered_by.strip(), previous
    )
    result = Result(
        project_id=candidate.project_id,
        candidate=candidate,
        action=action,
        outcome=outcome,
        integration_delivery=delivery,
        integration_delivered_by=delivered_by[:200],
        failure_cause=failure_cause.strip() if outcome == Outcome.FAILED else "",
        integration_what=integration_what.strip() if outcome == Outcome.NEEDS_INTEGRATION else "",
        integration_owner_team=(
            integration_owner_team if outcome == Outcome.NEEDS_INTEGRATION else ""
        ),
        integration_effort_days=(
            integration_effort_days if outcome == Outcome.NEEDS_INTEGRATION else None
        ),
        note=note.strip(),
        change_reason=change_reason.strip(),
        source=source,
        run_reference=run_reference.strip()[:300],
        previous=previous,
        recorded_by=stored_user(actor),
    )
    result.full_clean()
    result.save()
    if cell is None:
        ResultCell.objects.create(
            project_id=candidate.project_id,
            candidate=candidate,
            action=action,
            result=result,
            outcome=outcome,
            integration_effort_days=result.integration_effort_days,
        )
    else:
        ResultCell.objects.filter(pk=cell.pk).update(
            result=result,
            outcome=outcome,
            integration_effort_days=result.integration_effort_days,
            result_count=F("result_count") + 1,
        )
    event_record(
        project=candidate.project,
        actor=actor,
        verb="result.recorded",
        parts=[candidate_part(candidate), action_part(action)],
        before={"outcome": previous.outcome} if previous else None,
        after={
            "outcome": outcome,
            **({"reason": result.change_reason} if result.change_reason else {}),
        },
    )
    return result


def carried_delivery(
    outcome: str, delivery: str, delivered_by: str, previous: Result | None
) -> tuple[str, str]:
    """Who delivers an integration need: as given, or else as the cell's previous result said
    when it needed integration too. Only a needs-integration result has one."""
    if outcome != Outcome.NEEDS_INTEGRATION:
        return "", ""
    if delivery and delivery not in Delivery.values:
        raise ValidationError(
            {
                "integration_delivery": _("%(value)s is not a kind of delivery (one of %(all)s).")
                % {"value": delivery, "all": ", ".join(Delivery.values)}
            }
        )
    given = delivery or delivered_by
    if not given and previous is not None and previous.outcome == Outcome.NEEDS_INTEGRATION:
        return previous.integration_delivery, previous.integration_delivered_by
    return delivery, delivered_by


# --- evidence ----------------------------------------------------------------------------

CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
SIGNATURES = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
)


def sanitize_filename(name: str) -> str:
    """The last path part, without control characters, at most 200 characters."""
    name = unicodedata.normalize("NFC", name or "")
    name = re.split(r"[\\/]", name)[-1]
    name = CONTROL_CHARACTERS.sub("", name).strip().lstrip(".")
    return name[:200] or "evidence"


def detect_content_type(head: bytes, name: str) -> str:
    for signature, content_type in SIGNATURES:
        if head.startswith(signature):
            return content_type
    lowered = head.lstrip()[:100].lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<script" in lowered:
        return "text/html"
    if lowered.startswith(b"<svg") or (lowered.startswith(b"<?xml") and b"<svg" in head.lower()):
        return "image/svg+xml"
    try:
        head.decode("utf-8")
        is_text = b"\x00" not in head
    except UnicodeDecodeError:
        # A multi-byte character cut at the end of the sample still counts as text.
        is_text = b"\x00" not in head and len(head) >= 4096
    if is_text:
        guessed = mimetypes.guess_type(name)[0]
        if guessed and (
            guessed.startswith("text/")
            or guessed in ("application/json", "application/yaml", "application/xml")
        ):
            return guessed
        return "text/plain"
    return "application/octet-stream"


def _bump_evidence_count(result: Result) -> None:
    ResultCell.objects.filter(
        candidate_id=result.candidate_id, action_id=result.action_id, result=result
    ).update(evidence_count=F("evidence_count") + 1)


def evidence_attach_file(*, result: Result, upload: File, actor: User | None) -> Evidence:
    """Store a file against a result. Over the size limit or empty: an error, nothing stored."""
    limit = settings.EVIDENCE_MAX_BYTES
    size = upload.size or 0
    if size == 0:
        raise ValidationError({"file": _("The file is empty.")})
    if size > limit:
        raise ValidationError(
            {
                "file": _("The file is %(size)s MB; the limit is %(limit)s MB.")
                % {"size": round(size / 1_048_576, 1), "limit": round(limit / 1_048_576, 1)}
            }
        )
    digest = hashlib.sha256()
    head = b""
    for chunk in upload.chunks():
        if len(head) < 4096:
            head += chunk[: 4096 - len(head)]
        digest.update(chunk)
    upload.seek(0)
    name = sanitize_filename(getattr(upload, "name", "") or "")
    evidence = Evidence(
        project_id=result.project_id,
        result=result,
        kind=EvidenceKind.FILE,
        name=name,
        sha256=digest.hexdigest(),
        size=size,
        content_type=detect_content_type(head, name),
        uploaded_by=stored_user(actor),
    )
    stored_name = evidence_storage_name(evidence)
    created_file = False
    if not default_storage.exists(stored_name):
        stored_name = default_storage.save(stored_name, upload)
        created_file = True
    evidence.file.name = stored_name
    try:
        with transaction.atomic():
            evidence.full_clean()
            evidence.save()
            _bump_evidence_count(result)
            event_record(
                project=result.project,
                actor=actor,
                verb="evidence.attached",
                subject=f"{name} ({evidence.sha256[:12]})",
                after={"result": result.pk, "size": size, "content_type": evidence.content_type},
            )
    except Exception:
        if created_file:  # leave no orphan file behind a failed write
            default_storage.delete(stored_name)
        raise
    return evidence


class ResultFields(TypedDict, total=False):
    """What a person records for a cell (result_record's keywords beside candidate, action and
    actor)."""

    outcome: str
    note: str
    failure_cause: str
    integration_what: str
    integration_owner_team: str
    integration_effort_days: Decimal | None
    integration_delivery: str
    integration_delivered_by: str
    change_reason: str


@transaction.atomic
def result_record_with_evidence(
    *,
    candidate: Candidate,
    action: AcceptanceAction,
    actor: User | None,
    evidence_file: File | None = None,
    evidence_url: str = "",
    **fields: Unpack[ResultFields],
) -> Result:
    """Record a result and attach its evidence (a file, or a link) in one step: both are
    stored, or neither (a refused file leaves no result either)."""
    result = result_record(candidate=candidate, action=action, actor=actor, **fields)
    try:
        if evidence_file is not None:
            evidence_attach_file(result=result, upload=evidence_file, actor=actor)
        elif evidence_url:
            evidence_attach_link(result=result, url=evidence_url, name="", actor=actor)
    except ValidationError as exc:
        # Named after the result form's fields, so that the form shows the reason in place.
        errors = exc.message_dict if hasattr(exc, "error_dict") else {"file": exc.messages}
        raise ValidationError(
            {
                ("evidence_file" if name == "file" else "evidence_url"): messages
                for name, messages in errors.items()
            }
        ) from None
    return result


def evidence_storage_name(evidence: Evidence) -> str:
    from poc.models import (
        evidence_upload_to,
    )

    return evidence_upload_to(evidence, evidence.name)


@transaction.atomic
def evidence_attach_link(*, result: Result, url: str, name: str, actor: User | None) -> Evidence:
    evidence = Evidence(
        project_id=result.project_id,
        result=result,
        kind=EvidenceKind.LINK,
        url=url.strip(),
        name=sanitize_filename(name) if name.strip() else url.strip()[:255],
        uploaded_by=stored_user(actor),
    )
    evidence.full_clean()
    if not evidence.url.lower().startswith(("http://", "https://")):
        raise ValidationError({"url": _("Links must start with http:// or https://.")})
    evidence.save()
    _bump_evidence_count(result)
    event_record(
        project=result.project,
        actor=actor,
        verb="evidence.linked",
        subject=evidence.name,
        after={"result": result.pk, "url": evidence.url},
    )
    return evidence


# --- responsibilities ----------------------------------------------------------------------

RESPONSIBILITY_FIELDS = ("party", "delivery", "person", "escalation", "note")


@transaction.atomic
def responsibility_set(
    *,
    candidate: Candidate,
    area: str,
    party: str,
    person: str,
    actor: User | None,
    escalation: str = "",
    note: str = "",
    delivery: str = "",
) -> Responsibility:
    """Assign one area of long-term responsibility for a candidate to a party and a person."""
    scope_edit_guard(candidate.project_id)
    row = Responsibility.objects.select_for_update().filter(candidate=candidate, area=area).first()
    before = {f: getattr(row, f) for f in RESPONSIBILITY_FIELDS} if row else None
    if row is None:
        row = Responsibility(project_id=candidate.project_id, candidate=candidate, area=area)
    row.party, row.person, row.delivery = party, person.strip(), delivery
    row.escalation, row.note = escalation.strip(), note.strip()
    row.full_clean()
    after = {f: getattr(row, f) for f in RESPONSIBILITY_FIELDS}
    if before == after:
        return row
    row.save()
    event_record(
        project=candidate.project,
        actor=actor,
        verb="responsibility.set",
        parts=[candidate_part(candidate), choice_part(row, "area", row.area)],
        before=before,
        after=after,
    )
    return row


@transaction.atomic
def responsibility_clear(*, candidate: Candidate, area: str, actor: User | None) -> None:
    scope_edit_guard(candidate.project_id)
    row = Responsibility.objects.filter(candidate=candidate, area=area).first()
    if row is None:
        return
    event_record(
        project=candidate.project,
        actor=actor,
        verb="responsibility.cleared",
        parts=[candidate_part(candidate), choice_part(row, "area", row.area)],
        before={f: getattr(row, f) for f in RESPONSIBILITY_FIELDS},
    )
    row.delete()
