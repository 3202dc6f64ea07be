"""Responses kept for Idempotency-Key replays, and their pruning."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from poc.models import IdempotencyRecord


def idempotency_records_prune(*, now: datetime | None = None) -> int:
    """Forget the responses kept for Idempotency-Key replays once IDEMPOTENCY_KEEP_HOURS have
    passed (a retry comes within minutes; the table must not grow with every CI post). A key
    sent again after that is a new request. Returns how many were removed."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.IDEMPOTENCY_KEEP_HOURS)
    removed, _by_model = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return removed
