"""The acceptance suite: requirements and their acceptance actions, written one by one (template
sets and suite imports: `suite_library`)."""

from collections.abc import Mapping

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max, ProtectedError, QuerySet
from django.utils.text import slugify
from django.utils.translation import gettext as _

from evaluations.claims import CLAIM_BULLET
from evaluations.models import (
    AcceptanceAction,
    ActionKeyRename,
    Project,
    Requirement,
    RequirementSource,
    TemplateAction,
    TemplateRequirement,
)
from evaluations.services.freeze import scope_edit_guard
from evaluations.services.history import event_record
from workbench.people import stored_user
from workbench.text import first_free

REQUIREMENT_FIELDS = ("feature", "dimension", "owner_team", "importance")
ACTION_FIELDS = ("key", "question", "steps", "expected_evidence", "pass_criterion", "scenario")
# Text copied from the template library, kept in both languages: project field -> library field.
REQUIREMENT_LIBRARY_TEXTS = {"feature": "feature"}
ACTION_LIBRARY_TEXTS = {
    "question": "question",
    "steps": "steps",
    "expected_evidence": "evidence",
    "pass_criterion": "pass_criterion",
}


def _state(obj: Requirement | AcceptanceAction, fields: tuple[str, ...]) -> dict[str, object]:
    return {name: getattr(obj, name) for name in fields}


def _next_position(queryset: QuerySet[Requirement] | QuerySet[AcceptanceAction]) -> int:
    return (queryset.aggregate(m=Max("position"))["m"] or 0) + 1


def library_translations(
    template: TemplateRequirement | TemplateAction, texts: dict[str, str]
) -> dict[str, dict[str, str]]:
    return {
        field: {
            "en": getattr(template, f"{library}_en").strip(),
            "zh": getattr(template, f"{library}_zh").strip(),
        }
        for field, library in texts.items()
    }


def _apply_changes(row: Requirement | AcceptanceAction, changes: Mapping[str, object]) -> None:
    """Set the changed fields. A text sent back as the library wrote it, in either language (an
    edit form shows the reader's language), is no change; any other text is the team's own
    and replaces the library's wording in both languages."""
    for name, value in changes.items():
        if isinstance(value, str):
            value = value.strip()
            if row.is_library_text(name, value):
                continue
            row.translations.pop(name, None)
        setattr(row, name, value)


# --- requirements ------------------------------------------------------------------------


@transaction.atomic
def requirement_create(
    *,
    project: Project,
    actor: User | None,
    feature: str,
    dimension: str,
    owner_team: str,
    importance: str = "must",
    source: str = RequirementSource.MANUAL,
    template_key: str = "",
    translations: dict[str, dict[str, str]] | None = None,
    record: bool = True,
) -> Requirement:
    """Add a requirement; until it has an action it reads "not yet rewritten"."""
    scope_edit_guard(project)
    requirement = Requirement(
        project=project,
        feature=feature.strip(),
        dimension=dimension,
        owner_team=owner_team,
        importance=importance,
        source=source,
        template_key=template_key,
        translations=translations or {},
        position=_next_position(Requirement.objects.filter(project=project)),
    )
    requirement.full_clean()
    requirement.save()
    if record:  # bulk writers (templates, import) record one summary event instead
        event_record(
            project=project,
            actor=actor,
            verb="requirement.created",
            subject=requirement.feature,
            after=_state(requirement, REQUIREMENT_FIELDS),
        )
    return requirement


@transaction.atomic
def requirement_update(
    *,
    requirement: Requirement,
    actor: User | None,
    feature: str | None = None,
    dimension: str | None = None,
    owner_team: str | None = None,
    importance: str | None = None,
) -> Requirement:
    """Edit a requirement (None: unchanged)."""
    scope_edit_guard(requirement.project_id)
    given = {
        "feature": feature,
        "dimension": dimension,
        "owner_team": owner_team,
        "importance": importance,
    }
    changes = {name: value for name, value in given.items() if value is not None}
    before = _state(requirement, REQUIREMENT_FIELDS)
    _apply_changes(requirement, changes)
    requirement.full_clean()
    after = _state(requirement, REQUIREMENT_FIELDS)
    changed = [k for k in after if after[k] != before[k]]
    if changed:
        requirement.save()
        event_record(
            project=requirement.project,
            actor=actor,
            verb="requirement.updated",
            subject=requirement.feature,
            before={k: before[k] for k in changed},
            after={k: after[k] for k in changed},
        )
    return requirement


@transaction.atomic
def requirement_delete(*, requirement: Requirement, actor: User | None) -> None:
    scope_edit_guard(requirement.project_id)
    event_record(
        project=requirement.project,
        actor=actor,
        verb="requirement.deleted",
        subject=requirement.feature,
        before={
            **_state(requirement, REQUIREMENT_FIELDS),
            "actions": list(requirement.actions.values_list("key", flat=True)),
        },
    )
    try:
        with transaction.atomic():
            requirement.delete()
    except ProtectedError:
        raise ValidationError(
            _("An action of this requirement has recorded PoC results, which are never deleted.")
        ) from None


@transaction.atomic
def requirements_from_claims(
    *,
    project: Project,
    actor: User | None,
    text: str,
    dimension: str,
    owner_team: str,
    importance: str = "must",
) -> list[Requirement]:
    """One requirement per pasted claim line, so nothing a vendor claims goes unexamined.

    Bullets and numbering are stripped; blank lines and claims the project already holds
    (same words, case-insensitive) are skipped.
    """
    scope_edit_guard(project)
    existing = {
        feature.casefold()
        for feature in Requirement.objects.filter(project=project).values_list("feature", flat=True)
    }
    created = []
    for line in text.splitlines():
        claim = CLAIM_BULLET.sub("", line).strip()
        if not claim or claim.casefold() in existing:
            continue
        if len(claim) > 300:
            raise ValidationError(
                _("A claim is longer than 300 characters: %(start)s…") % {"start": claim[:40]}
            )
        existing.add(claim.casefold())
        created.append(
            requirement_create(
                project=project,
                actor=actor,
                feature=claim,
                dimension=dimension,
                owner_team=owner_team,
                importance=importance,
                source=RequirementSource.VENDOR_CLAIM,
            )
        )
    return created


# --- actions -----------------------------------------------------------------------------


def _key_taken(project: Project, key: str, *, exclude_pk: int | None = None) -> bool:
    queryset = AcceptanceAction.objects.filter(project=project, key=key)
    if exclude_pk is not None:
        queryset = queryset.exclude(pk=exclude_pk)
    return queryset.exists()


def unique_action_key(project: Project, base: str, taken: set[str] | None = None) -> str:
    base = slugify(base)[:70] or "action"
    taken = (
        taken
        if taken is not None
        else set(AcceptanceAction.objects.filter(project=project).values_list("key", flat=True))
    )
    return first_free(base, taken)


@transaction.atomic
def action_create(
    *,
    requirement: Requirement,
    actor: User | None,
    key: str,
    question: str,
    pass_criterion: str,
    scenario: str,
    steps: str = "",
    expected_evidence: str = "",
    template_key: str = "",
    translations: dict[str, dict[str, str]] | None = None,
    record: bool = True,
) -> AcceptanceAction:
    """Add an acceptance action; it applies to every candidate of the project."""
    scope_edit_guard(requirement.project_id)
    project = requirement.project
    if _key_taken(project, key):
        raise ValidationError(
            {"key": _("The key %(key)s is already used in this project.") % {"key": key}}
        )
    action = AcceptanceAction(
        project=project,
        requirement=requirement,
        key=key,
        question=question.strip(),
        steps=steps.strip(),
        expected_evidence=expected_evidence.strip(),
        pass_criterion=pass_criterion.strip(),
        scenario=scenario,
        template_key=template_key,
        translations=translations or {},
        position=_next_position(AcceptanceAction.objects.filter(requirement=requirement)),
    )
    action.full_clean()
    action.save()
    if record:
        event_record(
            project=project,
            actor=actor,
            verb="action.created",
            subject=action.key,
            after=_state(action, ACTION_FIELDS),
        )
    return action


@transaction.atomic
def action_update(
    *,
    action: AcceptanceAction,
    actor: User | None,
    key: str | None = None,
    question: str | None = None,
    steps: str | None = None,
    expected_evidence: str | None = None,
    pass_criterion: str | None = None,
    scenario: str | None = None,
    requirement: Requirement | None = None,
) -> AcceptanceAction:
    """Edit an action (None: unchanged). A new key keeps the old one as an alias, so results
    and CI jobs follow."""
    scope_edit_guard(action.project_id)
    given: dict[str, object] = {
        "key": key,
        "question": question,
        "steps": steps,
        "expected_evidence": expected_evidence,
        "pass_criterion": pass_criterion,
        "scenario": scenario,
        "requirement": requirement,
    }
    changes = {name: value for name, value in given.items() if value is not None}
    action = AcceptanceAction.objects.select_for_update().get(pk=action.pk)
    before = _state(action, ACTION_FIELDS)
    old_key = action.key
    old_requirement_id = action.requirement_id
    _apply_changes(action, changes)
    if action.key != old_key and _key_taken(action.project, action.key, exclude_pk=action.pk):
        raise ValidationError(
            {"key": _("The key %(key)s is already used in this project.") % {"key": action.key}}
        )
    action.full_clean()
    after = _state(action, ACTION_FIELDS)
    changed = [k for k in after if after[k] != before[k]]
    moved = action.requirement_id != old_requirement_id
    if moved:
        action.position = _next_position(
            AcceptanceAction.objects.filter(requirement=action.requirement_id)
        )
    if not changed and not moved:
        return action
    action.save()
    if action.key != old_key:
        ActionKeyRename.objects.create(
            action=action,
            project=action.project,
            old_key=old_key,
            new_key=action.key,
            renamed_by=stored_user(actor),
        )
    event_record(
        project=action.project,
        actor=actor,
        verb="action.renamed" if action.key != old_key else "action.updated",
        subject=action.key,
        before={k: before[k] for k in changed}
        | ({"requirement": old_requirement_id} if moved else {}),
        after={k: after[k] for k in changed}
        | ({"requirement": action.requirement_id} if moved else {}),
    )
    return action


@transaction.atomic
def action_delete(*, action: AcceptanceAction, actor: User | None) -> None:
    scope_edit_guard(action.project_id)
    event_record(
        project=action.project,
        actor=actor,
        verb="action.deleted",
        subject=action.key,
        before=_state(action, ACTION_FIELDS),
    )
    try:
        with transaction.atomic():
            action.delete()
    except ProtectedError:
        raise ValidationError(
            _("This action has recorded PoC results, which are never deleted.")
        ) from None


@transaction.atomic
def reorder(
    *, item: Requirement | AcceptanceAction, direction: str, actor: User | None = None
) -> None:
    """Swap an action (within its requirement) or a requirement (within its dimension)
    with its neighbour. Positions are renumbered first so gaps and ties never block a move."""
    scope_edit_guard(item.project_id)
    if direction not in ("up", "down"):
        raise ValueError(direction)
    siblings: list[Requirement | AcceptanceAction]
    if isinstance(item, AcceptanceAction):
        siblings = list(
            AcceptanceAction.objects.select_for_update().filter(requirement=item.requirement_id)
        )
    else:
        siblings = list(
            Requirement.objects.select_for_update().filter(
                project=item.project_id, dimension=item.dimension
            )
        )
    index = next(i for i, s in enumerate(siblings) if s.pk == item.pk)
    other = index - 1 if direction == "up" else index + 1
    if not 0 <= other < len(siblings):
        return
    siblings[index], siblings[other] = siblings[other], siblings[index]
    for position, sibling in enumerate(siblings, start=1):
        if sibling.position != position:
            type(sibling).objects.filter(pk=sibling.pk).update(position=position)
    is_action = isinstance(item, AcceptanceAction)
    event_record(
        project=item.project,
        actor=actor,
        verb="action.reordered" if is_action else "requirement.reordered",
        subject=str(item.key if isinstance(item, AcceptanceAction) else item.feature),
        after={"position": other + 1, "direction": direction},
    )
