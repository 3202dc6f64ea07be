"""Browser pages of the PoC: the results matrix, cell panels, evidence, comparison, duties, CI."""

import mimetypes

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from evaluations import selectors as evaluation_selectors
from evaluations import services as evaluation_services
from evaluations.models import Candidate
from poc import selectors, services
from poc.forms import (
    ApiTokenForm,
    EvidenceForm,
    MatrixFilterForm,
    ResponsibilityForm,
    ResultForm,
)
from poc.models import (
    ResponsibilityArea,
)
from workbench.forms import FlagForm, form_add_service_error
from workbench.typing import AuthedHttpRequest

MATRIX_TEMPLATE = "poc/matrix.html"
# Never let a browser render uploaded content as a page of ours.
UNSAFE_INLINE_TYPES = {
    "text/html",
    "image/svg+xml",
    "application/xhtml+xml",
    "text/xml",
    "application/xml",
    "text/javascript",
    "application/javascript",
}


def _matrix_filters(request: AuthedHttpRequest) -> tuple[MatrixFilterForm, selectors.MatrixFilters]:
    form = MatrixFilterForm(request.GET or None)
    if form.is_valid():
        return form, selectors.MatrixFilters(**form.cleaned_data)
    return form, selectors.MatrixFilters()


@login_required
def matrix(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    filter_form, filters = _matrix_filters(request)
    context = {
        "access": access,
        "project": access.project,
        "tab": "matrix",
        "matrix": selectors.matrix_for_project(
            access.project, filters, page=request.GET.get("page") or 1
        ),
        "filter_form": filter_form,
    }
    if request.htmx and not request.htmx.boosted:
        return render(request, f"{MATRIX_TEMPLATE}#matrix", context)
    return render(request, MATRIX_TEMPLATE, context)


def _cell_context(
    access: evaluation_selectors.ProjectAccess, detail: selectors.CellDetail, **extra: object
) -> dict[str, object]:
    return {
        "access": access,
        "project": access.project,
        "detail": detail,
        "result_form": extra.pop("result_form", None) or ResultForm(),
        "evidence_form": extra.pop("evidence_form", None) or EvidenceForm(),
        **extra,
    }


def _cell_response(
    request: AuthedHttpRequest,
    context: dict[str, object],
    *,
    status: int = 200,
    changed: bool = False,
) -> HttpResponse:
    if request.htmx:
        response = render(
            request, "poc/cell_panel.html", {**context, "oob": changed}, status=status
        )
        if changed:
            response["HX-Trigger"] = "cellChanged"
        return response
    if changed:
        detail = context["detail"]
        assert isinstance(detail, selectors.CellDetail)
        return redirect(
            "poc:cell",
            slug=detail.candidate.project.slug,
            candidate_slug=detail.candidate.slug,
            action_id=detail.action.pk,
        )
    return render(request, "poc/cell_page.html", {**context, "tab": "matrix"}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def cell(
    request: AuthedHttpRequest, slug: str, candidate_slug: str, action_id: int
) -> HttpResponse:
    """GET: the panel to record a result, attach evidence and read the history. POST: record."""
    access = evaluation_selectors.project_access(request.user, slug, write=request.method == "POST")
    detail = selectors.cell_detail(
        access.project, candidate_slug, action_id, page=request.GET.get("page")
    )
    if request.method == "GET":
        return _cell_response(request, _cell_context(access, detail))
    form = ResultForm(request.POST, request.FILES)
    if form.is_valid():
        data = dict(form.cleaned_data)
        evidence_file, evidence_url = data.pop("evidence_file"), data.pop("evidence_url")
        try:
            services.result_record_with_evidence(
                candidate=detail.candidate,
                action=detail.action,
                actor=request.user,
                evidence_file=evidence_file or None,
                evidence_url=evidence_url or "",
                **data,
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            detail = selectors.cell_detail(access.project, candidate_slug, action_id)
            return _cell_response(request, _cell_context(access, detail, saved=True), changed=True)
    return _cell_response(request, _cell_context(access, detail, result_form=form), status=422)


@login_required
@require_POST
def evidence_add(request: AuthedHttpRequest, slug: str, result_id: int) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    result = selectors.result_for_project(access.project, result_id)
    form = EvidenceForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            if form.cleaned_data.get("file"):
                services.evidence_attach_file(
                    result=result, upload=form.cleaned_data["file"], actor=request.user
                )
            else:
                services.evidence_attach_link(
                    result=result,
                    url=form.cleaned_data["url"],
                    name=form.cleaned_data["name"],
                    actor=request.user,
                )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            detail = selectors.cell_detail(access.project, result.candidate.slug, result.action_id)
            return _cell_response(request, _cell_context(access, detail), changed=True)
    detail = selectors.cell_detail(access.project, result.candidate.slug, result.action_id)
    return _cell_response(request, _cell_context(access, detail, evidence_form=form), status=422)


@login_required
def evidence_download(
    request: AuthedHttpRequest, slug: str, evidence_id: int
) -> HttpResponse | FileResponse:
    """Evidence files go to project members only, always as a download."""
    access = evaluation_selectors.project_access(request.user, slug)
    evidence = selectors.evidence_for_project(access.project, evidence_id)
    if evidence.kind == "link":
        return HttpResponseRedirect(evidence.url)
    try:
        handle = evidence.file.open("rb")
    except (FileNotFoundError, OSError):
        raise Http404 from None
    content_type = evidence.content_type or mimetypes.guess_type(evidence.name)[0] or ""
    if content_type in UNSAFE_INLINE_TYPES or not content_type:
        content_type = "application/octet-stream"
    response = FileResponse(
        handle, as_attachment=True, filename=evidence.name, content_type=content_type
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


@login_required
def comparison(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    include_all = FlagForm("all", request.GET).set
    if FlagForm("columns", request.GET).set:
        return render(
            request,
            "poc/comparison_columns.html",
            {
                "access": access,
                "project": access.project,
                "tab": "comparison",
                "side": selectors.side_by_side(
                    access.project, include_all=include_all, page=request.GET.get("page") or 1
                ),
                "include_all": include_all,
            },
        )
    return render(
        request,
        "poc/comparison.html",
        {
            "access": access,
            "project": access.project,
            "tab": "comparison",
            "summaries": selectors.comparison_overview(access.project, include_all=include_all),
            "include_all": include_all,
        },
    )


@login_required
def comparison_list(
    request: AuthedHttpRequest, slug: str, candidate_slug: str, outcome: str
) -> HttpResponse:
    """One candidate's failures or integration needs, opened from the comparison page."""
    access = evaluation_selectors.project_access(request.user, slug)
    candidate, cells, total = selectors.comparison_list(access.project, candidate_slug, outcome)
    context = {
        "access": access,
        "project": access.project,
        "tab": "comparison",
        "candidate": candidate,
        "outcome": outcome,
        "cells": cells,
        "more": total - len(cells),
    }
    if request.htmx:
        return render(request, "poc/comparison_list.html#list", context)
    return render(request, "poc/comparison_list.html", context)


def _candidate(access: evaluation_selectors.ProjectAccess, candidate_slug: str) -> Candidate:
    return evaluation_selectors.candidate_for_project(access.project, candidate_slug)


@login_required
@require_http_methods(["GET", "POST"])
def responsibility_edit(
    request: AuthedHttpRequest, slug: str, candidate_slug: str, area: str
) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, write=request.method == "POST")
    candidate = _candidate(access, candidate_slug)
    if area not in ResponsibilityArea.values:
        raise Http404
    current = selectors.responsibility_for(candidate, area)
    fields = ("party", "delivery", "person", "escalation", "note")
    initial = {name: getattr(current, name) for name in fields} if current else {}
    form = ResponsibilityForm(request.POST or None, initial=initial)
    # Opened from the responsibilities grid (?grid=1): back to the grid, in place with htmx.
    from_grid = FlagForm("grid", request.GET).set
    back = (
        reverse("poc:responsibilities", kwargs={"slug": slug}) + f"#r-{area}"
        if from_grid
        else reverse("poc:comparison", kwargs={"slug": slug}) + f"#c-{candidate.slug}"
    )
    if request.method == "POST" and _responsibility_saved(request, form, candidate, area):
        return _responsibility_done(request, from_grid, back)
    context = {
        "access": access,
        "project": access.project,
        "tab": "responsibilities" if from_grid else "comparison",
        "candidate": candidate,
        "area": area,
        "area_label": ResponsibilityArea(area).label,
        "form": form,
        "current": current,
        "from_grid": from_grid,
    }
    template = "poc/responsibility_edit.html" + ("#editor" if request.htmx else "")
    return render(request, template, context, status=422 if form.errors else 200)


def _responsibility_saved(
    request: AuthedHttpRequest, form: ResponsibilityForm, candidate: Candidate, area: str
) -> bool:
    """Clear the assignment, or save the form's; False when the form or the service refused."""
    if FlagForm("clear", request.POST).set:
        services.responsibility_clear(candidate=candidate, area=area, actor=request.user)
        return True
    if not form.is_valid():
        return False
    try:
        services.responsibility_set(
            candidate=candidate, area=area, actor=request.user, **form.cleaned_data
        )
    except ValidationError as exc:
        form_add_service_error(form, exc)
        return False
    messages.success(request, _("Responsibility saved."))
    return True


def _responsibility_done(request: AuthedHttpRequest, from_grid: bool, back: str) -> HttpResponse:
    if not request.htmx:
        return redirect(back)
    response = HttpResponse(status=204)
    if from_grid:
        # The grid is the page the editor opened on: load it again to show the change (a
        # redirect to the same page plus an anchor would only scroll).
        response["HX-Refresh"] = "true"
    else:
        response["HX-Redirect"] = back
    return response


# --- CI: tokens and runs -----------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Project admins create tokens for CI (each shown once) and revoke them."""
    access = evaluation_selectors.project_access(request.user, slug, admin=True)
    form = ApiTokenForm(request.POST or None)
    created_secret = ""
    if request.method == "POST" and form.is_valid():
        try:
            _token, created_secret = evaluation_services.api_token_create(
                project=access.project,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                actor=request.user,
                expires_days=form.cleaned_data["expires_days"],
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            form = ApiTokenForm()
    response = render(
        request,
        "poc/tokens.html",
        {
            "access": access,
            "project": access.project,
            "tab": "ci",
            "form": form,
            "tokens": selectors.tokens_for_project(access.project),
            "created_secret": created_secret,
            "api_base": request.build_absolute_uri("/api/v1/"),
        },
        status=422 if form.errors else 200,
    )
    response["Cache-Control"] = "no-store"  # the secret must not linger in a cache
    return response


@login_required
@require_POST
def token_revoke(request: AuthedHttpRequest, slug: str, token_id: int) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, admin=True)
    token = selectors.token_for_project(access.project, token_id)
    evaluation_services.api_token_revoke(token=token, actor=request.user)
    messages.success(request, _("Token revoked."))
    return redirect("poc:tokens", slug=slug)


@login_required
def run_detail(request: AuthedHttpRequest, slug: str, ci_run_id: int) -> HttpResponse:
    """One CI run: each post with the cells it made new, regressed, recovered or changed, and
    the testcases that named no action."""
    access = evaluation_selectors.project_access(request.user, slug)
    run, posts = selectors.run_drilldown(access.project, ci_run_id)
    return render(
        request,
        "poc/run_detail.html",
        {"access": access, "project": access.project, "tab": "ci", "run": run, "posts": posts},
    )
