"""Who may read or write a project through the API: its members (session) or its tokens."""

from django.contrib.auth.models import User
from django.http import Http404
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request

from evaluations.models import ApiToken, Project, TokenScope
from evaluations.selectors import is_member, project_access, projects_for_user


def request_token(request: Request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


def request_person(request: Request) -> User | None:
    """The signed-in person behind a request, or None when a token (or nobody) speaks."""
    if request_token(request) is not None or not isinstance(request.user, User):
        return None
    return request.user


def signed_in_person(request: Request) -> User:
    """The signed-in person behind a request; 403 when there is none (a token, nobody)."""
    person = request_person(request)
    if person is None:
        raise PermissionDenied("this needs a person's session")
    return person


def api_project(request: Request, slug: str, *, scope: str = TokenScope.READ) -> Project:
    """The project for this caller, or 404 exactly as for a non-member; 403 for a member or
    token that lacks the right (an observer, a read-only token)."""
    token = request_token(request)
    if token is not None:
        if token.project.slug != slug:
            raise Http404
        if scope not in token.scopes:
            raise PermissionDenied(f"this token lacks the {str(scope)!r} scope")
        return token.project
    access = project_access(request.user, slug)
    if scope != TokenScope.READ and not access.can_write:
        raise PermissionDenied("observers cannot post results")
    return access.project


def api_may_read(request: Request, slug: str) -> bool:
    """Whether this caller may read the project, without raising: a token of the project with
    the `read` scope, or a member."""
    token = request_token(request)
    if token is not None:
        return token.project.slug == slug and TokenScope.READ in token.scopes
    return is_member(request.user, slug)


def api_projects(request: Request) -> list[Project]:
    """The projects this caller may read: a token's own (with the `read` scope, else 403, as
    for one project), or a person's."""
    token = request_token(request)
    if token is not None:
        if TokenScope.READ not in token.scopes:
            raise PermissionDenied(f"this token lacks the {str(TokenScope.READ)!r} scope")
        return [token.project]
    return list(projects_for_user(request.user))
