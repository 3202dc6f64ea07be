"""Responses kept for Idempotency-Key replays, and their pruning."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from evaluations.models import IdempotencyRecord


def idempotency_records_prune(*, now: datetime | None = None) -> int:
    """Forget the responses kept for Idempotency-Key replays once IDEMPOTENCY_KEEP_HOURS have
    passed (a retry comes within minutes; the table must not grow with every CI post). A key
    sent again after that is a new request. Returns how many were removed."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.IDEMPOTENCY_KEEP_HOURS)
    removed, _by_model = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return removed


class KeyReused(Exception):
    """The Idempotency-Key was used before for a different request."""


def idempotency_claim(*, scope: str, key: str, request_hash: str) -> tuple[IdempotencyRecord, bool]:
    """The key's row for this caller: made now (True), or an earlier request's (False), whose
    stored answer is to be replayed. Call it inside the transaction that runs the request:
    concurrent duplicates wait on the row until the first one commits or rolls back. Raises
    KeyReused when the earlier request under the key was another one."""
    record, created = IdempotencyRecord.objects.get_or_create(
        scope=scope, key=key, defaults={"request_hash": request_hash}
    )
    if not created and record.request_hash != request_hash:
        raise KeyReused
    return record, created


def idempotency_answer(*, record: IdempotencyRecord, status_code: int, response: object) -> None:
    """Keep the final answer of the request that claimed the key, for its replays."""
    record.status_code = status_code
    record.response = response
    record.save(update_fields=["status_code", "response"])
