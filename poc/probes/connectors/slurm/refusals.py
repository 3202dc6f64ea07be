"""Telling a refusal of the GPU count from other refusals in Slurm's words."""

from __future__ import annotations

from collections.abc import Iterable

# Submit failures that say nothing about the request: the controller was not reached or did
# not accept the caller. They are errors of the check, not the refusal it looks for.
_NOT_A_REFUSAL = (
    "unable to contact",
    "socket timed out",
    "authentication",
    "communication",
    "connection",
    "unspecified error",
    "invalid user",
    "access denied",
    "zero bytes were transmitted",
)


def is_refusal(reason: str) -> bool:
    low = reason.lower()
    return bool(low) and not any(marker in low for marker in _NOT_A_REFUSAL)


# Refusals of the way the request was written (a site that demands a GPU type, a GRES syntax
# the configuration does not take): the controller never weighed the GPU count, so the
# scenario did not run. The site's own message says what it wants.
_REQUEST_FORM = (
    "invalid generic resource",
    "gres specification",
    "unsupported by configured",
    "specify a type",
    "gres format",
    "invalid gres",
    "trackable resource (tres) specification",
)


def form_refusal(texts: Iterable[str]) -> bool:
    return any(marker in text.lower() for text in texts for marker in _REQUEST_FORM)


# Slurm's refusals of the submitter, not of the size of the request (slurm_errno.c): the account,
# partition, QOS, time limit or reservation, or submissions closed. The GPU count was never
# weighed. ("Job violates accounting/QOS policy" is not among them: a GPU limit says that too.)
_NOT_THE_GPU_COUNT = (
    "invalid account",
    "invalid partition",
    "invalid qos",
    "invalid wckey",
    "time limit is invalid",
    "no partition specified",
    "access/permission denied",
    "not permitted to use this partition",
    "partition not available",
    "partition in down state",
    "requested reservation",
    "submissions disabled",
    "qos usage threshold",
)


def other_refusal(texts: Iterable[str]) -> bool:
    return any(marker in text.lower() for text in texts for marker in _NOT_THE_GPU_COUNT)
