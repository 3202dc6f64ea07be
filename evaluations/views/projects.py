from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from evaluations import selectors, services
from evaluations.forms import (
    CandidateAddForm,
    CandidateMoveForm,
    FramingForm,
    HistoryFilterForm,
    MemberAddForm,
    ProjectCreateForm,
    TeamSolutionForm,
)
from evaluations.history_labels import verb_label
from evaluations.models import Candidate, Membership, MembershipSource, Phase, Solution
from workbench.forms import form_add_service_error
from workbench.typing import AuthedHttpRequest


@login_required
def project_list(request: AuthedHttpRequest) -> HttpResponse:
    projects = selectors.projects_for_user(request.user)
    return render(request, "evaluations/project_list.html", {"projects": projects})


@login_required
@require_http_methods(["GET", "POST"])
def project_create(request: AuthedHttpRequest) -> HttpResponse:
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(
                name=form.cleaned_data["name"],
                slug=form.cleaned_data["slug"],
                description=form.cleaned_data["description"],
                creator=request.user,
                creator_role=form.cleaned_data["role"],
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            return redirect("evaluations:project_detail", slug=project.slug)
    return render(request, "evaluations/project_create.html", {"form": form})


def _detail_context(
    request: AuthedHttpRequest, access: selectors.ProjectAccess
) -> dict[str, object]:
    return {
        "access": access,
        "project": access.project,
        "shortlist": selectors.shortlist_for_project(access.project),
        "move_form": CandidateMoveForm(),
    }


@login_required
def project_detail(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug)
    context = _detail_context(request, access)
    context["events"] = selectors.project_events(access.project, limit=8)
    context["readiness"] = selectors.readiness_for_project(access.project)
    context["tab"] = "overview"
    return render(request, "evaluations/project_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def project_framing(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    project = access.project
    initial = {
        "name": project.name,
        "description": project.description,
        "archived": project.phase == Phase.ARCHIVED,
        "workloads": project.workloads,
        "existing_base": project.existing_base,
        "layer_needed": project.layer_needed,
        "supplier_needs": project.supplier_needs,
    }
    form = FramingForm(request.POST or None, initial=initial)
    if not access.is_admin:
        del form.fields["archived"]  # archiving is a project admin's decision
    if request.method == "POST" and form.is_valid():
        try:
            services.project_update(project=project, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Framing saved."))
            return redirect("evaluations:project_detail", slug=project.slug)
    return render(
        request,
        "evaluations/project_framing.html",
        {"access": access, "project": project, "form": form, "tab": "framing"},
        status=422 if form.is_bound else 200,  # a bound form shown again holds its errors
    )


@login_required
@require_http_methods(["GET", "POST"])
def candidate_add(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=True)
    form = CandidateAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.candidate_add(
                project=access.project,
                actor=request.user,
                **form.cleaned_data,
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Candidate added to the shortlist."))
            return redirect("evaluations:project_detail", slug=access.project.slug)
    return render(
        request,
        "evaluations/candidate_add.html",
        {"access": access, "project": access.project, "form": form},
    )


@login_required
@require_http_methods(["GET", "POST"])
def candidate_update(request: AuthedHttpRequest, slug: str, candidate_slug: str) -> HttpResponse:
    """Move a candidate between tiers or edit its reason; HTMX gets the shortlist back."""
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    candidate = selectors.candidate_for_project(access.project, candidate_slug)
    errors: list[str] = []
    form: CandidateMoveForm | None = None
    if request.method == "POST":
        form = CandidateMoveForm(request.POST)
        errors = _candidate_move_errors(request, candidate, form)
        if not errors and not request.htmx:
            return redirect("evaluations:project_detail", slug=access.project.slug)
    editing = request.method == "GET" or bool(errors)
    context = _detail_context(request, access)
    context.update(
        {
            "editing": candidate.slug if editing else "",
            "card_errors": errors,
            "proposed_tier": form["tier"].value() if form is not None else "",
            "candidate": selectors.candidate_for_project(access.project, candidate.slug),
        }
    )
    template = "evaluations/candidate_edit.html"
    if request.htmx:
        part = "card" if request.method == "GET" else "shortlist"
        template = f"evaluations/project_detail.html#{part}"
    return render(request, template, context, status=422 if errors else 200)


def _candidate_move_errors(
    request: AuthedHttpRequest, candidate: Candidate, form: CandidateMoveForm
) -> list[str]:
    """Apply a tier move or reason edit; what was wrong with it, if anything."""
    if not form.is_valid():
        return [str(e) for field_errors in form.errors.values() for e in field_errors]
    try:
        services.candidate_update(candidate=candidate, actor=request.user, **form.changes())
    except ValidationError as exc:
        return list(exc.messages)
    return []


@login_required
def candidate_remove(request: AuthedHttpRequest, slug: str, candidate_slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug, write=request.method == "POST")
    candidate = selectors.candidate_for_project(access.project, candidate_slug)
    if request.method != "POST":  # checked after access, so outsiders learn nothing
        return HttpResponseNotAllowed(["POST"])
    try:
        services.candidate_remove(candidate=candidate, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Candidate removed from the shortlist."))
    return redirect("evaluations:project_detail", slug=access.project.slug)


@login_required
@require_http_methods(["GET", "POST"])
def project_members(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = selectors.project_access(request.user, slug, admin=request.method == "POST")
    form = MemberAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        services.membership_set(
            project=access.project,
            user=form.cleaned_data["username"],
            role=form.cleaned_data["role"],
            is_admin=form.cleaned_data["is_admin"],
            actor=request.user,
        )
        messages.success(request, _("Member saved."))
        return redirect("evaluations:project_members", slug=access.project.slug)
    form.fields["username"].widget.attrs.update(
        {
            "hx-get": reverse("evaluations:people_lookup", args=[access.project.slug]),
            "hx-trigger": "input changed delay:250ms",
            "hx-target": "#people",
        }
    )
    members = list(selectors.project_members(access.project))
    return render(
        request,
        "evaluations/project_members.html",
        {
            "access": access,
            "project": access.project,
            "members": members,
            "sso_roles": any(m.source == MembershipSource.SSO for m in members),
            "form": form,
            "tab": "members",
        },
    )


@login_required
def people_lookup(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Suggestions for the person field of the team page (its admins only): the options of a
    datalist, the user name as the value and the name and address beside it."""
    selectors.project_access(request.user, slug, admin=True)  # outsiders: 404 whatever the method
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET"])
    people = selectors.people_matching(request.GET.get("username", ""))
    return render(request, "evaluations/people_options.html", {"people": people})


@login_required
def member_remove(request: AuthedHttpRequest, slug: str, membership_id: int) -> HttpResponse:
    access = selectors.project_access(request.user, slug)
    membership = get_object_or_404(Membership, pk=membership_id, project=access.project)
    if request.method != "POST":  # checked after access, so outsiders learn nothing
        return HttpResponseNotAllowed(["POST"])
    if not access.is_admin:
        raise PermissionDenied
    try:
        services.membership_remove(membership=membership, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Member role removed."))
    return redirect("evaluations:project_members", slug=access.project.slug)


@login_required
def project_history(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The project's history, filterable by kind of change, person and days, a page at a time."""
    access = selectors.project_access(request.user, slug)
    kinds = [(verb, verb_label(verb)) for verb in selectors.history_kinds(access.project)]
    asked = {k: v for k, v in request.GET.items() if k != "page"}
    form = HistoryFilterForm(asked or None, kinds=kinds)
    narrowed = form.cleaned_data if form.is_bound and form.is_valid() else {}
    events = selectors.project_history_page(
        access.project,
        verb=narrowed.get("kind") or "",
        actor=(narrowed.get("actor") or "").strip(),
        since=narrowed.get("since"),
        until=narrowed.get("until"),
        page=request.GET.get("page"),
    )
    return render(
        request,
        "evaluations/project_history.html",
        {
            "access": access,
            "project": access.project,
            "form": form,
            "events": events.object_list,
            "events_page": events,
            "tab": "history",
        },
        status=422 if form.is_bound and form.errors else 200,
    )


@login_required
def catalog(request: AuthedHttpRequest) -> HttpResponse:
    return render(request, "evaluations/catalog.html", {"routes": selectors.catalog_routes()})


@login_required
@require_http_methods(["GET", "POST"])
def catalog_add(request: AuthedHttpRequest) -> HttpResponse:
    """A team adds its own route or product to the catalog, in both languages."""
    form = TeamSolutionForm(request.POST or None, initial={"kind": request.GET.get("kind")})
    if request.method == "POST" and form.is_valid():
        try:
            solution = services.team_solution_add(
                kind=form.cleaned_data["kind"],
                route=form.cleaned_data["route"],
                vendor=form.cleaned_data["vendor"],
                texts=form.texts(),
                actor=request.user,
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Added to the catalog: it can be shortlisted now."))
            return redirect(reverse("catalog") + f"#{solution.key}")
    return render(
        request,
        "evaluations/catalog_form.html",
        {"form": form, "solution": None},
        status=422 if form.is_bound and form.errors else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def catalog_edit(request: AuthedHttpRequest, key: str) -> HttpResponse:
    """Change a team's own entry (its author or staff)."""
    solution = get_object_or_404(Solution, key=key)
    if not solution.is_team_entry or not (
        request.user.is_staff or solution.added_by_id == request.user.pk
    ):
        raise PermissionDenied
    initial = {name: getattr(solution, name) for name in TeamSolutionForm.base_fields}
    form = TeamSolutionForm(request.POST or None, initial=initial, editing=True)
    if request.method == "POST" and form.is_valid():
        try:
            services.team_solution_update(
                solution=solution,
                route=form.cleaned_data["route"],
                vendor=form.cleaned_data["vendor"],
                texts=form.texts(),
                actor=request.user,
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Catalog entry saved."))
            return redirect(reverse("catalog") + f"#{solution.key}")
    return render(
        request,
        "evaluations/catalog_form.html",
        {"form": form, "solution": solution},
        status=422 if form.is_bound and form.errors else 200,
    )
