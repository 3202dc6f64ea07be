"""Template sets and suite files applied to a project: the plan shown first, then the
requirements and actions added or updated, all or nothing."""

from collections.abc import Collection
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction

from evaluations.history_labels import template_set_part
from evaluations.models import (
    AcceptanceAction,
    Project,
    Requirement,
    RequirementSource,
    TemplateAction,
    TemplateRequirement,
    TemplateSet,
)
from evaluations.selectors import action_by_key
from evaluations.services.freeze import scope_edit_guard
from evaluations.services.history import event_record
from evaluations.services.suite import (
    ACTION_LIBRARY_TEXTS,
    REQUIREMENT_LIBRARY_TEXTS,
    action_create,
    action_update,
    library_translations,
    requirement_create,
    requirement_update,
    unique_action_key,
)
from evaluations.suite_io import ParseResult
from workbench.languages import is_chinese


@dataclass
class PlannedRequirement:
    template: TemplateRequirement
    existing: Requirement | None
    new_actions: list[tuple[TemplateAction, str]] = field(default_factory=list)


@dataclass
class TemplatePlan:
    """What applying a template set would add; nothing is written to build it."""

    template_set: TemplateSet
    requirements: list[PlannedRequirement] = field(default_factory=list)
    already_present: int = 0

    @property
    def new_requirement_count(self) -> int:
        return sum(1 for r in self.requirements if r.existing is None and r.new_actions)

    @property
    def new_action_count(self) -> int:
        return sum(len(r.new_actions) for r in self.requirements)


def template_set_plan(*, project: Project, template_set: TemplateSet) -> TemplatePlan:
    plan = TemplatePlan(template_set=template_set)
    requirements = {
        r.template_key: r
        for r in Requirement.objects.filter(project=project).exclude(template_key="")
    }
    keys = dict(AcceptanceAction.objects.filter(project=project).values_list("key", "template_key"))
    applied = {template_key for template_key in keys.values() if template_key}
    taken = set(keys)
    for template_requirement in template_set.requirements.prefetch_related("actions"):
        planned = PlannedRequirement(
            template=template_requirement, existing=requirements.get(template_requirement.key)
        )
        for template_action in template_requirement.actions.all():
            if template_action.key in applied:
                plan.already_present += 1
                continue
            key = unique_action_key(project, template_action.key, taken)
            taken.add(key)
            planned.new_actions.append((template_action, key))
        plan.requirements.append(planned)
    return plan


@dataclass(frozen=True)
class ApplyReport:
    requirements_created: int
    actions_created: int
    already_present: int
    left_out: int = 0  # new actions of the set the person did not choose


@transaction.atomic
def template_set_apply(
    *,
    project: Project,
    template_set: TemplateSet,
    actor: User | None,
    language: str = "en",
    only: Collection[str] | None = None,
) -> ApplyReport:
    """Copy a template set's requirements and actions into a project.

    The copies keep the library's wording in both languages, and each reader sees their own;
    `language` chooses the wording stored as the text (what stays once a team edits it).
    Idempotent: what was applied before (by template key) is not added again, even if the
    team has since edited or renamed it. Teams edit the copies freely. `only`: the template
    keys of the actions to copy (default: all); a requirement none of whose chosen actions is
    new is not created.
    """
    scope_edit_guard(project)
    Project.objects.select_for_update(no_key=True).filter(
        pk=project.pk
    ).first()  # serialise applies
    plan = template_set_plan(project=project, template_set=template_set)
    suffix = "zh" if is_chinese(language) else "en"
    requirements_created = actions_created = left_out = 0
    for planned in plan.requirements:
        chosen = [(t, k) for t, k in planned.new_actions if only is None or t.key in only]
        left_out += len(planned.new_actions) - len(chosen)
        if not chosen:
            continue
        requirement = planned.existing
        if requirement is None:
            template = planned.template
            requirement = requirement_create(
                project=project,
                actor=actor,
                feature=getattr(template, f"feature_{suffix}"),
                dimension=template.dimension,
                owner_team=template.owner_team,
                importance=template.importance,
                source=RequirementSource.TEMPLATE,
                template_key=template.key,
                translations=library_translations(template, REQUIREMENT_LIBRARY_TEXTS),
                record=False,
            )
            requirements_created += 1
        for template_action, key in chosen:
            action_create(
                requirement=requirement,
                actor=actor,
                key=key,
                question=getattr(template_action, f"question_{suffix}"),
                steps=getattr(template_action, f"steps_{suffix}"),
                expected_evidence=getattr(template_action, f"evidence_{suffix}"),
                pass_criterion=getattr(template_action, f"pass_criterion_{suffix}"),
                scenario=template_action.scenario,
                template_key=template_action.key,
                translations=library_translations(template_action, ACTION_LIBRARY_TEXTS),
                record=False,
            )
            actions_created += 1
    if actions_created:
        event_record(
            project=project,
            actor=actor,
            verb="template.applied",
            parts=[template_set_part(template_set)],
            after={"requirements": requirements_created, "actions": actions_created},
        )
    return ApplyReport(requirements_created, actions_created, plan.already_present, left_out)


# --- import ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportReport:
    requirements_created: int
    actions_created: int
    actions_updated: int


@transaction.atomic
def suite_import(*, project: Project, actor: User | None, parsed: ParseResult) -> ImportReport:
    """Apply a clean parse (evaluations.suite_io) to a project, all or nothing.

    Requirements are matched by feature and dimension, actions by key (current or a past key);
    matching actions are updated in place, the rest created.
    """
    scope_edit_guard(project)
    if parsed.errors:
        raise ValueError("suite_import needs a parse without errors")
    existing = {
        (r.feature.casefold(), r.dimension): r for r in Requirement.objects.filter(project=project)
    }
    requirements_created = actions_created = actions_updated = 0
    for row in parsed.requirements:
        requirement = existing.get((row.feature.casefold(), row.dimension))
        if requirement is None:
            requirement = requirement_create(
                project=project,
                actor=actor,
                feature=row.feature,
                dimension=row.dimension,
                owner_team=row.owner_team,
                importance=row.importance,
                source=RequirementSource.IMPORT,
                record=False,
            )
            existing[(row.feature.casefold(), row.dimension)] = requirement
            requirements_created += 1
        else:
            requirement_update(
                requirement=requirement,
                actor=actor,
                owner_team=row.owner_team,
                importance=row.importance,
            )
        for action_row in row.actions:
            fields: dict[str, str] = {
                "key": action_row.key,
                "question": action_row.question,
                "steps": action_row.steps,
                "expected_evidence": action_row.expected_evidence,
                "pass_criterion": action_row.pass_criterion,
                "scenario": action_row.scenario,
            }
            action = action_by_key(project, action_row.key)
            if action is None:
                action_create(
                    requirement=requirement,
                    actor=actor,
                    record=False,
                    key=action_row.key,
                    question=action_row.question,
                    steps=action_row.steps,
                    expected_evidence=action_row.expected_evidence,
                    pass_criterion=action_row.pass_criterion,
                    scenario=action_row.scenario,
                )
                actions_created += 1
            else:
                before = (action.requirement_id, *(getattr(action, k) for k in fields))
                action = action_update(
                    action=action, actor=actor, requirement=requirement, **fields
                )
                if before != (action.requirement_id, *(getattr(action, k) for k in fields)):
                    actions_updated += 1
    if requirements_created or actions_created or actions_updated:
        event_record(
            project=project,
            actor=actor,
            verb="suite.imported",
            subject=project.name,
            after={
                "requirements_created": requirements_created,
                "actions_created": actions_created,
                "actions_updated": actions_updated,
            },
        )
    return ImportReport(requirements_created, actions_created, actions_updated)
