"""What every procurement page needs: who may edit, and which candidates are shown."""

from django.core.exceptions import PermissionDenied

from evaluations import selectors as evaluation_selectors
from evaluations.models import Candidate, Project
from evaluations.selectors import ProjectAccess
from reports.procurement import selectors
from workbench.forms import FlagForm
from workbench.typing import AuthedHttpRequest


def editor_access(request: AuthedHttpRequest, slug: str) -> ProjectAccess:
    """Procurement, business and project admins change terms (and open their forms); every
    member reads them."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    if not selectors.can_edit_terms(access):
        raise PermissionDenied
    return access


def candidates_shown(project: Project, request: AuthedHttpRequest) -> list[Candidate]:
    return evaluation_selectors.candidates_in_play(
        project, include_all=FlagForm("all", request.GET).set
    )
