"""Freeze for sign-off: while a project is frozen and a revision of its sheet is open, edits to
what that revision froze (framing, shortlist, acceptance suite, responsibilities, boundaries)
are refused, naming the revision. Results are still recorded: they come after the freeze.

The sheet services keep `Project.frozen_revision` and `frozen_at` up to date; every service
that edits the frozen scope calls `scope_edit_guard` first, inside its transaction."""

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from evaluations.models import Project


class ScopeFrozen(ValidationError):
    """The edit would change what an open revision froze, and the project is frozen."""

    def __init__(self, revision: int) -> None:
        self.revision = revision
        super().__init__(
            _(
                "The project is frozen for the sign-off of revision r%(revision)s: this edit "
                "would change what it froze. It can be made once r%(revision)s is sealed, "
                "rejected or withdrawn, or once a project admin lifts the freeze."
            )
            % {"revision": revision},
            code="scope_frozen",
        )


def scope_edit_guard(project: Project | int) -> None:
    """Raise ScopeFrozen if edits to this project's frozen scope are refused now. Reads the
    row afresh (the caller's copy may predate the freeze)."""
    pk = project if isinstance(project, int) else project.pk
    row = Project.objects.filter(pk=pk).values_list("review_freeze", "frozen_revision").first()
    if row is not None and row[0] and row[1] is not None:
        raise ScopeFrozen(row[1])
