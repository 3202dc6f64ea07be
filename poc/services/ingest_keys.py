"""Candidate and action keys as pipelines write them: matched exactly, else without regard to
case where that names exactly one, and an unknown key answered with the keys that exist (the
closest one first), so that whoever wrote the pipeline can fix it from the answer alone."""

import difflib
from collections.abc import Iterable, Mapping

from evaluations.models import AcceptanceAction, ActionKeyRename, Candidate, Project

LISTED = 20  # keys named in an answer; the rest are counted
SUGGESTED_FOR = 50  # distinct unknown keys that get a "did you mean" (it compares with each key)


def by_key[T](known: Mapping[str, T], given: str) -> T | None:
    """`known[given]`, else the one entry whose key equals it without regard to case."""
    found = known.get(given)
    if found is not None:
        return found
    folded = given.casefold()
    matches = [value for key, value in known.items() if key.casefold() == folded]
    return matches[0] if len(matches) == 1 else None


class Unknown:
    """Messages for keys that name nothing, each distinct key's worked out once."""

    def __init__(self, kind: str, keys: Iterable[str]) -> None:
        self.kind = kind
        self.keys = sorted(set(keys))
        self._said: dict[str, str] = {}

    def __call__(self, given: object) -> str:
        text = str(given)[:100]
        if text not in self._said:
            close = (
                difflib.get_close_matches(text, self.keys, n=1, cutoff=0.6)
                if isinstance(given, str) and len(self._said) < SUGGESTED_FOR
                else []
            )
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            listed = ", ".join(self.keys[:LISTED])
            if len(self.keys) > LISTED:
                listed += f", … ({len(self.keys)} in all)"
            self._said[text] = f"unknown {self.kind} {text!r} in this project{hint}; " + (
                f"its {self.kind}s are: {listed}" if self.keys else f"it has no {self.kind}"
            )
        return self._said[text]


def candidates_by_slug(project: Project) -> dict[str, Candidate]:
    return {c.slug: c for c in project.candidates.all()}


def actions_by_key(project: Project, keys: set[str]) -> tuple[dict[str, AcceptanceAction], Unknown]:
    """The actions the given keys name (a key renamed since a pipeline was written still reaches
    its action; a key in another case reaches the one action it names), and the messages for
    the keys that name none."""
    found = {a.key: a for a in AcceptanceAction.objects.filter(project=project, key__in=keys)}
    missing = keys - set(found)
    if missing:  # keys renamed since the pipeline was written still reach their action
        for rename in (
            ActionKeyRename.objects.filter(project=project, old_key__in=missing)
            .select_related("action")
            .order_by("renamed_at", "pk")
        ):
            found[rename.old_key] = rename.action
    missing = keys - set(found)
    every: dict[str, AcceptanceAction] = {}
    if missing:
        every = {a.key: a for a in AcceptanceAction.objects.filter(project=project)}
        for key in missing:
            action = by_key(every, key)
            if action is not None:
                found[key] = action
    return found, Unknown("action key", every)
