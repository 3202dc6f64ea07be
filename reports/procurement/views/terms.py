"""Pages of procurement: the candidates' terms side by side, a group of one candidate's terms to
edit, a term's history, and what is still to be confirmed with who chases it."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from evaluations import selectors as evaluation_selectors
from evaluations.models import Candidate
from reports.procurement import selectors, services
from reports.procurement.forms import ConfirmationForm, TermsForm
from reports.procurement.models import Confirmation
from reports.procurement.selectors import subjects
from reports.procurement.terms import BY_KEY, Group, terms_in
from reports.procurement.views.common import candidates_shown, editor_access
from workbench.forms import form_add_service_error
from workbench.typing import AuthedHttpRequest


@login_required
def terms(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    table = selectors.terms_table(candidates_shown(access.project, request))
    context = {
        "access": access,
        "project": access.project,
        "tab": "terms",
        "table": table,
        "open_counts": [table.open_count(c) for c in table.candidates],
        "can_edit": selectors.can_edit_terms(access),
    }
    return render(request, "procurement/terms.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def terms_edit(
    request: AuthedHttpRequest, slug: str, candidate_slug: str, group: str
) -> HttpResponse:
    access = editor_access(request, slug)
    candidate = selectors.candidate_in_project(access.project, candidate_slug)
    if group not in Group.values:
        raise Http404
    current = {cell.term.key: cell.entry for cell in selectors.candidate_terms(candidate, group)}
    form = TermsForm(
        request.POST or None,
        terms=terms_in(group),
        current={k: v for k, v in current.items() if v is not None},
    )
    if request.method == "POST" and _terms_saved(request, form, candidate):
        return redirect(reverse("procurement:terms", kwargs={"slug": slug}) + f"#g-{group}")
    context = {
        "access": access,
        "project": access.project,
        "tab": "terms",
        "candidate": candidate,
        "group_label": Group(group).label,
        "form": form,
    }
    return render(
        request, "procurement/terms_edit.html", context, status=422 if form.errors else 200
    )


def _terms_saved(request: AuthedHttpRequest, form: TermsForm, candidate: Candidate) -> bool:
    if not form.is_valid():
        return False
    try:
        made = services.terms_record(
            candidate=candidate,
            changes=form.changes(),
            actor=request.user,
            reason=form.cleaned_data["reason"],
        )
    except ValidationError as exc:
        form_add_service_error(form, exc)
        return False
    done = (
        ngettext("%(count)s term recorded.", "%(count)s terms recorded.", len(made))
        % {"count": len(made)}
        if made
        else _("No change.")
    )
    messages.success(request, done)
    return True


@login_required
def term_history(
    request: AuthedHttpRequest, slug: str, candidate_slug: str, key: str
) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    candidate = selectors.candidate_in_project(access.project, candidate_slug)
    entries = selectors.term_history(candidate, key)
    context = {
        "access": access,
        "project": access.project,
        "tab": "terms",
        "candidate": candidate,
        "term": BY_KEY[key],
        "entries": [(entry, selectors.term_display(BY_KEY[key], entry.value)) for entry in entries],
    }
    return render(request, "procurement/term_history.html", context)


@login_required
def to_confirm(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug)
    candidates = candidates_shown(access.project, request)
    context = {
        "access": access,
        "project": access.project,
        "tab": "terms",
        "items": selectors.open_items(access.project, candidates),
        "others": subjects.other_open_items(access.project, candidates, timezone.localdate()),
        "can_edit": selectors.can_edit_terms(access),
    }
    return render(request, "procurement/to_confirm.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def confirmation_edit(
    request: AuthedHttpRequest, slug: str, candidate_slug: str, key: str
) -> HttpResponse:
    access = editor_access(request, slug)
    candidate = selectors.candidate_in_project(access.project, candidate_slug)
    subject = subjects.subject_of(key)
    if subject.startswith("term:"):
        chase = selectors.open_chase(candidate, key)
        what = str(BY_KEY[key].label)
    else:
        what = subjects.subject_label(access.project, candidate, subject, timezone.localdate())
        chase = Confirmation.objects.filter(
            candidate=candidate, subject=subject, closed_at=None
        ).first()
    members = selectors.project_people(access.project)
    form = ConfirmationForm(
        request.POST or None, initial=selectors.chase_initial(chase), members=members
    )
    if request.method == "POST" and _chase_saved(request, form, candidate, subject):
        return redirect(reverse("procurement:to_confirm", kwargs={"slug": slug}))
    context = {
        "access": access,
        "project": access.project,
        "tab": "terms",
        "candidate": candidate,
        "what": what,
        "form": form,
    }
    return render(
        request, "procurement/confirmation_edit.html", context, status=422 if form.errors else 200
    )


def _chase_saved(
    request: AuthedHttpRequest, form: ConfirmationForm, candidate: Candidate, subject: str
) -> bool:
    if not form.is_valid():
        return False
    try:
        services.confirmation_set(
            candidate=candidate, subject=subject, actor=request.user, **form.cleaned_data
        )
    except ValidationError as exc:
        form_add_service_error(form, exc)
        return False
    messages.success(request, _("Saved."))
    return True
