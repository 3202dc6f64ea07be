"""The responsibility grid: who carries each area for each candidate, and assigning a row, a
column or a selection of its cells in one post (the grid swapped in place with htmx; a post and
a redirect without JavaScript). One cell at a time is responsibility_edit, in results.py."""

from dataclasses import dataclass, field

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from evaluations import selectors as evaluation_selectors
from evaluations.models import Candidate
from poc import selectors, services
from poc.forms import CellSelectionForm, ResponsibilityBulkForm, cell_key
from poc.models import Party, Responsibility, ResponsibilityArea
from workbench.forms import form_add_service_error
from workbench.typing import AuthedHttpRequest

TEMPLATE = "poc/responsibilities.html"
BULK_IDS = "bulk-%s"  # the bulk form's ids, apart from those of the one-cell editor's form


@dataclass
class Picked:
    """What the person had ticked, kept when a bulk assignment is refused."""

    cells: set[str] = field(default_factory=set)
    rows: set[str] = field(default_factory=set)
    columns: set[str] = field(default_factory=set)


@dataclass
class GridCell:
    candidate: Candidate
    responsibility: Responsibility | None
    key: str
    picked: bool


@login_required
def responsibilities(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The responsibility grid: every area for every candidate in play, gaps marked."""
    access = evaluation_selectors.project_access(request.user, slug)
    return _grid(request, access)


@login_required
@require_http_methods(["GET", "POST"])
def responsibilities_assign(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """POST: give the ticked cells, rows and columns one party, person, escalation and kind of
    delivery, all or nothing. GET: the grid (where a refused post without JavaScript lands)."""
    write = request.method == "POST"
    access = evaluation_selectors.project_access(request.user, slug, write=write)
    if not write:
        return _grid(request, access)
    form = ResponsibilityBulkForm(request.POST, auto_id=BULK_IDS)
    candidates = evaluation_selectors.candidates_in_play(access.project)
    selection = CellSelectionForm(request.POST, candidates=candidates)
    done = _assigned(request, access, form, selection)
    if done is None:
        picked = Picked(
            set(request.POST.getlist("cell")),
            set(request.POST.getlist("row")),
            set(request.POST.getlist("column")),
        )
        return _grid(request, access, form=form, picked=picked, status=422)
    message = assigned_message(done, form.cleaned_data["party"], form.cleaned_data["person"])
    if not request.htmx:
        messages.success(request, message)
        return redirect("poc:responsibilities", slug=slug)
    return _grid(request, access, confirmation=message)


def _assigned(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    form: ResponsibilityBulkForm,
    selection: CellSelectionForm,
) -> services.BulkAssignment | None:
    """Assign through the service; None when the form, the selection or the service refused
    (every reason then on the form, nothing written)."""
    form.is_valid()
    if not selection.is_valid():
        for errors in selection.errors.values():
            for error in errors:
                form.add_error(None, error)
    if form.errors:
        return None
    try:
        return services.responsibilities_assign(
            project=access.project,
            cells=selection.cells(),
            actor=request.user,
            **form.cleaned_data,
        )
    except ValidationError as exc:
        form_add_service_error(form, exc)
        return None


def assigned_message(done: services.BulkAssignment, party: str, person: str) -> str:
    """What a bulk assignment did ("5 cells assigned to Vendor · Jane Doe."), and how many
    cells already held it."""
    names = {"party": Party(party).label, "person": person.strip()}
    if not done.changed:
        return _("Nothing changed: every chosen cell already held %(party)s · %(person)s.") % names
    count = len(done.changed)
    text = ngettext(
        "%(count)s cell assigned to %(party)s · %(person)s.",
        "%(count)s cells assigned to %(party)s · %(person)s.",
        count,
    ) % {"count": count, **names}
    if kept := len(done.unchanged):
        text += " " + ngettext(
            "%(count)s cell already held it and was left as it was.",
            "%(count)s cells already held it and were left as they were.",
            kept,
        ) % {"count": kept}
    return text


def _grid(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    *,
    form: ResponsibilityBulkForm | None = None,
    picked: Picked | None = None,
    confirmation: str = "",
    status: int = 200,
) -> HttpResponse:
    """The grid page; after a bulk post with htmx, the grid alone (and the confirmation, out
    of band into the page's live region)."""
    picked = picked or Picked()
    summaries = selectors.comparison_overview(access.project, list_limit=0)
    rows = [
        (value, label, value in picked.rows, _grid_cells(summaries, value, picked))
        for value, label in ResponsibilityArea.choices
    ]
    partial = bool(request.htmx) and request.method == "POST"
    context = {
        "access": access,
        "project": access.project,
        "tab": "responsibilities",
        "summaries": summaries,
        "rows": rows,
        "bulk_form": form or ResponsibilityBulkForm(auto_id=BULK_IDS),
        "picked": picked,
        "confirmation": confirmation,
        "oob": partial,
    }
    return render(request, TEMPLATE + ("#grid" if partial else ""), context, status=status)


def _grid_cells(
    summaries: list[selectors.CandidateOverview], area: str, picked: Picked
) -> list[GridCell]:
    cells = []
    for summary in summaries:
        key = cell_key(summary.candidate, area)
        cells.append(
            GridCell(
                candidate=summary.candidate,
                responsibility=summary.responsibilities.get(area),
                key=key,
                picked=key in picked.cells,
            )
        )
    return cells
