"""Every write to evaluations: one function per use case, atomic, validated, recorded."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.text import slugify
from django.utils.translation import gettext as _

from evaluations.models import (
    Candidate,
    FilterStep,
    Membership,
    Project,
    ProjectEvent,
    Solution,
    TeamRole,
    Tier,
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


# --- projects and membership -------------------------------------------------------------


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
def project_update(*, project: Project, actor: User, **changes: Any) -> Project:
    """Change a project's name, description, phase or framing answers."""
    allowed = {"name", "description", "phase", *FRAMING_FIELDS}
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"project_update cannot change {sorted(unknown)}")
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
def membership_set(
    *,
    project: Project,
    user: User,
    role: str,
    is_admin: bool = False,
    actor: User | None,
) -> Membership:
    """Give a user a team role in a project (idempotent); updates the admin flag."""
    if role not in TeamRole.values:
        raise ValidationError({"role": _("Unknown team role %(role)s.") % {"role": role}})
    membership, created = Membership.objects.get_or_create(
        project=project, user=user, role=role, defaults={"is_admin": is_admin}
    )
    if not created and membership.is_admin != is_admin:
        membership.is_admin = is_admin
        membership.save(update_fields=["is_admin"])
    elif not created:
        return membership
    if actor is not None:
        event_record(
            project=project,
            actor=actor,
            verb="membership.set",
            subject=str(user),
            after={"role": role, "is_admin": is_admin},
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


# --- shortlist ---------------------------------------------------------------------------


def _candidate_state(candidate: Candidate) -> dict[str, Any]:
    return {
        "tier": candidate.tier,
        "reason": candidate.reason,
        "version": candidate.version,
        "decided_by_step": candidate.decided_by_step,
    }


def _unique_candidate_slug(project: Project, base: str) -> str:
    taken = set(Candidate.objects.filter(project=project).values_list("slug", flat=True))
    slug, n = base, 2
    while slug in taken:
        slug = f"{base}-{n}"
        n += 1
    return slug


@transaction.atomic
def candidate_add(
    *,
    project: Project,
    solution: Solution,
    actor: User | None,
    tier: str = Tier.FIRST,
    version: str = "",
    decided_by_step: str = FilterStep.INFRASTRUCTURE,
    reason: str = "",
    slug: str = "",
) -> Candidate:
    """Put a catalog solution on a project's shortlist."""
    last = Candidate.objects.filter(project=project).aggregate(m=Max("position"))["m"]
    candidate = Candidate(
        project=project,
        solution=solution,
        slug=slug or _unique_candidate_slug(project, solution.key),
        version=version.strip(),
        tier=tier,
        decided_by_step=decided_by_step,
        reason=reason.strip(),
        position=(last or 0) + 1,
    )
    candidate.full_clean()
    try:
        with transaction.atomic():
            candidate.save()
    except IntegrityError:
        raise ValidationError({"slug": _("This slug is already used in the project.")}) from None
    event_record(
        project=project,
        actor=actor,
        verb="candidate.added",
        subject=str(candidate),
        after=_candidate_state(candidate),
    )
    return candidate


@transaction.atomic
def candidate_update(
    *,
    candidate: Candidate,
    actor: User | None,
    tier: str | None = None,
    reason: str | None = None,
    version: str | None = None,
    decided_by_step: str | None = None,
) -> Candidate:
    """Move a candidate between tiers and/or change its reason, version or deciding step.

    Moving to "not applicable for now" without a reason is refused and nothing changes.
    """
    candidate = (
        Candidate.objects.select_for_update().select_related("solution").get(pk=candidate.pk)
    )
    before = _candidate_state(candidate)
    if tier is not None:
        candidate.tier = tier
    if reason is not None:
        candidate.reason = reason.strip()
    if version is not None:
        candidate.version = version.strip()
    if decided_by_step is not None:
        candidate.decided_by_step = decided_by_step
    candidate.full_clean()
    after = _candidate_state(candidate)
    if after == before:
        return candidate
    candidate.save()
    verb = "candidate.moved" if before["tier"] != after["tier"] else "candidate.updated"
    changed = [k for k in after if after[k] != before[k]]
    event_record(
        project=candidate.project,
        actor=actor,
        verb=verb,
        subject=str(candidate),
        before={k: before[k] for k in changed},
        after={k: after[k] for k in changed},
    )
    return candidate


@transaction.atomic
def candidate_remove(*, candidate: Candidate, actor: User) -> None:
    event_record(
        project=candidate.project,
        actor=actor,
        verb="candidate.removed",
        subject=str(candidate),
        before=_candidate_state(candidate),
    )
    candidate.delete()


# --- catalog -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedReport:
    created: int
    updated: int
    unchanged: int


CATALOG_TEXT_FIELDS = (
    "name",
    "summary",
    "scale",
    "integration_cost",
    "operations_owner",
    "not_suitable_when",
    "must_test",
)


def _solution_values(entry: dict[str, Any], position: int) -> dict[str, Any]:
    values: dict[str, Any] = {
        "kind": entry["kind"],
        "vendor": entry.get("vendor") or "",
        "position": position,
    }
    for name in CATALOG_TEXT_FIELDS:
        texts = entry[name]
        for language, suffix in (("en", "en"), ("zh-hans", "zh")):
            text = texts[language]
            values[f"{name}_{suffix}"] = "\n".join(text) if isinstance(text, list) else text
    return values


@transaction.atomic
def catalog_seed(*, entries: Iterable[dict[str, Any]]) -> SeedReport:
    """Create or update catalog solutions by key; running it twice changes nothing."""
    created = updated = unchanged = 0
    entries = list(entries)
    by_key: dict[str, Solution] = {s.key: s for s in Solution.objects.all()}
    # Routes first so products can point at them.
    ordered = sorted(entries, key=lambda e: 0 if e["kind"] == "route" else 1)
    for position, entry in enumerate(ordered):
        values = _solution_values(entry, position)
        route_key = entry.get("route")
        values["route"] = by_key[route_key] if route_key else None
        solution = by_key.get(entry["key"])
        if solution is None:
            solution = Solution(key=entry["key"], **values)
            solution.full_clean()
            solution.save()
            by_key[solution.key] = solution
            created += 1
            continue
        changed = [k for k, v in values.items() if getattr(solution, k) != v]
        if not changed:
            unchanged += 1
            continue
        for key in changed:
            setattr(solution, key, values[key])
        solution.full_clean()
        solution.save()
        updated += 1
    return SeedReport(created=created, updated=updated, unchanged=unchanged)


# --- demo --------------------------------------------------------------------------------

DEMO_PASSWORD = "workbench-demo"  # noqa: S105 - printed to the developer by `manage.py demo`
DEMO_SLUG = "demo"
DEMO_CANDIDATES = (
    ("k8s-gpu-operator", Tier.FIRST, FilterStep.INFRASTRUCTURE, "1.33 + GPU Operator v25.3"),
    ("volcano", Tier.FIRST, FilterStep.WORKLOAD, "1.12"),
    ("slurm", Tier.ALTERNATIVE, FilterStep.WORKLOAD, "24.05"),
    ("runai", Tier.ALTERNATIVE, FilterStep.RESPONSIBILITY_COST, "2.21"),
    ("openshift-ai", Tier.NOT_APPLICABLE, FilterStep.INFRASTRUCTURE, "2.19"),
)


@transaction.atomic
def demo_seed() -> tuple[Project, list[str]]:
    """The demo project with one user per team role; running it again changes nothing."""
    user_model = get_user_model()
    project = Project.objects.filter(slug=DEMO_SLUG).first()
    if project is None:
        project = Project(
            slug=DEMO_SLUG,
            name=_("Demo: shared GPU pool for training and inference"),
            description=_(
                "A sample evaluation: a 64-GPU pool shared by three model teams, on an "
                "existing Kubernetes platform, with a small Slurm group for batch training."
            ),
            phase="poc",
            workloads=["training", "inference", "batch"],
            existing_base="both",
            layer_needed="queues-quotas",
            supplier_needs=["long-term-support", "multi-cluster"],
        )
        project.full_clean()
        project.save()
    usernames = []
    for role in TeamRole.values:
        user = user_model.objects.filter(username=role).first()
        if user is None:
            user = user_model.objects.create_user(username=role, password=DEMO_PASSWORD)
        membership_set(
            project=project, user=user, role=role, is_admin=role == TeamRole.PLATFORM, actor=None
        )
        usernames.append(role)
    solutions = {s.key: s for s in Solution.objects.all()}
    existing = set(Candidate.objects.filter(project=project).values_list("slug", flat=True))
    for key, tier, step, version in DEMO_CANDIDATES:
        if key in existing or key not in solutions:
            continue
        reason = _demo_reason(key)
        candidate_add(
            project=project,
            solution=solutions[key],
            actor=None,
            tier=tier,
            version=version,
            decided_by_step=step,
            reason=reason,
            slug=key,
        )
    return project, usernames


def _demo_reason(key: str) -> str:
    reasons = {
        "k8s-gpu-operator": _(
            "The base we already run; proves device discovery and driver lifecycle."
        ),
        "volcano": _("Adds queues, gang scheduling and fair share on the same Kubernetes."),
        "slurm": _("The batch-training group already knows it; kept to compare queue semantics."),
        "runai": _("Would buy tenancy and quotas ready-made; cost and exit terms to be checked."),
        "openshift-ai": _(
            "Not for now: it would replace the Kubernetes distribution we run, a bigger "
            "change than this evaluation covers."
        ),
    }
    return reasons.get(key, "")
