"""How many revisions may wait for the worker at once. Rendering takes seconds of a worker's
time, so generating is refused, naming the cap, while too many wait: per project (the team has
caught up with its own), per person (whoever can make projects could otherwise queue a project's
worth each time) and per instance (everyone together, about twice what the workers can lay out
at once). The caps per person and per instance are settings (SHEET_RENDERS_PER_PERSON,
SHEET_RENDERS_PER_INSTANCE)."""

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from evaluations.models import ApiToken, Project
from reports.selectors import renders_waiting


class TooManyRenders(ValidationError):
    """Too many sheets wait for the worker already (for the project, the person or everyone)."""


def render_room_check(
    project: Project, actor: User | None, token: ApiToken | None, *, per_project: int
) -> None:
    """Raise TooManyRenders when one more revision would exceed a cap."""
    person = token.created_by if token is not None else actor
    waiting = renders_waiting(
        project, person if person is not None and person.is_authenticated else None
    )
    if waiting.project >= per_project:
        raise TooManyRenders(
            _(
                "%(count)s sheets of this project are still waiting to be rendered: try again "
                "once they are ready."
            )
            % {"count": waiting.project}
        )
    if waiting.person is not None and waiting.person >= settings.SHEET_RENDERS_PER_PERSON:
        raise TooManyRenders(
            _(
                "%(count)s sheets you asked for (in any project) are still waiting to be "
                "rendered: try again once they are ready."
            )
            % {"count": waiting.person}
        )
    if waiting.everyone >= settings.SHEET_RENDERS_PER_INSTANCE:
        raise TooManyRenders(
            _(
                "%(count)s sheets are waiting to be rendered on this instance, as many as it "
                "takes at once: try again in a minute."
            )
            % {"count": waiting.everyone}
        )
