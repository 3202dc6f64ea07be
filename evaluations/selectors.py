"""Reads shared by pages, API and commands; related rows are fetched here and nowhere else."""

from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Prefetch, QuerySet
from django.http import Http404

from evaluations.models import (
    Candidate,
    Membership,
    Project,
    ProjectEvent,
    Solution,
    SolutionKind,
    TeamRole,
    Tier,
)
from workbench.typing import AnyUser


@dataclass(frozen=True)
class ProjectAccess:
    """A project as one user may see it: their team roles and whether they administer it."""

    project: Project
    roles: tuple[str, ...]
    is_admin: bool

    @property
    def can_write(self) -> bool:
        return self.is_admin or any(role != TeamRole.OBSERVER for role in self.roles)

    def role_labels(self) -> list[str]:
        labels = dict(TeamRole.choices)
        return [str(labels[role]) for role in self.roles]


def projects_for_user(user: AnyUser) -> QuerySet[Project]:
    """The projects a user is a member of, with their memberships and candidate counts."""
    if not user.is_authenticated:
        return Project.objects.none()
    return (
        Project.objects.filter(memberships__user=user)
        .distinct()
        .annotate(candidate_count=Count("candidates", distinct=True))
        .prefetch_related(
            Prefetch(
                "memberships",
                queryset=Membership.objects.filter(user=user),
                to_attr="my_memberships",
            )
        )
        .order_by("name")
    )


def project_access(
    user: AnyUser, slug: str, *, write: bool = False, admin: bool = False
) -> ProjectAccess:
    """The project for a member, or Http404 for anyone else (never a hint that it exists).

    A member without the right to write (an observer) gets PermissionDenied for writes; only
    project admins pass `admin=True`.
    """
    if not user.is_authenticated:
        raise Http404
    memberships = list(
        Membership.objects.filter(user=user, project__slug=slug).select_related("project")
    )
    if not memberships:
        raise Http404
    access = ProjectAccess(
        project=memberships[0].project,
        roles=tuple(sorted({m.role for m in memberships}, key=_role_order)),
        is_admin=any(m.is_admin for m in memberships),
    )
    if admin and not access.is_admin:
        raise PermissionDenied
    if write and not access.can_write:
        raise PermissionDenied
    return access


def project_for_user(user: AnyUser, slug: str, *, write: bool = False) -> Project:
    return project_access(user, slug, write=write).project


def _role_order(role: str) -> int:
    return TeamRole.values.index(role)


@dataclass
class Shortlist:
    """A project's candidates split into the three tiers, in display order."""

    columns: list[tuple[str, str, list[Candidate]]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(len(candidates) for _, _, candidates in self.columns)


def shortlist_for_project(project: Project) -> Shortlist:
    candidates = list(
        Candidate.objects.filter(project=project).select_related("solution", "solution__route")
    )
    shortlist = Shortlist()
    for tier, label in Tier.choices:
        shortlist.columns.append((tier, str(label), [c for c in candidates if c.tier == tier]))
    return shortlist


def candidate_for_project(project: Project, slug: str) -> Candidate:
    try:
        return Candidate.objects.select_related("solution", "solution__route").get(
            project=project, slug=slug
        )
    except Candidate.DoesNotExist:
        raise Http404 from None


def catalog_routes() -> list[Solution]:
    """Routes with their products, in catalog order."""
    products = Solution.objects.filter(kind=SolutionKind.PRODUCT).order_by("position", "key")
    return list(
        Solution.objects.filter(kind=SolutionKind.ROUTE)
        .prefetch_related(Prefetch("products", queryset=products))
        .order_by("position", "key")
    )


def catalog_solutions() -> QuerySet[Solution]:
    return Solution.objects.select_related("route").order_by("kind", "position", "key")


def project_members(project: Project) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(project=project)
        .select_related("user")
        .order_by("user__username", "role")
    )


def project_events(project: Project, *, limit: int = 50) -> list[ProjectEvent]:
    return list(ProjectEvent.objects.filter(project=project).select_related("actor")[:limit])
