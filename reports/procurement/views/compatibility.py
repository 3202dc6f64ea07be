"""The support and compatibility matrix: every member reads it; platform, operations,
architecture and project admins state vendor claims, failures and open questions. Probe runs
fill "verified" by themselves."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from evaluations import selectors as evaluation_selectors
from poc.probes.combinations import FIELDS
from reports.procurement import selectors, services
from reports.procurement.forms import ClaimForm
from reports.procurement.views.common import candidates_shown
from workbench.forms import form_add_service_error
from workbench.typing import AuthedHttpRequest


@login_required
def compatibility(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    shown = candidates_shown(access.project, request)
    context = {
        "access": access,
        "project": access.project,
        "tab": "compatibility",
        "matrices": selectors.compatibility_matrix(access.project, shown),
        "can_edit": selectors.can_edit_matrix(access),
    }
    return render(request, "procurement/compatibility.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def compatibility_claim(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    if not selectors.can_edit_matrix(access):
        raise PermissionDenied
    shown = candidates_shown(access.project, request)
    choices = [(c.slug, c.solution.name) for c in shown]
    form = ClaimForm(request.POST or None, candidates=choices, initial=request.GET.dict())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        candidate = next(c for c in shown if c.slug == data["candidate"])
        try:
            services.compatibility_claim(
                candidate=candidate,
                stack=services.Stack(**{name: data[name] for name in FIELDS}),
                status=data["status"],
                reference=data["reference"],
                note=data["note"],
                actor=request.user,
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Claim recorded."))
            return redirect(reverse("procurement:compatibility", kwargs={"slug": slug}))
    context = {"access": access, "project": access.project, "tab": "compatibility", "form": form}
    status = 422 if form.errors else 200
    return render(request, "procurement/compatibility_claim.html", context, status=status)
