"""The cost page: every candidate's cost over the horizon side by side, per category and year,
with its range, net present value and cost per GPU-year; the cost model and cost lines to edit
(procurement, business and project admins)."""

from dataclasses import fields as dataclass_fields
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from evaluations import selectors as evaluation_selectors
from evaluations.models import Candidate, Project
from reports.procurement import analysis, lines_io, selectors, services
from reports.procurement.forms import (
    CostLineForm,
    CostLinesImportForm,
    CostModelForm,
    cost_model_initial,
)
from reports.procurement.models import CostLine, CostModel
from reports.procurement.views import cost_charts
from reports.procurement.views.common import candidates_shown, editor_access
from workbench.forms import form_add_service_error
from workbench.typing import AuthedHttpRequest

# Above this many candidates the page opens one candidate's figures and lines at a time.
DETAILS_INLINE = 6


@login_required
def costs(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    overview = selectors.cost_overview(access.project, candidates_shown(access.project, request))
    opened = request.GET.get("candidate", "")
    detailed = [
        c
        for c in overview.candidates
        if len(overview.candidates) <= DETAILS_INLINE or c.slug == opened
    ]
    currency = overview.model.currency if overview.model else ""
    context = {
        "access": access,
        "project": access.project,
        "tab": "costs",
        "overview": overview,
        "detailed": [(c, cost_charts.candidate_charts(c, currency)) for c in detailed],
        "folded": len(detailed) < len(overview.candidates),
        "cumulative": cost_charts.cumulative_chart(overview) if overview.model else None,
        "turning": [
            (c, s) for c in overview.candidates for s in c.swings or [] if s.changes_ranking
        ],
        "can_edit": selectors.can_edit_terms(access),
    }
    return render(request, "procurement/costs.html", context)


@login_required
def cost_cheapest(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """How likely each candidate is to be the cheapest (sampled; loaded after the page)."""
    access = evaluation_selectors.project_access(request.user, slug)
    overview = selectors.cost_overview(access.project, candidates_shown(access.project, request))
    shares = analysis.cheapest_shares([c.costs for c in overview.candidates])
    rows = sorted(zip(overview.candidates, shares, strict=True), key=lambda row: -row[1])
    context = {"overview": overview, "rows": rows, "samples": analysis.SAMPLES}
    return render(request, "procurement/_cheapest.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def cost_model_edit(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = editor_access(request, slug)
    current = CostModel.objects.filter(project=access.project).first()
    form = CostModelForm(request.POST or None, initial=cost_model_initial(current))
    if request.method == "POST" and _model_saved(request, form, access.project):
        return redirect(reverse("procurement:costs", kwargs={"slug": slug}))
    context = {"access": access, "project": access.project, "tab": "costs", "form": form}
    return render(
        request, "procurement/cost_model_edit.html", context, status=422 if form.errors else 200
    )


def _model_saved(request: AuthedHttpRequest, form: CostModelForm, project: object) -> bool:
    if not form.is_valid():
        return False
    names = {f.name for f in dataclass_fields(services.ModelData)}
    given = {k: v for k, v in form.cleaned_data.items() if k in names}
    data = services.ModelData(**{**given, "day_rates": form.day_rates()})
    try:
        services.cost_model_save(project=project, data=data, actor=request.user)  # type: ignore[arg-type]
    except ValidationError as exc:
        form_add_service_error(form, exc)
        return False
    messages.success(request, _("Cost model saved."))
    return True


@login_required
@require_http_methods(["GET", "POST"])
def cost_line_add(
    request: AuthedHttpRequest, slug: str, candidate_slug: str | None = None
) -> HttpResponse:
    """A line of a candidate, or of the baseline (no candidate in the address)."""
    access = editor_access(request, slug)
    candidate = (
        selectors.candidate_in_project(access.project, candidate_slug) if candidate_slug else None
    )
    replaces = _replaced(access.project, candidate, request)
    initial = _line_initial(replaces) if replaces else None
    form = CostLineForm(request.POST or None, initial=initial)
    if request.method == "POST" and _line_saved(request, form, candidate, access.project, replaces):
        anchor = candidate.slug if candidate else "baseline"
        return redirect(reverse("procurement:costs", kwargs={"slug": slug}) + f"#c-{anchor}")
    context = {
        "access": access,
        "project": access.project,
        "tab": "costs",
        "candidate": candidate,
        "form": form,
        "replaces": replaces,
    }
    return render(
        request, "procurement/cost_line_add.html", context, status=422 if form.errors else 200
    )


def _replaced(project: Project, candidate: Candidate | None, request: AuthedHttpRequest) -> Any:
    """The line this one is to replace (`?replaces=<id>`), of the same owner; else None."""
    given = request.POST.get("replaces") or request.GET.get("replaces") or ""
    if not given.isdigit():
        return None
    return CostLine.objects.filter(project=project, candidate=candidate, pk=int(given)).first()


def _line_initial(line: CostLine) -> dict[str, object]:
    names = ("category", "label", "kind", "unit", "team", "currency", "low", "expected", "high",
             "discount_percent", "first_year", "last_year", "charge_category")  # fmt: skip
    return {name: getattr(line, name) for name in names}


def _line_saved(
    request: AuthedHttpRequest,
    form: CostLineForm,
    candidate: Candidate | None,
    project: Project,
    replaces: CostLine | None,
) -> bool:
    if not form.is_valid():
        return False
    try:
        services.cost_line_add(
            candidate=candidate,
            project=project,
            data=services.LineData(**form.cleaned_data),
            actor=request.user,
            replaces=replaces,
        )
    except ValidationError as exc:
        form_add_service_error(form, exc)
        return False
    messages.success(request, _("Cost line added."))
    return True


@login_required
@require_POST
def cost_line_remove(request: AuthedHttpRequest, slug: str, line_id: int) -> HttpResponse:
    access = editor_access(request, slug)
    line = (
        CostLine.objects.filter(project=access.project, pk=line_id)
        .select_related("candidate")
        .first()
    )
    if line is None:
        raise Http404
    try:
        services.cost_line_remove(line=line, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Cost line removed."))
    return redirect(
        reverse("procurement:costs", kwargs={"slug": slug})
        + f"#c-{line.candidate.slug if line.candidate else 'baseline'}"
    )


@login_required
@require_http_methods(["GET", "POST"])
def cost_lines_import(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Cost lines from a CSV or XLSX file: every row checked, all added or none."""
    access = editor_access(request, slug)
    form = CostLinesImportForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            rows = lines_io.read(upload.read(), upload.name)
            added = services.cost_lines_import(
                project=access.project, rows=rows, actor=request.user
            )
        except lines_io.Unreadable as exc:
            problems = [str(exc)]
        except ValidationError as exc:
            problems = exc.messages
        else:
            messages.success(request, _("%(n)s cost lines added.") % {"n": added})
            return redirect(reverse("procurement:costs", kwargs={"slug": slug}))
    context = {
        "access": access,
        "project": access.project,
        "tab": "costs",
        "form": form,
        "problems": problems,
        "columns": lines_io.COLUMNS,
    }
    failed = bool(form.errors or problems)
    return render(
        request, "procurement/cost_lines_import.html", context, status=422 if failed else 200
    )


@login_required
def cost_lines_template(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    evaluation_selectors.project_access(request.user, slug)
    response = HttpResponse(lines_io.template_csv(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="cost-lines.csv"'
    return response
