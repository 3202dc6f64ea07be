"""Optional request statistics for benchmarks and profiling (WORKBENCH_QUERY_STATS=true).

Adds `Server-Timing: app;dur=<ms>` and `X-Query-Count` to every response. Off by default.
"""

import time
from collections.abc import Callable
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponse


class QueryStatsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        count = 0

        def counter(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        start = time.perf_counter()
        with connections["default"].execute_wrapper(counter):
            response = self.get_response(request)
        response["Server-Timing"] = f"app;dur={(time.perf_counter() - start) * 1000:.1f}"
        response["X-Query-Count"] = str(count)
        return response


# Room for the form fields and multipart boundaries around an upload's file.
FORM_ROOM_BYTES = 1024 * 1024


def body_limit(path: str) -> int:
    """The largest request body the route at `path` accepts, in bytes.

    Each upload route has the limit of what it takes (evidence files, a sheet to verify, a probe
    bundle, a suite file); every other route takes forms or JSON up to the API body limit."""
    from django.conf import settings
    from django.urls import Resolver404, resolve

    try:
        name = resolve(path).view_name
    except Resolver404:
        name = ""
    limits = {
        "poc:evidence_add": settings.EVIDENCE_MAX_BYTES,
        "poc:cell": settings.EVIDENCE_MAX_BYTES,  # a result with its evidence in one step
        "api_evidence_create": settings.EVIDENCE_MAX_BYTES,
        "reports:verify": settings.SHEET_VERIFY_MAX_BYTES,
        "api_sheet_verify": settings.SHEET_VERIFY_MAX_BYTES,
        "evaluations:suite_import": settings.SUITE_IMPORT_MAX_BYTES,
    }
    return limits.get(name, settings.API_MAX_BODY_BYTES) + FORM_ROOM_BYTES


class UploadLimitMiddleware:
    """Refuse a request body larger than its route accepts before a byte of it is read.

    Django reads a form's body when the CSRF check first asks for its fields, writing files to
    disk as it goes; a view's own size check comes after that, so an oversized file would be
    received in full and then refused. This answers 413 from the Content-Length alone (JSON
    under /api/, a short page elsewhere), against the limit of the route asked for (an evidence
    upload of 60 MB is refused before it is read, though a sheet to verify may be 100 MB). A
    body is never read past its Content-Length, so no route receives more than its limit; the
    views still check each file against its own limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from django.http import JsonResponse
        from django.utils.translation import gettext as _

        raw = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw)
        except ValueError:
            length = 0  # the views answer a Content-Length that is not a number
        if length <= FORM_ROOM_BYTES:
            return self.get_response(request)
        limit = body_limit(request.path_info)
        if length <= limit:
            return self.get_response(request)
        megabytes = 1024 * 1024
        message = _("The request is %(size)s MB; this upload is limited to %(limit)s MB.") % {
            "size": -(-length // megabytes),
            "limit": (limit - FORM_ROOM_BYTES) // megabytes,
        }
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=413)
        # No "Connection: close" here: it is a hop-by-hop header, which a WSGI application must
        # not set (runserver's server refuses the response with a 500); each server deals with
        # the body left unread (runserver drains it, gunicorn closes the connection).
        return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


class HealthProbeMiddleware:
    """Answer `/healthz/`, `/readyz/` and `/metrics` before host validation and the HTTPS
    redirect.

    Orchestrators probe a container by its own address over plain HTTP (Kubernetes sends the
    pod IP as the host, compose's health check `127.0.0.1`); those are rightly not in
    ALLOWED_HOSTS and not HTTPS, so the probes would get 400 or 301 and mark a healthy process
    dead. The answers name no host and set no cookie, so serving them to any host is safe. Only
    GET and HEAD: anything else goes through the usual stack (and gets its 405)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            from workbench import views
            from workbench.metrics import metrics_view

            probe = {
                "/healthz/": views.healthz,
                "/readyz/": views.readyz,
                "/metrics": metrics_view,  # Prometheus scrapes by address too (token checked)
                "/metrics/": metrics_view,
            }.get(request.path_info)
            if probe is not None:
                return probe(request)  # type: ignore[operator,arg-type]
        return self.get_response(request)


class ServiceRefusalMiddleware:
    """A service's refusal that no view turned into a form error still answers with its
    reason, never a 500: 409 for a conflict with the project's state (a freeze for sign-off),
    400 otherwise. JSON under /api/, plain text to HTMX (the page shows it), a page elsewhere.
    Nothing was written: the services refuse before they write, inside their transaction."""

    CONFLICT_CODES = frozenset({"scope_frozen"})

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        from django.core.exceptions import ValidationError
        from django.http import JsonResponse
        from django.shortcuts import render

        if not isinstance(exception, ValidationError):
            return None
        status = 409 if getattr(exception, "code", None) in self.CONFLICT_CODES else 400
        messages = exception.messages
        if request.path_info.startswith("/api/"):
            return JsonResponse({"detail": " ".join(messages)}, status=status)
        if request.headers.get("HX-Request") == "true":
            return HttpResponse(
                " ".join(messages), status=status, content_type="text/plain; charset=utf-8"
            )
        return render(request, "workbench/refused.html", {"messages_": messages}, status=status)
