"""The project history: every service appends what it changed."""

from typing import Any

from django.contrib.auth.models import User

from evaluations.models import (
    Project,
    ProjectEvent,
)


def event_record(
    *,
    project: Project,
    actor: User | None,
    verb: str,
    subject: str = "",
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> ProjectEvent:
    """Append to a project's history. Called inside the service that made the change."""
    return ProjectEvent.objects.create(
        project=project,
        actor=actor if actor is not None and actor.is_authenticated else None,
        verb=verb,
        subject=subject[:255],
        before=before,
        after=after,
    )
