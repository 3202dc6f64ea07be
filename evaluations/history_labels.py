"""Words for the project history: what each recorded verb means, and each field and value in
the reader's language (the history stores codes: field names and choice values)."""

import functools
from typing import Any

from django.apps import apps
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

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


def value_label(name: str, value: Any) -> Any:
    """A stored value as the reader should see it: a choice's label, yes/no, lists joined."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(_("yes") if value else _("no"))
    if isinstance(value, list):
        return ", ".join(str(value_label(name, v)) for v in value)
    choices = _fields().get(name, (None, {}))[1]
    if isinstance(value, str | int) and value in choices:
        return str(choices[value])
    return value
