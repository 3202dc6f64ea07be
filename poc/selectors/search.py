"""Search across the projects a person may see."""

from dataclasses import dataclass

from django.db.models import (
    Q,
)

from evaluations import selectors as evaluation_selectors
from evaluations.models import (
    AcceptanceAction,
    Candidate,
)
from poc.models import (
    Result,
)
from workbench.typing import AnyUser

SEARCH_LIMIT = 30


@dataclass
class SearchHits:
    query: str
    candidates: list[Candidate]
    actions: list[AcceptanceAction]
    results: list[Result]

    @property
    def total(self) -> int:
        return len(self.candidates) + len(self.actions) + len(self.results)


def search(user: AnyUser, query: str, *, limit: int = SEARCH_LIMIT) -> SearchHits:
    """Candidates, acceptance actions and results whose words contain `query`, in the projects
    `user` is a member of only (newest results first; at most `limit` of each kind)."""
    projects = evaluation_selectors.projects_for_user(user).values("pk")
    candidates = list(
        Candidate.objects.filter(project__in=projects)
        .filter(
            Q(slug__icontains=query)
            | Q(solution__name_en__icontains=query)
            | Q(solution__name_zh__icontains=query)
            | Q(version__icontains=query)
            | Q(reason__icontains=query)
        )
        .select_related("project", "solution")
        .order_by("project__name", "position", "pk")[:limit]
    )
    actions = list(
        AcceptanceAction.objects.filter(project__in=projects)
        .filter(
            Q(key__icontains=query)
            | Q(question__icontains=query)
            | Q(pass_criterion__icontains=query)
            | Q(requirement__feature__icontains=query)
            | Q(translations__icontains=query)
        )
        .select_related("project", "requirement")
        .order_by("project__name", "requirement__position", "position", "pk")[:limit]
    )
    results = list(
        Result.objects.filter(project__in=projects)
        .filter(
            Q(note__icontains=query)
            | Q(failure_cause__icontains=query)
            | Q(integration_what__icontains=query)
            | Q(change_reason__icontains=query)
            | Q(run_reference__icontains=query)
        )
        .select_related("project", "candidate__solution", "action", "recorded_by")
        .order_by("-recorded_at", "-pk")[:limit]
    )
    return SearchHits(query, candidates, actions, results)
