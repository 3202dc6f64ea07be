"""Browser pages for procurement sheets: generate, follow rendering, sign off, download,
verify, and export the tables for spreadsheets."""

from collections.abc import Callable

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone, translation
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from evaluations import selectors as evaluation_selectors
from evaluations import services as evaluation_services
from evaluations.models import Project, TeamRole
from evaluations.selectors import ProjectAccess
from reports import cost_exports, exports, selectors, services, signing
from reports.forms import (
    AcknowledgeForm,
    RecommendationForm,
    ReviewFreezeForm,
    SheetGenerateForm,
    SigningRolesForm,
    SignOffForm,
    VerifyForm,
    WithdrawForm,
)
from reports.models import Decision, Layout, Sheet, SheetStatus
from reports.review import decision_review
from reports.verify import verify_pdf
from workbench.forms import form_add_service_error
from workbench.typing import AuthedHttpRequest


def _candidate_choices(project: Project) -> list[tuple[str, str]]:
    return [
        (c.slug, f"{c.solution.name} {c.version}".strip())
        for c in evaluation_selectors.shortlist_candidates(project)
    ]


def _sheets_page(
    request: AuthedHttpRequest,
    access: ProjectAccess,
    *,
    form: SheetGenerateForm | None = None,
    roles_form: SigningRolesForm | None = None,
    recommendation_form: RecommendationForm | None = None,
) -> HttpResponse:
    project = access.project
    invalid = any(f is not None and f.is_bound for f in (form, roles_form, recommendation_form))
    sheets, sheets_page = selectors.sheets_page_with_staleness(project, request.GET.get("page"))
    names = dict(_candidate_choices(project))  # a revision names its products, not their slugs
    rows = [(s, stale, [names.get(c, c) for c in s.candidate_slugs]) for s, stale in sheets]
    context = {
        "access": access,
        "project": project,
        "tab": "sheets",
        "form": form
        or SheetGenerateForm(
            candidates=_candidate_choices(project),
            # In the language of whoever asks for it, which they may change.
            initial={"language": "zh-hans" if get_language().startswith("zh") else "en"},
        ),
        "roles_form": roles_form or _signing_roles_form(project),
        "missing": selectors.sheet_missing(project, selectors.sheet_candidates(project, [])),
        "freeze_form": ReviewFreezeForm(initial={"frozen": project.review_freeze}),
        "recommendation_form": recommendation_form or _recommendation_form(project),
        "signing_roles": [TeamRole(r).label for r in project.signing_roles],
        "unheld_roles": [
            TeamRole(r).label for r in selectors.signing_roles_without_holder(project)
        ],
        "sheets": rows,
        "sheets_page": sheets_page,
        "tables": exports.TABLE_LABELS.items(),
        "review": decision_review(project),
    }
    return render(request, "reports/sheets.html", context, status=422 if invalid else 200)


def _signing_roles_form(project: Project) -> SigningRolesForm:
    return SigningRolesForm(
        initial={
            "signing_roles": project.signing_roles,
            "one_signer_many_roles": project.one_signer_many_roles,
        }
    )


def _recommendation_form(project: Project) -> RecommendationForm:
    return RecommendationForm(
        candidates=_candidate_choices(project),
        initial={
            "candidates": project.recommended,
            "reason": project.recommendation_reason,
            "conditions": project.recommendation_conditions,
            "review_by": project.review_by,
            "reopen_when": project.reopen_when,
        },
    )


@login_required
def progress(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Where the evaluation stands: the method's steps, done or not, and what comes next
    (loaded into the project overview)."""
    access = evaluation_selectors.project_access(request.user, slug)
    context = {
        "access": access,
        "project": access.project,
        "tab": "overview",
        "progress": selectors.evaluation_progress(access.project),
        "review": decision_review(access.project),
    }
    if request.htmx:
        return render(request, "reports/progress.html#card", context)
    return render(request, "reports/progress.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def sheets(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, write=request.method == "POST")
    if request.method != "POST":
        return _sheets_page(request, access)
    form = SheetGenerateForm(request.POST, candidates=_candidate_choices(access.project))
    if form.is_valid():
        try:
            sheet = services.sheet_generate(
                project=access.project,
                language=form.cleaned_data["language"],
                candidate_slugs=form.cleaned_data["candidates"],
                actor=request.user,
                layout=Layout.FULL if form.cleaned_data["print_every_result"] else Layout.DECISION,
                acknowledgement=form.cleaned_data["acknowledgement"],
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            return redirect("reports:sheet", slug=slug, revision=sheet.revision)
    return _sheets_page(request, access, form=form)


@login_required
@require_POST
def sheet_roles(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Which team roles sign this project's sheets (project admins)."""
    access = evaluation_selectors.project_access(request.user, slug, admin=True)
    form = SigningRolesForm(request.POST)
    if form.is_valid():
        try:
            evaluation_services.project_signing_roles_set(
                project=access.project,
                roles=form.cleaned_data["signing_roles"],
                one_signer_many_roles=form.cleaned_data["one_signer_many_roles"],
                actor=request.user,
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Signing roles saved."))
            return redirect("reports:sheets", slug=slug)
    return _sheets_page(request, access, roles_form=form)


@login_required
@require_POST
def sheet_recommendation(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The team's recommendation, which each new revision freezes."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    form = RecommendationForm(request.POST, candidates=_candidate_choices(access.project))
    if form.is_valid():
        try:
            evaluation_services.project_recommendation_set(
                project=access.project,
                candidates=form.cleaned_data["candidates"],
                conditions=form.cleaned_data["conditions"],
                reason=form.cleaned_data["reason"],
                actor=request.user,
                review_by=form.cleaned_data["review_by"],
                reopen_when=form.cleaned_data["reopen_when"],
            )
        except ValidationError as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, _("Recommendation saved."))
            return redirect("reports:sheets", slug=slug)
    return _sheets_page(request, access, recommendation_form=form)


@login_required
@require_POST
def sheet_freeze(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Turn the freeze for sign-off on or off (project admins)."""
    access = evaluation_selectors.project_access(request.user, slug, admin=True)
    form = ReviewFreezeForm(request.POST)
    form.is_valid()  # a lone checkbox: absent means off
    project = services.review_freeze_set(
        project=access.project, frozen=bool(form.cleaned_data.get("frozen")), actor=request.user
    )
    if project.frozen_revision is not None:
        messages.success(
            request,
            _("Frozen for the sign-off of r%(revision)s.") % {"revision": project.frozen_revision},
        )
    elif project.review_freeze:
        messages.success(request, _("Frozen for sign-off: the next revision will hold it."))
    else:
        messages.success(request, _("The freeze is lifted."))
    return redirect("reports:sheets", slug=slug)


def _reason_posted(
    request: AuthedHttpRequest,
    form: forms.Form,
    act: Callable[[str], object],
    done: str,
) -> None:
    """Run a service that takes the form's reason; its outcome as a message on the page."""
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for es in form.errors.values() for e in es))
        return
    try:
        act(form.cleaned_data["reason"])
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, done)


@login_required
@require_POST
def sheet_withdraw(request: AuthedHttpRequest, slug: str, revision: int) -> HttpResponse:
    """Take an open revision out of sign-off (project admins, or whoever generated it)."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    current = selectors.sheet_for_project(access.project, revision)
    if not access.is_admin and current.generated_by_id != request.user.pk:
        raise PermissionDenied
    _reason_posted(
        request,
        WithdrawForm(request.POST),
        lambda reason: services.sheet_withdraw(sheet=current, actor=request.user, reason=reason),
        _("Revision r%(revision)s is withdrawn.") % {"revision": revision},
    )
    return redirect("reports:sheet", slug=slug, revision=revision)


@login_required
@require_POST
def sheet_acknowledge(request: AuthedHttpRequest, slug: str, revision: int) -> HttpResponse:
    """Acknowledge what a revision lacked, with a reason (members who may edit)."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    current = selectors.sheet_for_project(access.project, revision)
    _reason_posted(
        request,
        AcknowledgeForm(request.POST),
        lambda reason: services.sheet_acknowledge(sheet=current, user=request.user, reason=reason),
        _("The gaps are acknowledged; the roles may now decide."),
    )
    return redirect("reports:sheet", slug=slug, revision=revision)


@login_required
@require_http_methods(["GET", "POST"])
def sheet(request: AuthedHttpRequest, slug: str, revision: int) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    current = selectors.sheet_for_project(access.project, revision)
    errors: list[str] = []
    if request.method == "POST":
        errors = _signoff_errors(request, current)
        if not errors:
            messages.success(request, _("Your decision is recorded."))
            return redirect("reports:sheet", slug=slug, revision=revision)
    # A page that polls a rendering sheet gets the comparisons only with its last answer.
    polling = request.htmx and current.status in (SheetStatus.PENDING, SheetStatus.RENDERING)
    review = selectors.sheet_review(current, request.user, access, with_changes=not polling)
    context = {
        "access": access,
        "project": access.project,
        "tab": "sheets",
        "sheet": current,
        "errors": errors,
        "decisions": Decision.choices,
        "tables": exports.TABLE_LABELS.items(),
        "role_labels": dict(TeamRole.choices),
        **{name: getattr(review, name) for name in REVIEW_FIELDS},
    }
    if review.previous is not None:
        context["previous"] = review.previous
        context["changes"] = review.changes
    if request.htmx:
        return render(request, "reports/sheet_status.html#status", context)
    return render(request, "reports/sheet_detail.html", context, status=422 if errors else 200)


# What the sheet page shows of the person's review of a revision (selectors.sheet_review).
REVIEW_FIELDS = (
    "decided",
    "stale",
    "since_freeze",
    "open_roles",
    "may_withdraw",
    "blocked_roles",
    "required",
    "stuck",
    "rejections",
)


def _signoff_errors(request: AuthedHttpRequest, sheet: Sheet) -> list[str]:
    """Record the person's decision on the revision; what was wrong with it, if anything."""
    form = SignOffForm(request.POST)
    if not form.is_valid():
        return [str(e) for es in form.errors.values() for e in es]
    try:
        services.signoff_record(sheet=sheet, user=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return list(exc.messages)
    return []


@login_required
def sheet_pdf(request: AuthedHttpRequest, slug: str, revision: int) -> FileResponse:
    """The sealed PDF once signed, else the draft; members only, always as a download."""
    access = evaluation_selectors.project_access(request.user, slug)
    current = selectors.sheet_for_project(access.project, revision)
    handle = selectors.sheet_file(current)
    suffix = "signed" if current.sealed_pdf else "draft"
    return FileResponse(
        handle,
        as_attachment=True,
        content_type="application/pdf",
        filename=f"{slug}-r{revision}-{suffix}.pdf",
    )


@login_required
@require_http_methods(["GET", "POST"])
def verify(request: AuthedHttpRequest) -> HttpResponse:
    form = VerifyForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > settings.SHEET_VERIFY_MAX_BYTES:
            form.add_error("file", _("The file is larger than 100 MB."))
        else:
            report = verify_pdf(
                upload.read(),
                trusted_pem=signing.trusted_certificate_pem(),
                # Whether a revision is stored here is for that project's members only.
                may_compare=lambda slug: evaluation_selectors.is_member(request.user, slug),
            )
    return render(request, "reports/verify.html", {"form": form, "report": report})


@login_required
def export(request: AuthedHttpRequest, slug: str, table: str, fmt: str) -> HttpResponse:
    """A table of the project's current data."""
    access = evaluation_selectors.project_access(request.user, slug)
    if fmt not in ("csv", "xlsx") or (table == "costs-focus" and fmt != "csv"):
        raise Http404
    if table == "costs":
        rows = cost_exports.people_rows(access.project)
    elif table == "costs-focus":
        return _focus_response(access.project, request.GET.get("start"), slug)
    elif table in exports.TABLES:
        snapshot = selectors.current_snapshot(access.project, get_language() or "en")
        rows = exports.table_rows(snapshot, table)
    else:
        raise Http404
    return _export_response(rows, f"{slug}-{table}", fmt, table)


def _focus_response(project: Project, start: str | None, slug: str) -> HttpResponse:
    """The cost lines with FOCUS columns, in English whatever the reader's language."""
    try:
        first = cost_exports.start_of(start, timezone.localdate())
    except cost_exports.BadStart:
        return HttpResponse(
            _("start must be a date, YYYY-MM-DD (the first day of the horizon)."),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    with translation.override("en"):
        rows = cost_exports.focus_rows(project, first)
    return _export_response(rows, f"{slug}-costs-focus", "csv", "costs-focus")


@login_required
def sheet_export(
    request: AuthedHttpRequest, slug: str, revision: int, table: str, fmt: str
) -> HttpResponse:
    """A table as this revision froze it: the numbers its signers approved."""
    access = evaluation_selectors.project_access(request.user, slug)
    current = selectors.sheet_for_project(access.project, revision)
    if table not in exports.TABLES or fmt not in ("csv", "xlsx"):
        raise Http404
    rows = exports.table_rows(current.snapshot, table)
    return _export_response(rows, f"{slug}-r{revision}-{table}", fmt, table)


def _export_response(rows: list[list[object]], name: str, fmt: str, table: str) -> HttpResponse:
    if fmt == "csv":
        response = HttpResponse(exports.to_csv(rows), content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse(
            exports.to_xlsx(rows, table),
            content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        )
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@login_required
@require_POST
def sheet_retry(request: AuthedHttpRequest, slug: str, revision: int) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    current = selectors.sheet_for_project(access.project, revision)
    queued = services.sheet_retry(sheet=current, actor=request.user)
    if queued == "render":
        messages.success(request, _("Rendering was queued again."))
    elif queued == "seal":
        messages.success(request, _("Sealing was queued again."))
    else:
        messages.info(request, _("This revision is not waiting on anything to retry."))
    return redirect("reports:sheet", slug=slug, revision=revision)
