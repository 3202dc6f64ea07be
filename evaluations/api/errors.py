"""API errors as JSON with a `detail`; Django's 404 and 403 keep their meaning."""

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is not None and response.status_code == 429:
        wait = getattr(exc, "wait", None)
        if wait is not None:
            response["Retry-After"] = str(max(1, int(wait + 0.999)))
    return response
