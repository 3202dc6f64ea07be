from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from poc.api.access import request_token


class CallerRateThrottle(SimpleRateThrottle):
    """One budget per token (CI) or per user (browser); 429 with Retry-After past it."""

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
