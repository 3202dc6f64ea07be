"""Projects, their framing answers and memberships."""

from datetime import date

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from evaluations.history_labels import candidate_part, choice_part, phrase_part
from evaluations.models import (
    SIGNING_ROLE_CHOICES,
    Membership,
    MembershipSource,
    Phase,
    Project,
    TeamRole,
)
from evaluations.services.freeze import scope_edit_guard
from evaluations.services.history import event_record

FRAMING_FIELDS = ("workloads", "existing_base", "layer_needed", "supplier_needs")


@transaction.atomic
def project_create(
    *,
    name: str,
    creator: User,
    creator_role: str,
    slug: str = "",
    description: str = "",
) -> Project:
    """Create a project; its creator becomes a project admin in the team role they chose."""
    project = Project(
        name=name.strip(), slug=slug or slugify(name)[:80], description=description.strip()
    )
    project.full_clean()
    project.save()
    membership_set(project=project, user=creator, role=creator_role, is_admin=True, actor=None)
    event_record(project=project, actor=creator, verb="project.created", subject=project.name)
    return project


@transaction.atomic
def project_update(
    *,
    project: Project,
    actor: User,
    name: str | None = None,
    description: str | None = None,
    archived: bool | None = None,
    workloads: list[str] | None = None,
    existing_base: str | None = None,
    layer_needed: str | None = None,
    supplier_needs: list[str] | None = None,
) -> Project:
    """Change a project's name, description or framing answers, or archive it (None:
    unchanged). The phase otherwise moves on its own with the project's state
    (reports.services.project_phases_refresh); archiving stops it, and a project taken out of
    the archive is judged again at the next refresh."""
    given: dict[str, object] = {
        "name": name,
        "description": description,
        "workloads": workloads,
        "existing_base": existing_base,
        "layer_needed": layer_needed,
        "supplier_needs": supplier_needs,
    }
    changes = {key: value for key, value in given.items() if value is not None}
    # Unchanged answers re-sent by a form are not an edit; the phase is not what a sheet freezes.
    if any(getattr(project, k, None) != v for k, v in changes.items()):
        scope_edit_guard(project)
    if archived is not None and archived != (project.phase == Phase.ARCHIVED):
        changes["phase"] = Phase.ARCHIVED if archived else Phase.FRAMING
        project.phase_seen_seq = 0  # judged again at the next refresh
    before = {key: getattr(project, key) for key in changes}
    for key, value in changes.items():
        setattr(project, key, value)
    project.full_clean()
    project.save()
    after = {key: getattr(project, key) for key in changes}
    changed = {k: v for k, v in after.items() if before[k] != v}
    if changed:
        event_record(
            project=project,
            actor=actor,
            verb="project.updated",
            subject=project.name,
            before={k: before[k] for k in changed},
            after=changed,
        )
    return project


@transaction.atomic
def project_signing_roles_set(
    *, project: Project, roles: list[str], one_signer_many_roles: bool = False, actor: User
) -> Project:
    """Choose the team roles whose approval seals this project's sheets, and whether one person
    may decide for several of them. Revisions already generated keep what they were generated
    with."""
    order = [value for value, _label in SIGNING_ROLE_CHOICES]
    unknown = [r for r in roles if r not in order]
    if unknown:
        raise ValidationError(
            {
                "signing_roles": _("These roles cannot sign: %(roles)s.")
                % {"roles": ", ".join(unknown)}
            }
        )
    chosen = [r for r in order if r in roles]
    project = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    before = {
        "signing_roles": list(project.signing_roles),
        "one_signer_many_roles": project.one_signer_many_roles,
    }
    after = {"signing_roles": chosen, "one_signer_many_roles": one_signer_many_roles}
    project.signing_roles = chosen
    project.one_signer_many_roles = one_signer_many_roles
    project.full_clean()
    if after != before:
        project.save(update_fields=["signing_roles", "one_signer_many_roles", "updated_at"])
        parts = [choice_part(Membership, "role", r) for r in chosen]
        if one_signer_many_roles:
            parts.append(phrase_part("signing.shared"))
        event_record(
            project=project,
            actor=actor,
            verb="project.signing_roles",
            parts=parts,
            before=before,
            after=after,
        )
    return project


@transaction.atomic
def membership_set(
    *,
    project: Project,
    user: User,
    role: str,
    is_admin: bool = False,
    actor: User | None,
) -> Membership:
    """Give a user a team role in a project (idempotent); updates the admin flag. A role single
    sign-on had granted becomes the project admin's to keep (single sign-on leaves it alone
    from then on)."""
    if role not in TeamRole.values:
        raise ValidationError({"role": _("Unknown team role %(role)s.") % {"role": role}})
    membership, created = Membership.objects.get_or_create(
        project=project,
        user=user,
        role=role,
        defaults={"is_admin": is_admin, "source": MembershipSource.MANUAL},
    )
    after: dict[str, object] = {"role": role, "is_admin": is_admin}
    if not created:
        changed = [
            name
            for name, value in (("is_admin", is_admin), ("source", MembershipSource.MANUAL))
            if getattr(membership, name) != value
        ]
        if not changed:
            return membership
        if "source" in changed:
            after["source"] = MembershipSource.MANUAL.value
        membership.is_admin, membership.source = is_admin, MembershipSource.MANUAL
        membership.save(update_fields=changed)
    if actor is not None:
        event_record(
            project=project,
            actor=actor,
            verb="membership.set",
            subject=str(user),
            after=after,
        )
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, actor: User) -> None:
    """Remove one role of a member; the last admin of a project cannot be removed."""
    project = membership.project
    if membership.is_admin:
        other_admins = (
            Membership.objects.select_for_update()
            .filter(project=project, is_admin=True)
            .exclude(user=membership.user)
            .exists()
        )
        still_admin = (
            Membership.objects.filter(project=project, user=membership.user, is_admin=True)
            .exclude(pk=membership.pk)
            .exists()
        )
        if not other_admins and not still_admin:
            raise ValidationError(_("A project needs at least one admin."))
    event_record(
        project=project,
        actor=actor,
        verb="membership.removed",
        subject=str(membership.user),
        before={"role": membership.role, "is_admin": membership.is_admin},
    )
    membership.delete()


@transaction.atomic
def project_recommendation_set(
    *,
    project: Project,
    candidates: list[str],
    conditions: str,
    reason: str,
    actor: User,
    review_by: date | None = None,
    reopen_when: str = "",
) -> Project:
    """The team's recommendation for the sheet: which candidates, on what conditions, why,
    when it is to be reviewed again and what else reopens it. A review-by date already past
    is refused."""
    scope_edit_guard(project)
    known = set(project.candidates.values_list("slug", flat=True))
    unknown = sorted(set(candidates) - known)
    if unknown:
        raise ValidationError(
            {"candidates": _("Unknown candidates: %(slugs)s.") % {"slugs": ", ".join(unknown)}}
        )
    if candidates and not reason.strip():
        raise ValidationError({"reason": _("Say why these candidates are recommended.")})
    locked = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    # A new review-by date lies ahead; a date set before and now past may stay (it is due).
    today = timezone.localdate()
    if review_by is not None and review_by != locked.review_by and review_by <= today:
        raise ValidationError(
            {
                "review_by": _("The review-by date must be after today (%(today)s).")
                % {"today": today.isoformat()}
            }
        )
    before = {
        "recommended": list(locked.recommended),
        "recommendation_conditions": locked.recommendation_conditions,
        "recommendation_reason": locked.recommendation_reason,
        "review_by": locked.review_by.isoformat() if locked.review_by else None,
        "reopen_when": locked.reopen_when,
    }
    order = list(project.candidates.select_related("solution").order_by("position", "pk"))
    chosen = [candidate for candidate in order if candidate.slug in set(candidates)]
    after: dict[str, object] = {
        "recommended": [candidate.slug for candidate in chosen],
        "recommendation_conditions": conditions.strip(),
        "recommendation_reason": reason.strip(),
        "review_by": review_by.isoformat() if review_by else None,
        "reopen_when": "\n".join(line.strip() for line in reopen_when.splitlines() if line.strip()),
    }
    if after != before:
        Project.objects.filter(pk=project.pk).update(**{**after, "review_by": review_by})
        event_record(
            project=locked,
            actor=actor,
            verb="project.recommendation",
            parts=[candidate_part(c) for c in chosen] or [phrase_part("none")],
            before=before,
            after=after,
        )
    return Project.objects.get(pk=project.pk)
