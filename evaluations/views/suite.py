"""The acceptance suite pages: requirements, their actions, templates, import and export."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from evaluations import selectors, services, suite_io
from evaluations.forms import (
    ActionForm,
    ClaimsForm,
    MoveForm,
    RequirementForm,
    SuiteFilterForm,
    SuiteImportForm,
    TemplateApplyForm,
)
from evaluations.models import AcceptanceAction, Project, Requirement
from workbench.forms import form_add_service_error
from workbench.languages import product_language
from workbench.typing import AuthedHttpRequest

SUITE_TEMPLATE = "evaluations/suite.html"


def _filters(request: AuthedHttpRequest) -> tuple[SuiteFilterForm, selectors.SuiteFilters]:
    form = SuiteFilterForm(request.GET or None)
    if form.is_valid():
        return form, selectors.SuiteFilters(**form.cleaned_data)
    return form, selectors.SuiteFilters()


def _shown(row: Requirement | AcceptanceAction, field: str) -> Any:
    """A field as the reader sees it: library text in their language, anything else as is."""
    value = getattr(row, field)
    return row.shown(field) if isinstance(value, str) else value


def _suite_url(project_slug: str) -> str:
    return reverse("evaluations:suite", kwargs={"slug": project_slug})


@login_required
@require_http_methods(["GET", "POST"])
def suite(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The requirement list grouped by dimension, with filters, readiness and a quick add."""
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    project = access.project
    add_form = RequirementForm(request.POST or None, prefix="new")
    if request.method == "POST" and add_form.is_valid():
        try:
            services.requirement_create(
                project=project, actor=request.user, **add_form.cleaned_data
            )
        except ValidationError as exc:
            form_add_service_error(add_form, exc)
        else:
            messages.success(request, _("Requirement added. Rewrite it into acceptance actions."))
            return redirect(_suite_url(project.slug))
    filter_form, filters = _filters(request)
    context = {
        "access": access,
        "project": project,
        "tab": "suite",
        "groups": selectors.suite_for_project(project, filters),
        "filters": filters,
        "filter_form": filter_form,
        "add_form": add_form,
        "readiness": selectors.readiness_for_project(project),
    }
    if request.htmx and request.method == "GET":
        return render(request, f"{SUITE_TEMPLATE}#suite", context)
    return render(request, SUITE_TEMPLATE, context)


def _requirement_response(
    request: AuthedHttpRequest,
    access: selectors.ProjectAccess,
    requirement_id: int,
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    """The requirement card for HTMX. Plain browsers get the requirement's own page for a GET
    or a refused POST, and go back to the suite after a successful POST."""
    if not request.htmx:
        if request.method != "GET" and status < 400:
            return redirect(_suite_url(access.project.slug) + f"#requirement-{requirement_id}")
        context = {
            "access": access,
            "project": access.project,
            "tab": "suite",
            "requirement": selectors.requirement_for_project(access.project, requirement_id),
            **extra,
        }
        return render(request, "evaluations/requirement_page.html", context, status=status)
    context = {
        "access": access,
        "project": access.project,
        "requirement": selectors.requirement_for_project(access.project, requirement_id),
        **extra,
    }
    return render(request, f"{SUITE_TEMPLATE}#requirement", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def requirement_detail(request: AuthedHttpRequest, slug: str, requirement_id: int) -> HttpResponse:
    """GET: the card (or its editor with ?edit=1). POST: save the requirement's fields."""
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    requirement = selectors.requirement_for_project(access.project, requirement_id)
    if request.method == "GET":
        editing = request.GET.get("edit") == "1"
        form = RequirementForm(
            initial={f: _shown(requirement, f) for f in services.suite.REQUIREMENT_FIELDS},
            prefix=f"req{requirement.pk}",
        )
        return _requirement_response(
            request,
            access,
            requirement.pk,
            requirement_form=form,
            editing_requirement=editing or not request.htmx,
        )
    form = RequirementForm(request.POST, prefix=f"req{requirement.pk}")
    if form.is_valid():
        try:
            services.requirement_update(
                requirement=requirement, actor=request.user, **form.cleaned_data
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            return _requirement_response(request, access, requirement.pk)
    return _requirement_response(
        request, access, requirement.pk, status=422, requirement_form=form, editing_requirement=True
    )


@login_required
def requirement_delete(request: AuthedHttpRequest, slug: str, requirement_id: int) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    requirement = selectors.requirement_for_project(access.project, requirement_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        services.requirement_delete(requirement=requirement, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Requirement deleted with its actions."))
    if request.htmx:
        response = HttpResponse("")
        response["HX-Redirect"] = _suite_url(access.project.slug)
        return response
    return redirect(_suite_url(access.project.slug))


def _move(
    request: AuthedHttpRequest,
    access: selectors.ProjectAccess,
    item: Requirement | AcceptanceAction,
) -> HttpResponse:
    form = MoveForm(request.POST)
    if not form.is_valid():
        return HttpResponse(_("direction must be up or down"), status=400)
    services.reorder(item=item, direction=form.cleaned_data["direction"], actor=request.user)
    if isinstance(item, AcceptanceAction):
        return _requirement_response(request, access, item.requirement_id)
    if request.htmx:
        response = HttpResponse("")
        response["HX-Refresh"] = "true"
        return response
    return redirect(_suite_url(access.project.slug) + f"#requirement-{item.pk}")


@login_required
def requirement_move(request: AuthedHttpRequest, slug: str, requirement_id: int) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    requirement = selectors.requirement_for_project(access.project, requirement_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    return _move(request, access, requirement)


@login_required
@require_http_methods(["GET", "POST"])
def action_add(request: AuthedHttpRequest, slug: str, requirement_id: int) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=True)
    requirement = selectors.requirement_for_project(access.project, requirement_id)
    prefix = f"new{requirement.pk}"
    if request.method == "GET":
        suggested = services.unique_action_key(access.project, requirement.feature)
        form = ActionForm(initial={"key": suggested}, prefix=prefix)
        return _requirement_response(
            request, access, requirement.pk, action_form=form, adding_action=True
        )
    form = ActionForm(request.POST, prefix=prefix)
    if form.is_valid():
        try:
            services.action_create(requirement=requirement, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            return _requirement_response(request, access, requirement.pk)
    return _requirement_response(
        request, access, requirement.pk, status=422, action_form=form, adding_action=True
    )


@login_required
@require_http_methods(["GET", "POST"])
def action_detail(request: AuthedHttpRequest, slug: str, action_id: int) -> HttpResponse:
    """GET: the action's editor inside its requirement card. POST: save it."""
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    action = selectors.action_for_project(access.project, action_id)
    prefix = f"act{action.pk}"
    if request.method == "GET":
        initial = {name: _shown(action, name) for name in services.suite.ACTION_FIELDS}
        form = ActionForm(initial=initial, prefix=prefix)
        return _requirement_response(
            request, access, action.requirement_id, action_form=form, editing_action=action.pk
        )
    form = ActionForm(request.POST, prefix=prefix)
    if form.is_valid():
        try:
            services.action_update(action=action, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            return _requirement_response(request, access, action.requirement_id)
    return _requirement_response(
        request,
        access,
        action.requirement_id,
        status=422,
        action_form=form,
        editing_action=action.pk,
    )


@login_required
def action_delete(request: AuthedHttpRequest, slug: str, action_id: int) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    action = selectors.action_for_project(access.project, action_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        services.action_delete(action=action, actor=request.user)
    except ValidationError as exc:
        return _requirement_response(
            request, access, action.requirement_id, status=422, requirement_errors=exc.messages
        )
    return _requirement_response(request, access, action.requirement_id)


@login_required
def action_move(request: AuthedHttpRequest, slug: str, action_id: int) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    action = selectors.action_for_project(access.project, action_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    return _move(request, access, action)


@login_required
@require_http_methods(["GET", "POST"])
def claims_paste(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    form = ClaimsForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            created = services.requirements_from_claims(
                project=access.project, actor=request.user, **form.cleaned_data
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(
                request,
                _("%(count)d claims added as requirements, flagged until they have actions.")
                % {"count": len(created)},
            )
            return redirect(_suite_url(access.project.slug))
    return render(
        request,
        "evaluations/claims.html",
        {"access": access, "project": access.project, "tab": "suite", "form": form},
    )


@login_required
@require_http_methods(["GET", "POST"])
def claims_suggest(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The template rewrites that match each pasted claim: as the claims are typed (htmx), or
    with the "Suggest templates" button. Nothing is stored; it serves the writers' paste form,
    so asking takes the right to write (GET shows the empty page)."""
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    form = ClaimsForm(request.POST or None)
    text = str(request.POST.get("text", ""))[:50_000]
    context = {
        "access": access,
        "project": access.project,
        "tab": "suite",
        "form": form,
        "suggestions": selectors.claim_suggestions(text),
        "suggested": True,
    }
    if request.htmx:
        return render(request, "evaluations/claims.html#suggestions", context)
    return render(request, "evaluations/claims.html", context)


@login_required
def template_list(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug)
    return render(
        request,
        "evaluations/template_list.html",
        {
            "access": access,
            "project": access.project,
            "tab": "suite",
            "template_sets": selectors.template_sets(),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def template_apply(request: AuthedHttpRequest, slug: str, set_key: str) -> HttpResponse:
    """GET: a preview of what applying the set adds. POST: apply it."""
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    template_set = selectors.template_set_by_key(set_key)
    plan = services.template_set_plan(project=access.project, template_set=template_set)
    offered = [t.key for planned in plan.requirements for t, _key in planned.new_actions]
    form = TemplateApplyForm(
        request.POST or None, offered=offered, initial={"language": product_language()}
    )
    if request.method == "POST" and form.is_valid():
        report = services.template_set_apply(
            project=access.project,
            template_set=template_set,
            actor=request.user,
            language=form.cleaned_data["language"],
            only=set(form.cleaned_data["actions"]),
        )
        messages.success(request, _applied_message(report))
        return redirect(_suite_url(access.project.slug))
    chosen = set(request.POST.getlist("actions") if form.is_bound else offered)
    return render(
        request,
        "evaluations/template_apply.html",
        {"access": access, "project": access.project, "tab": "suite", "plan": plan, "form": form}
        | {"chosen": chosen},
    )


def _applied_message(report: services.ApplyReport) -> str:
    said = _(
        "%(actions)d actions in %(requirements)d new requirements added; "
        "%(present)d were already there."
    ) % {
        "actions": report.actions_created,
        "requirements": report.requirements_created,
        "present": report.already_present,
    }
    if report.left_out:
        said += " " + ngettext(
            "%(n)d action of the set was left out, as chosen.",
            "%(n)d actions of the set were left out, as chosen.",
            report.left_out,
        ) % {"n": report.left_out}
    return said


@login_required
def suite_export(request: AuthedHttpRequest, slug: str, fmt: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug)
    if fmt not in ("yaml", "csv"):
        raise Http404
    requirements = [
        r for g in selectors.suite_for_project(access.project, fold=False) for r in g.requirements
    ]
    if fmt == "csv":
        body, content_type = suite_io.export_csv(requirements), "text/csv; charset=utf-8"
    else:
        body = suite_io.export_yaml(access.project, requirements)
        content_type = "application/yaml; charset=utf-8"
    response = HttpResponse(body, content_type=content_type)
    filename = f"{access.project.slug}-acceptance-suite.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def suite_import(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    form = SuiteImportForm(request.POST or None, request.FILES or None)
    errors: list[tuple[int, str]] = []
    if request.method == "POST" and form.is_valid():
        errors = _import_errors(request, access.project, form)
        if not errors:
            return redirect(_suite_url(access.project.slug))
    status = 422 if errors or form.errors else 200
    return render(
        request,
        "evaluations/suite_import.html",
        {
            "access": access,
            "project": access.project,
            "tab": "suite",
            "form": form,
            "import_errors": errors,
        },
        status=status,
    )


def _import_errors(
    request: AuthedHttpRequest, project: Project, form: SuiteImportForm
) -> list[tuple[int, str]]:
    """Parse and apply an uploaded suite, all or nothing; the errors by line (0: the whole
    file), none when it was imported."""
    upload = form.cleaned_data["file"]
    parsed = suite_io.parse(upload.text, upload.name)
    if not parsed.ok:
        return parsed.errors
    try:
        report = services.suite_import(project=project, actor=request.user, parsed=parsed)
    except ValidationError as exc:
        return [(0, message) for message in exc.messages]
    messages.success(
        request,
        _("Imported: %(req)d requirements and %(new)d actions created, %(upd)d actions updated.")
        % {
            "req": report.requirements_created,
            "new": report.actions_created,
            "upd": report.actions_updated,
        },
    )
    return []
