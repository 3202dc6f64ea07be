from collections.abc import Callable
from functools import wraps
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from workbench import ci_client, services
from workbench.selectors import recent_worker_checks, worker_check
from workbench.typing import HtmxHttpRequest


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Logged-in staff only; anonymous visitors go to the login page, others get 403."""

    @wraps(view)
    @login_required
    def wrapped(request: HtmxHttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not request.user.is_staff:
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def healthz(request: HtmxHttpRequest) -> HttpResponse:
    """Liveness for load balancers and compose: the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


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
