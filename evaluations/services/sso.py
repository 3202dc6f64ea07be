"""What a single sign-on login does here: find or make the account, then give it the team roles
its groups map to (`SSO_GROUP_ROLES`) and take away those its groups no longer give."""

import logging
import re
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from evaluations.models import Membership, MembershipSource, Project, SsoIdentity, SsoProvider
from evaluations.services.history import event_record

logger = logging.getLogger(__name__)

# (group, project slug) pairs already logged as naming no project, so that each is said once per
# process, not at every login.
_unknown_projects_logged: set[tuple[str, str]] = set()
_USERNAME_JUNK = re.compile(r"[^\w.@+-]+")


@dataclass
class MembershipChanges:
    """What one login changed: (project slug, role) pairs, and roles kept against the mapping
    because their project would be left without an admin."""

    granted: list[tuple[str, str]] = field(default_factory=list)
    updated: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)
    kept_last_admin: list[tuple[str, str]] = field(default_factory=list)


@transaction.atomic
def sso_login(
    *, user: User, provider: str, subject: str, groups: list[str], issuer: str = ""
) -> MembershipChanges:
    """Record a single sign-on login: the identity and the groups it came with, then the team
    roles those groups map to."""
    SsoIdentity.objects.update_or_create(
        provider=provider,
        issuer=issuer,
        subject=subject,
        defaults={"user": user, "groups": sorted(set(groups)), "last_login_at": timezone.now()},
    )
    return sso_memberships_apply(user=user, groups=groups)


def sso_groups_refresh(*, identity: SsoIdentity, groups: list[str]) -> MembershipChanges:
    """The groups a directory reports now for an identity that signed in before (a directory
    sync, not a login): kept on the identity, and the team roles they map to applied."""
    wanted = sorted(set(groups))
    if identity.groups != wanted:
        SsoIdentity.objects.filter(pk=identity.pk).update(groups=wanted)
        identity.groups = wanted
    return sso_memberships_apply(user=identity.user, groups=wanted)


@transaction.atomic
def sso_memberships_apply(*, user: User, groups: list[str]) -> MembershipChanges:
    """Make the user's single sign-on roles what `groups` map to, in every project.

    A mapped role the user lacks is granted (source "sso"); a role single sign-on granted earlier
    that no group gives any more is removed, and its admin flag follows the mapping. Roles a
    project admin gave (source "manual") are never touched, also when a group maps to the same
    role. A project's last admin is kept (and logged) rather than removed. A group naming a
    project that does not exist is logged once per process and ignored. Each change goes to
    the project's history."""
    wanted = _wanted_roles(groups)
    rows = {
        (m.project_id, m.role): m
        for m in Membership.objects.select_for_update().filter(user=user).select_related("project")
    }
    changes = MembershipChanges()
    for (project, role), admin in sorted(wanted.items(), key=lambda kv: (kv[0][0].slug, kv[0][1])):
        row = rows.get((project.pk, role))
        if row is None:
            Membership.objects.create(
                project=project, user=user, role=role, is_admin=admin, source=MembershipSource.SSO
            )
            _record(project, user, "membership.set", after=_state(role, admin))
            changes.granted.append((project.slug, role))
        elif row.source == MembershipSource.SSO and row.is_admin != admin:
            if not admin and _last_admin(row):
                changes.kept_last_admin.append((project.slug, role))
                continue
            row.is_admin = admin
            row.save(update_fields=["is_admin"])
            _record(project, user, "membership.set", after=_state(role, admin))
            changes.updated.append((project.slug, role))
    kept = {(project.pk, role) for project, role in wanted}
    for key, row in sorted(rows.items(), key=lambda kv: (kv[1].project.slug, kv[1].role)):
        if row.source != MembershipSource.SSO or key in kept:
            continue
        if row.is_admin and _last_admin(row):
            changes.kept_last_admin.append((row.project.slug, row.role))
            continue
        _record(row.project, user, "membership.removed", before=_state(row.role, row.is_admin))
        row.delete()
        changes.removed.append((row.project.slug, row.role))
    for slug, role in changes.kept_last_admin:
        logger.warning(
            "single sign-on: %s keeps the %s role in %s, whose last admin they are, although "
            "their groups no longer give it",
            user.get_username(),
            role,
            slug,
        )
    return changes


def _wanted_roles(groups: list[str]) -> dict[tuple[Project, str], bool]:
    """(project, role) -> admin, for the groups that `SSO_GROUP_ROLES` maps; several groups
    giving the same role make an admin when any of them does."""
    mapping: dict[str, list[dict[str, object]]] = settings.SSO_GROUP_ROLES
    grants = [(group, grant) for group in sorted(set(groups)) for grant in mapping.get(group, [])]
    slugs = {str(grant["project"]) for _group, grant in grants}
    projects = {p.slug: p for p in Project.objects.filter(slug__in=slugs)}
    wanted: dict[tuple[Project, str], bool] = {}
    for group, grant in grants:
        slug = str(grant["project"])
        project = projects.get(slug)
        if project is None:
            if (group, slug) not in _unknown_projects_logged:
                _unknown_projects_logged.add((group, slug))
                logger.warning(
                    "SSO_GROUP_ROLES: group %r names project %r, which does not exist; ignored",
                    group,
                    slug,
                )
            continue
        key = (project, str(grant["role"]))
        wanted[key] = wanted.get(key, False) or bool(grant.get("admin", False))
    return wanted


def _last_admin(row: Membership) -> bool:
    """Whether taking this row's admin flag away leaves its project with no admin."""
    return not (
        Membership.objects.select_for_update()
        .filter(project_id=row.project_id, is_admin=True)
        .exclude(pk=row.pk)
        .exists()
    )


def _state(role: str, admin: bool) -> dict[str, object]:
    return {"role": role, "is_admin": admin, "source": MembershipSource.SSO.value}


def _record(
    project: Project,
    user: User,
    verb: str,
    *,
    before: dict[str, object] | None = None,
    after: dict[str, object] | None = None,
) -> None:
    # No actor: single sign-on made the change, at the person's own login.
    event_record(
        project=project, actor=None, verb=verb, subject=str(user), before=before, after=after
    )


@transaction.atomic
def oidc_account(
    *,
    issuer: str,
    subject: str,
    username: str,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
) -> User:
    """The account an OIDC subject signs in to: the one its identity row names, else a new
    account without a password, named after `username` (made unique) and never an existing
    account of that name or e-mail address. Name and e-mail follow the provider's."""
    identity = (
        SsoIdentity.objects.select_related("user")
        .filter(provider=SsoProvider.OIDC, issuer=issuer, subject=subject)
        .first()
    )
    if identity is not None:
        user = identity.user
        fields = {"email": email, "first_name": first_name, "last_name": last_name}
        changed = [name for name, value in fields.items() if value and getattr(user, name) != value]
        for name in changed:
            setattr(user, name, fields[name])
        if changed:
            user.save(update_fields=changed)
        return user
    user = User(
        username=_free_username(username or subject),
        email=email,
        first_name=first_name[:150],
        last_name=last_name[:150],
    )
    user.set_unusable_password()
    user.save()
    SsoIdentity.objects.create(user=user, provider=SsoProvider.OIDC, issuer=issuer, subject=subject)
    return user


def _free_username(wanted: str) -> str:
    """`wanted` cleaned to what a user name may hold, with -2, -3... when it is taken."""
    base = _USERNAME_JUNK.sub("-", wanted).strip("-")[:140] or "user"
    name, n = base, 1
    while User.objects.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name
