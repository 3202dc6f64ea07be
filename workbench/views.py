from collections.abc import Callable
from functools import wraps
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from workbench import ci_client, readiness, services
from workbench.forms import PreferenceForm, form_add_service_error
from workbench.selectors import preference_for, recent_worker_checks, worker_check
from workbench.typing import AuthedHttpRequest, HtmxHttpRequest


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Logged-in staff only; anonymous visitors go to the login page, others get 403."""

    @wraps(view)
    @login_required
    def wrapped(request: HtmxHttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not request.user.is_staff:
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


# Seconds a client is asked to wait before trying again while the database cannot be reached.
DATABASE_RETRY_AFTER_S = 5


def _database_unreachable(exc: BaseException | None) -> bool:
    """A lost or refused database connection (a restart, a failover), not a bad query."""
    from django.db import InterfaceError, OperationalError

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:  # the driver's error is often the cause
        if isinstance(exc, (OperationalError, InterfaceError)):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


# Seconds a client is asked to wait when the database gave a request up for a conflicting one.
DATABASE_BUSY_RETRY_AFTER_S = 1


# Besides class 40 (transaction rollback: deadlock, serialization failure): lock not
# available (a lock timeout), query cancelled (a statement timeout).
BUSY_STATES = {"55P03", "57014"}


def _database_busy(exc: BaseException | None) -> bool:
    """The database was up but gave this request's transaction up for another one: a deadlock
    or serialization failure broken by PostgreSQL, a lock or statement timeout, SQLite's
    "database is locked". Trying again soon succeeds."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        state = getattr(exc, "sqlstate", None) or ""  # psycopg's errors carry PostgreSQL's code
        if state.startswith("40") or state in BUSY_STATES or "database is locked" in str(exc):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def server_error(request: HtmxHttpRequest) -> HttpResponse:
    """The last answer to an uncaught exception. A database that cannot be reached, or that
    gave this request up for a conflicting one (busy), is not a fault of this request: 503
    with Retry-After, so clients (the CI client among them) try again; the request's
    transaction was rolled back, so nothing of it was half saved. Anything else is the usual
    500 page."""
    import sys

    from django.template import loader
    from django.views.defaults import server_error as default_server_error

    failure = sys.exc_info()[1]
    if not _database_unreachable(failure):
        return default_server_error(request)
    busy = _database_busy(failure)
    if busy:
        message = _(
            "The database was busy with another change to this project and gave this request "
            "up. Nothing of it was saved: try again in a moment (a post repeated with the same "
            "Idempotency-Key is stored once)."
        )
    else:
        message = _(
            "The database cannot be reached just now. Nothing of this request was half saved: "
            "try again in a few seconds (a post repeated with the same Idempotency-Key is "
            "stored once)."
        )
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=503)
    else:
        html = loader.get_template("503.html").render({"message": message})
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(DATABASE_BUSY_RETRY_AFTER_S if busy else DATABASE_RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    return response


@require_safe
def healthz(request: HtmxHttpRequest) -> HttpResponse:
    """Liveness: the process answers. It touches nothing else, so a database outage makes
    pods unready (`/readyz/`) rather than restarted."""
    response = HttpResponse("ok", content_type="text/plain")
    response["Cache-Control"] = "no-store"
    return response


@require_safe
def readyz(request: HtmxHttpRequest) -> JsonResponse:
    """Readiness for orchestrators: 200 when every part this process needs works, else 503
    naming the parts that fail. The problem texts (which name hosts, settings and errors, never
    secrets) are given only to whoever may read the metrics (METRICS_TOKEN as a bearer token,
    or an address in METRICS_ALLOWED_NETWORKS); everyone else reads the part names and whether
    each is ready, and the full errors go to the log."""
    from workbench.metrics import allowed

    parts = readiness.readiness(request)
    ready = all(part.ok for part in parts)
    detailed = allowed(request)
    response = JsonResponse(
        {
            "status": "ready" if ready else "not ready",
            "parts": [p.as_dict() if detailed else {"name": p.name, "ok": p.ok} for p in parts],
        },
        status=200 if ready else 503,
    )
    response["Cache-Control"] = "no-store"
    return response


def ci_client_download(request: HtmxHttpRequest) -> HttpResponse:
    """The CI client as one standard-library file, for pipelines that `curl` it (public: it
    holds no secret)."""
    source = Path(ci_client.__file__).read_bytes()
    response = HttpResponse(source, content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="workbench-ci.py"'
    return response


def home(request: HtmxHttpRequest) -> HttpResponse:
    return redirect("evaluations:project_list")


@staff_required
def system_status(request: HtmxHttpRequest) -> HttpResponse:
    checks = recent_worker_checks()
    return render(request, "workbench/status.html", {"checks": checks})


@staff_required
@require_POST
def worker_check_create(request: HtmxHttpRequest) -> HttpResponse:
    check = services.worker_check_request(user=request.user)
    return redirect("worker_check_detail", check_id=check.pk)


@staff_required
def worker_check_detail(request: HtmxHttpRequest, check_id: int) -> HttpResponse:
    check = worker_check(check_id)
    template = "workbench/status.html#check" if request.htmx else "workbench/check.html"
    return render(request, template, {"check": check})


@login_required
@require_http_methods(["GET", "POST"])
def preferences(request: AuthedHttpRequest) -> HttpResponse:
    """The signed-in person's e-mail notices: on or off, and their language."""
    current = preference_for(request.user)
    initial = {
        "email_notifications": current.email_notifications if current else True,
        "language": current.language if current else "",
    }
    form = PreferenceForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.preference_set(
                user=request.user,
                email_notifications=form.cleaned_data["email_notifications"],
                language=form.cleaned_data["language"],
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Preferences saved."))
            return redirect("preferences")
    return render(
        request,
        "workbench/preferences.html",
        {"form": form},
        status=422 if form.is_bound else 200,
    )
