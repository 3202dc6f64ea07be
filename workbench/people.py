"""Who did something, as it is stored."""

from typing import Any

from django.contrib.auth.models import User


def stored_user(actor: Any) -> User | None:
    """The actor as a user row to store, or None: the system (no actor), an anonymous request,
    or a CI token speaking for nobody in particular."""
    return actor if actor is not None and actor.is_authenticated else None
