"""Words for the project history: what each recorded verb means, each field and value, and what
each entry is about, in the reader's language. The history stores codes (field names, choice
values) and names its subjects by parts, kinds and keys (a candidate's slug and catalog product,
a choice's value), named here when read; entries written before parts read their stored
subject, with the candidates and choices recognisable in it named."""

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.utils import translation
from django.utils.functional import Promise
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from evaluations.models import Candidate, Solution, TemplateSet
from workbench.languages import ENGLISH, product_language

VERB_LABELS = {
    "project.created": _("created the project"),
    "project.updated": _("changed the framing"),
    "project.phase": _("moved the phase with the project's state"),
    "project.signing_roles": _("chose who signs"),
    "project.recommendation": _("wrote the recommendation"),
    "project.review_freeze": _("froze or unfroze for sign-off"),
    "membership.set": _("gave a team role"),
    "membership.removed": _("removed a team role"),
    "account.deactivated": _("deactivated an account"),
    "candidate.added": _("shortlisted a candidate"),
    "candidate.updated": _("changed a candidate"),
    "candidate.moved": _("moved a candidate to another tier"),
    "candidate.removed": _("removed a candidate"),
    "requirement.created": _("added a requirement"),
    "requirement.updated": _("changed a requirement"),
    "requirement.deleted": _("deleted a requirement"),
    "action.created": _("added an acceptance action"),
    "action.updated": _("changed an acceptance action"),
    "action.renamed": _("renamed an acceptance action"),
    "action.deleted": _("deleted an acceptance action"),
    "action.reordered": _("moved an acceptance action up or down"),
    "requirement.reordered": _("moved a requirement up or down"),
    "template.applied": _("applied a template set"),
    "suite.imported": _("imported the acceptance suite"),
    "result.recorded": _("recorded a result"),
    "results.imported": _("imported results"),
    "evidence.attached": _("attached evidence"),
    "evidence.linked": _("linked evidence"),
    "responsibility.set": _("assigned a responsibility"),
    "responsibility.cleared": _("cleared a responsibility"),
    "boundary.updated": _("changed boundaries"),
    "terms.changed": _("changed terms"),
    "confirmation.updated": _("changed who confirms a term"),
    "costs.model_changed": _("changed the cost model"),
    "costs.line_added": _("added a cost line"),
    "costs.line_removed": _("removed a cost line"),
    "costs.lines_imported": _("imported cost lines"),
    "compatibility.claimed": _("stated a compatibility claim"),
    "token.created": _("created an API token"),
    "token.revoked": _("revoked an API token"),
    "cluster.registered": _("registered a cluster"),
    "cluster.changed": _("changed a cluster"),
    "cluster.deleted": _("deleted a cluster"),
    "cluster.host_key_pinned": _("pinned an SSH host key"),
    "probe.started": _("started a probe run"),
    "probe.finished": _("finished a probe run"),
    "probe.recorded": _("recorded probe facts"),
    "probe.cancelled": _("cancelled a probe run"),
    "probe.binding_set": _("bound a check to an action"),
    "probe.binding_reset": _("reset a check's binding"),
    "sheet.generated": _("generated a sheet revision"),
    "sheet.approve": _("approved a sheet revision"),
    "sheet.reject": _("rejected a sheet revision"),
    "sheet.sealed": _("sealed a sheet revision"),
    "audit.sealed": _("sealed the earlier history under the history key"),
    "sheet.gaps_acknowledged": _("acknowledged the gaps of a revision generated early"),
    "sheet.withdrawn": _("withdrew a sheet revision"),
    "sheet.retry_render": _("retried rendering"),
    "sheet.retry_seal": _("retried sealing"),
}
LOCAL_APPS = ("workbench", "evaluations", "poc", "reports")


@functools.cache
def _fields() -> dict[str, tuple[Any, dict[Any, Any]]]:
    """Field name -> (verbose name, choice labels), over every model of this project's apps."""
    found: dict[str, tuple[Any, dict[Any, Any]]] = {}
    for model in apps.get_models():
        if model._meta.app_label not in LOCAL_APPS:
            continue
        for field in model._meta.get_fields():
            name = getattr(field, "name", "")
            verbose = getattr(field, "verbose_name", None)
            choices = dict(getattr(field, "flatchoices", None) or [])
            if not name or verbose is None:
                continue
            label, known = found.get(name, (verbose, {}))
            found[name] = (label, {**choices, **known})
    return found


def verb_label(verb: str) -> str:
    label = VERB_LABELS.get(verb)
    return str(label) if label is not None else verb


def field_label(name: str) -> str:
    entry = _fields().get(name)
    if entry is None:
        return capfirst(name.replace("_", " "))
    return capfirst(str(entry[0]))


# Stored values that hold other things' keys: candidates by slug, team roles by code.
CANDIDATE_FIELDS = {"recommended"}
CHOICES_OF = {"signing_roles": "role"}


def value_label(name: str, value: Any, names: "HistoryNames | None" = None) -> Any:
    """A stored value as the reader should see it: a choice's label, a candidate's product,
    yes/no, lists joined."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(_("yes") if value else _("no"))
    if isinstance(value, list):
        return ", ".join(str(value_label(name, v, names)) for v in value)
    if name in CANDIDATE_FIELDS and isinstance(value, str):
        return (names or HistoryNames()).candidate(value)
    choices = _fields().get(CHOICES_OF.get(name, name), (None, {}))[1]
    if isinstance(value, str | int) and value in choices:
        return str(choices[value])
    return value


# --- what an entry is about: parts stored when it is written, named when it is read ---------

Part = dict[str, Any]

PHRASES = {
    "none": "—",
    "review.frozen": _("frozen for sign-off"),
    "review.lifted": _("freeze lifted"),
    "signing.shared": _("one person may sign for several roles"),
    "costs.baseline": _("baseline"),
    "costs.lines": _("%(n)s cost lines"),
    "probe.run": _("probe run #%(n)s"),
}


def candidate_part(candidate: Candidate) -> Part:
    """A shortlisted candidate: its slug in the project, and the catalog product and version it
    stood for (read as the product's name in the reader's language, never the slug)."""
    return {
        "kind": "candidate",
        "key": candidate.slug,
        "solution": candidate.solution.key,
        "version": candidate.version,
    }


def action_part(action: Any) -> Part:
    """An acceptance action, by the key the team gave it."""
    return {"kind": "action", "key": action.key}


def choice_part(model: Any, name: str, value: str) -> Part:
    """A value of a model's choice field (the model a class or an instance), read as the
    choice's label."""
    return {"kind": "choice", "field": f"{model._meta.label_lower}.{name}", "key": value}


def revision_part(revision: int) -> Part:
    return {"kind": "revision", "key": revision}


def phrase_part(key: str, **numbers: int) -> Part:
    """One of the PHRASES, with the numbers it takes."""
    if key not in PHRASES:
        raise ValueError(f"no history phrase {key!r}")
    return {"kind": "phrase", "key": key, **({"numbers": numbers} if numbers else {})}


def template_set_part(template_set: TemplateSet) -> Part:
    return {"kind": "template_set", "key": template_set.key}


def text_part(text: str) -> Part:
    """Words people wrote (a cost line's label): the same in every language."""
    return {"kind": "text", "text": text}


def words_part(words: Callable[[], object] | Promise | str, key: str = "") -> Part:
    """Words this app has no key for (a procurement term's name), kept in every language the
    workbench speaks: `words` is lazy text, or a function giving it in the active language."""
    found = {}
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            found[code] = str(words() if callable(words) else words)
    return {"kind": "words", "key": key, "words": found}


@dataclasses.dataclass
class HistoryNames:
    """What a page of entries names, read once for them all: the project's candidates (slug ->
    catalog product key and version), catalog products and template sets by key, and the
    project's slug and name."""

    candidates: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    solutions: dict[str, Solution] = dataclasses.field(default_factory=dict)
    template_sets: dict[str, TemplateSet] = dataclasses.field(default_factory=dict)
    project: tuple[str, str] = ("", "")

    @classmethod
    def read(cls, project: Any, events: Sequence[Any]) -> "HistoryNames":
        """Read what `events` name (one query for the candidates, one for the products, one for
        template sets when an entry names one) and give it to each (`event.names`)."""
        names = cls(project=(project.slug, project.name))
        if not events:
            return names
        names.candidates = {
            slug: (key, version)
            for slug, key, version in Candidate.objects.filter(project=project).values_list(
                "slug", "solution__key", "version"
            )
        }
        wanted = _part_keys(events, "candidate", "solution") | {
            key for key, _version in names.candidates.values()
        }
        names.solutions = {s.key: s for s in Solution.objects.filter(key__in=wanted)}
        sets = _part_keys(events, "template_set", "key") | {
            e.subject for e in events if e.verb == "template.applied" and not e.subject_parts
        }
        if sets:
            names.template_sets = {t.key: t for t in TemplateSet.objects.filter(key__in=sets)}
        for event in events:
            event.names = names
        return names

    def candidate(self, slug: str, solution: str | None = None, version: str = "") -> str:
        """A candidate as its product's name and version: the product it stood for when given,
        else the project's candidate of that slug now; the slug when neither is known."""
        if solution is None and slug in self.candidates:
            solution, version = self.candidates[slug]
        found = self.solutions.get(solution or "")
        return f"{found.name} {version}".strip() if found is not None else slug

    def candidate_slug(self, text: str) -> str | None:
        """The candidate whose product name and version `text` is, in either language."""
        for slug, (key, version) in self.candidates.items():
            found = self.solutions.get(key)
            if found is not None and text in {
                f"{found.name_en} {version}".strip(),
                f"{found.name_zh} {version}".strip(),
            }:
                return slug
        return None


def _part_keys(events: Iterable[Any], kind: str, key: str) -> set[str]:
    return {
        str(part.get(key))
        for event in events
        for part in event.subject_parts or ()
        if isinstance(part, dict) and part.get("kind") == kind and part.get(key)
    }


@functools.lru_cache(maxsize=64)
def _choices(path: str) -> dict[Any, Any]:
    """A choice field's labels by value, from its `app_label.model.field` path."""
    app_label, _dot, rest = path.partition(".")
    model_name, _dot, name = rest.partition(".")
    try:
        found = apps.get_model(app_label, model_name)._meta.get_field(name)
    except (LookupError, ValueError, FieldDoesNotExist):
        return {}
    return dict(getattr(found, "flatchoices", None) or [])


@functools.lru_cache(maxsize=64)
def _choice_by_label(path: str) -> dict[str, Any]:
    """A choice's value by its code or its label in any language the workbench speaks."""
    found: dict[str, Any] = {}
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            found |= {str(label): value for value, label in _choices(path).items()}
    return found | {str(value): value for value in _choices(path)}


def part_words(part: Part, names: HistoryNames) -> str:
    """One part of a subject in the reader's language."""
    kind, key = part.get("kind"), part.get("key")
    if kind == "candidate":
        return names.candidate(str(key), part.get("solution"), part.get("version") or "")
    if kind == "choice":
        label = _choices(str(part.get("field")))
        return str(label[key]) if isinstance(key, str | int) and key in label else str(key)
    if kind == "revision":
        return f"r{key}"
    if kind == "phrase" and isinstance(key, str) and key in PHRASES:
        return _phrase(key, part.get("numbers"))
    if kind == "template_set" and isinstance(key, str) and key in names.template_sets:
        return str(names.template_sets[key].name)
    if kind == "words":
        words = part.get("words") or {}
        return str(words.get(product_language()) or words.get(ENGLISH) or key)
    if kind == "text":
        return str(part.get("text", ""))
    return str(key)  # an action, or a kind this version does not know: its key


def _phrase(key: str, numbers: Any) -> str:
    if not numbers:
        return str(PHRASES[key])
    try:
        return str(PHRASES[key]) % numbers
    except (KeyError, TypeError, ValueError):  # not what the phrase takes: its words as they are
        return str(PHRASES[key])


def parts_words(parts: Sequence[Part], names: HistoryNames) -> str:
    """The parts in words: several of a kind listed with commas, kinds apart with dots (a part
    that is not one, in a row changed outside the workbench, is left out)."""
    parts = [part for part in parts if isinstance(part, dict)]
    out = ""
    for n, part in enumerate(parts):
        if n:
            out += ", " if part.get("kind") == parts[n - 1].get("kind") else " · "
        out += part_words(part, names)
    return out


def parts_text(parts: Sequence[Part]) -> str:
    """The subject stored beside the parts: their words in English, candidates by slug."""
    with translation.override(ENGLISH):
        return parts_words(parts, HistoryNames())


def subject_words(event: Any) -> str:
    """What an entry is about, in the reader's language."""
    names = getattr(event, "names", None) or HistoryNames()
    parts = event.subject_parts or legacy_parts(event.verb, event.subject, names)
    return (parts_words(parts, names) if isinstance(parts, list) else "") or event.subject


# Entries written before parts: what followed the candidate or revision in their subject.
LEGACY_CHOICES = {
    "responsibility.set": "poc.responsibility.area",
    "responsibility.cleared": "poc.responsibility.area",
    "sheet.approve": "reports.signoff.role",
    "sheet.reject": "reports.signoff.role",
}
_LEGACY_SHEET = re.compile(r"r(\d+) \(([\w-]+)\)")
_LEGACY_REVISION = re.compile(r"r(\d+)")


def legacy_parts(verb: str, subject: str, names: HistoryNames) -> list[Part]:
    """The parts recognisable in a subject stored as text: a candidate's slug (or its name as its
    writer read it), a revision, a choice as its code or its label in either language, a phrase.
    None recognised: no parts, and the stored subject reads as it is."""
    if verb == "project.recommendation":
        slugs = [slug.strip() for slug in subject.split(",")]
        return [_legacy_candidate(s) for s in slugs] if set(slugs) <= set(names.candidates) else []
    if verb == "project.review_freeze":
        return [phrase_part(k) for k in ("review.frozen", "review.lifted") if subject in _said(k)]
    if verb.startswith("candidate."):
        slug = names.candidate_slug(subject)
        return [_legacy_candidate(slug)] if slug is not None else []
    if verb == "template.applied" and subject in names.template_sets:
        return [{"kind": "template_set", "key": subject}]
    if verb == "suite.imported" and subject == names.project[0]:
        return [text_part(names.project[1])]
    if verb == "sheet.generated" and (found := _LEGACY_SHEET.fullmatch(subject)):
        return [revision_part(int(found[1])), _legacy_choice("reports.sheet.language", found[2])]
    head, _sep, rest = _split(subject)
    if head in names.candidates:
        first = _legacy_candidate(head)
    elif (revision := _LEGACY_REVISION.fullmatch(head)) and verb.startswith("sheet."):
        first = revision_part(int(revision[1]))
    elif head == "baseline" and verb.startswith("costs."):
        first = phrase_part("costs.baseline")
    else:
        return []
    if not rest:
        return [first]
    if verb in LEGACY_CHOICES:
        return [first, _legacy_choice(LEGACY_CHOICES[verb], rest)]
    second = {"kind": "action", "key": rest} if verb == "result.recorded" else text_part(rest)
    return [first, second]


def _split(subject: str) -> tuple[str, str, str]:
    found = re.split(r"( × | · )", subject, maxsplit=1)
    return (found[0], found[1], found[2]) if len(found) == 3 else (subject, "", "")


def _legacy_candidate(slug: str) -> Part:
    return {"kind": "candidate", "key": slug}  # no product: the project's candidate now


def _legacy_choice(path: str, text: str) -> Part:
    value = _choice_by_label(path).get(text)
    return text_part(text) if value is None else {"kind": "choice", "field": path, "key": value}


def _said(key: str) -> set[str]:
    """A phrase as it reads in every language the workbench speaks."""
    found = set()
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            found.add(str(PHRASES[key]))
    return found
