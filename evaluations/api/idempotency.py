"""Safe retries: the same Idempotency-Key with the same request replays the first response."""

import hashlib
from collections.abc import Callable

from django.db import transaction
from rest_framework.request import Request
from rest_framework.response import Response

from evaluations.api.access import request_token
from evaluations.services.idempotency import KeyReused, idempotency_answer, idempotency_claim

MAX_KEY_LENGTH = 200


class _Rollback(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


def idempotent(request: Request, fingerprint: bytes, handler: Callable[[], Response]) -> Response:
    """Run `handler` once per (caller, Idempotency-Key). Concurrent duplicates wait on the
    key's row, then replay the stored response; a different request under the same key is 422.
    """
    key = request.headers.get("Idempotency-Key", "").strip()
    if not key:
        return handler()
    if len(key) > MAX_KEY_LENGTH:
        return Response({"detail": f"Idempotency-Key is longer than {MAX_KEY_LENGTH}"}, status=400)
    token = request_token(request)
    scope = f"token:{token.pk}" if token else f"user:{request.user.pk}"
    digest = hashlib.sha256((request.method or "").encode() + request.path.encode() + b"\n")
    digest.update(request.META.get("QUERY_STRING", "").encode() + b"\n" + fingerprint)
    request_hash = digest.hexdigest()
    try:
        with transaction.atomic():
            try:
                record, created = idempotency_claim(scope=scope, key=key, request_hash=request_hash)
            except KeyReused:
                return Response(
                    {"detail": "this Idempotency-Key was used for a different request"},
                    status=422,
                )
            if not created:
                return Response(
                    record.response,
                    status=record.status_code,
                    headers={"Idempotent-Replayed": "true"},
                )
            response = handler()
            if response.status_code >= 500 or response.status_code == 429:
                raise _Rollback(response)  # not a final answer: let a retry run again
            idempotency_answer(
                record=record, status_code=response.status_code, response=response.data
            )
            return response
    except _Rollback as rollback:
        return rollback.response
