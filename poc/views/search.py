"""Search across the projects a person belongs to."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render

from poc import selectors
from poc.forms import SearchForm
from workbench.typing import AuthedHttpRequest


@login_required
def search(request: AuthedHttpRequest) -> HttpResponse:
    """Candidates, acceptance actions and results' notes, causes and runs that contain the
    words, in the person's projects only."""
    form = SearchForm(request.GET or None)
    hits = selectors.search(request.user, form.cleaned_data["q"]) if form.is_valid() else None
    return render(
        request,
        "poc/search.html",
        {"form": form, "hits": hits},
        status=422 if form.errors else 200,
    )
