import logging
import time
from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from evaluations.api.access import request_token
from workbench.metrics import RATE_LIMITS_UNCHECKED

log = logging.getLogger(__name__)
_last_warned = 0.0
WARN_EVERY = 300  # seconds between two log lines about the same outage


class CallerRateThrottle(SimpleRateThrottle):
    """One budget per token (CI) or per user (browser); 429 with Retry-After past it.

    The counters live in the cache (Redis in production). When the cache cannot be reached,
    requests are let through (results must still be stored), each one counted in the metric
    workbench_rate_limit_unchecked_total, and the outage is logged once every few minutes,
    not once per request."""

    scope = "caller"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        token = request_token(request)
        if token is not None:
            ident = f"token-{token.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception as exc:  # the cache's client raises its own errors (redis, memcached)
            RATE_LIMITS_UNCHECKED.inc()
            _warn(exc)
            return True


def _warn(exc: Exception) -> None:
    global _last_warned
    now = time.monotonic()
    if now - _last_warned >= WARN_EVERY or _last_warned == 0.0:
        _last_warned = now
        log.warning("API rate limits are off: the cache cannot be reached (%s)", exc)
