"""Reads shared by pages, API and commands; related rows are fetched here and nowhere else."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Prefetch, Q, QuerySet
from django.http import Http404
from django.utils.translation import gettext

from evaluations.audit import Break, Entry, first_break
from evaluations.claims import CLAIM_BULLET, Match, rank
from evaluations.claims import Candidate as ClaimCandidate
from evaluations.demo import DEMO_ADMIN, DEMO_SLUG
from evaluations.history_labels import HistoryNames
from evaluations.models import (
    REQUIRED_SCENARIOS,
    AcceptanceAction,
    ActionKeyRename,
    AuditHead,
    Candidate,
    Dimension,
    Membership,
    Project,
    ProjectEvent,
    Requirement,
    Scenario,
    Solution,
    SolutionKind,
    TeamRole,
    TemplateRequirement,
    TemplateSet,
    Tier,
)
from workbench.typing import AnyUser


@dataclass(frozen=True)
class ProjectAccess:
    """A project as one user may see it: their team roles and whether they administer it."""

    project: Project
    roles: tuple[str, ...]
    is_admin: bool

    @property
    def can_write(self) -> bool:
        return self.is_admin or any(role != TeamRole.OBSERVER for role in self.roles)

    def role_labels(self) -> list[str]:
        labels = dict(TeamRole.choices)
        return [str(labels[role]) for role in self.roles]


def projects_for_user(user: AnyUser) -> QuerySet[Project]:
    """The projects a user is a member of, with their memberships and candidate counts."""
    if not user.is_authenticated:
        return Project.objects.none()
    return (
        Project.objects.filter(memberships__user=user)
        .distinct()
        .annotate(candidate_count=Count("candidates", distinct=True))
        .prefetch_related(
            Prefetch(
                "memberships",
                queryset=Membership.objects.filter(user=user),
                to_attr="my_memberships",
            )
        )
        .order_by("name")
    )


def project_access(
    user: AnyUser, slug: str, *, write: bool = False, admin: bool = False
) -> ProjectAccess:
    """The project for a member, or Http404 for anyone else (never a hint that it exists).

    A member without the right to write (an observer) gets PermissionDenied for writes; only
    project admins pass `admin=True`.
    """
    if not user.is_authenticated:
        raise Http404
    memberships = list(
        Membership.objects.filter(user=user, project__slug=slug).select_related("project")
    )
    if not memberships:
        raise Http404
    access = ProjectAccess(
        project=memberships[0].project,
        roles=tuple(sorted({m.role for m in memberships}, key=_role_order)),
        is_admin=any(m.is_admin for m in memberships),
    )
    if admin and not access.is_admin:
        raise PermissionDenied
    if write and not access.can_write:
        raise PermissionDenied
    return access


def is_member(user: AnyUser, slug: str) -> bool:
    if not isinstance(user, User) or not user.is_authenticated:
        return False
    return Membership.objects.filter(user=user, project__slug=slug).exists()


def project_for_user(user: AnyUser, slug: str, *, write: bool = False) -> Project:
    return project_access(user, slug, write=write).project


def _role_order(role: str) -> int:
    return TeamRole.values.index(role)


@dataclass
class Shortlist:
    """A project's candidates split into the three tiers, in display order."""

    columns: list[tuple[str, str, list[Candidate]]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(len(candidates) for _, _, candidates in self.columns)


def shortlist_for_project(project: Project) -> Shortlist:
    candidates = list(
        Candidate.objects.filter(project=project).select_related("solution", "solution__route")
    )
    shortlist = Shortlist()
    for tier, label in Tier.choices:
        shortlist.columns.append((tier, str(label), [c for c in candidates if c.tier == tier]))
    return shortlist


def shortlist_candidates(project: Project) -> QuerySet[Candidate]:
    return (
        Candidate.objects.filter(project=project)
        .select_related("solution")
        .order_by("position", "pk")
    )


def candidates_in_play(project: Project, *, include_all: bool = False) -> list[Candidate]:
    """The candidates a review compares: the first tier and the alternatives (every candidate
    with include_all), in shortlist order."""
    queryset = Candidate.objects.filter(project=project).select_related("solution")
    if not include_all:
        queryset = queryset.filter(tier__in=[Tier.FIRST, Tier.ALTERNATIVE])
    return list(queryset.order_by("position", "pk"))


def candidate_for_project(project: Project, slug: str) -> Candidate:
    try:
        return Candidate.objects.select_related("solution", "solution__route").get(
            project=project, slug=slug
        )
    except Candidate.DoesNotExist:
        raise Http404 from None


def catalog_routes() -> list[Solution]:
    """Routes with their products, in catalog order."""
    products = (
        Solution.objects.filter(kind=SolutionKind.PRODUCT)
        .select_related("added_by")
        .order_by("position", "key")
    )
    return list(
        Solution.objects.filter(kind=SolutionKind.ROUTE)
        .select_related("added_by")
        .prefetch_related(Prefetch("products", queryset=products))
        .order_by("position", "key")
    )


def catalog_solutions() -> QuerySet[Solution]:
    return Solution.objects.select_related("route").order_by("kind", "position", "key")


PEOPLE_SHOWN = 10


def people_matching(text: str) -> list[User]:
    """Active people whose user name, e-mail address or name contains `text` (at least two
    characters), exact user names and addresses first; at most PEOPLE_SHOWN."""
    text = text.strip()
    if len(text) < 2:
        return []
    found = (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(
            Q(username__icontains=text)
            | Q(email__icontains=text)
            | Q(first_name__icontains=text)
            | Q(last_name__icontains=text)
        )
    )
    exact = Q(username__iexact=text) | Q(email__iexact=text)
    first = list(found.filter(exact).order_by("username"))
    rest = found.exclude(exact).order_by("username")[: PEOPLE_SHOWN - len(first)]
    return [*first, *rest][:PEOPLE_SHOWN]


def person_named(text: str) -> tuple[User | None, list[User]]:
    """The one active person `text` names: by user name or e-mail address (either case), else by
    full name. (None, candidates) when nobody or several match."""
    text = text.strip()
    people = get_user_model().objects.filter(is_active=True)
    for exact in (Q(username__iexact=text), Q(email__iexact=text)):
        found = list(people.filter(exact)[:PEOPLE_SHOWN])
        if len(found) == 1:
            return found[0], found
        if found:
            return None, found
    named = [
        p
        for p in people.filter(first_name__isnull=False).exclude(first_name="", last_name="")
        if p.get_full_name().casefold() == " ".join(text.split()).casefold()
    ][:PEOPLE_SHOWN]
    return (named[0], named) if len(named) == 1 else (None, named)


def project_members(project: Project) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(project=project)
        .select_related("user")
        .order_by("user__username", "role")
    )


def project_events(project: Project, *, limit: int = 50) -> list[ProjectEvent]:
    """The newest entries, each with what they name (`HistoryNames`), for their words."""
    events = list(ProjectEvent.objects.filter(project=project).select_related("actor")[:limit])
    HistoryNames.read(project, events)
    return events


HISTORY_PER_PAGE = 100


def history_kinds(project: Project) -> list[str]:
    """The verbs the project's history holds, for its filter."""
    return sorted(
        ProjectEvent.objects.filter(project=project)
        .order_by()
        .values_list("verb", flat=True)
        .distinct()
    )


def project_history_page(
    project: Project,
    *,
    verb: str = "",
    actor: str = "",
    since: date | None = None,
    until: date | None = None,
    page: str | int | None = None,
) -> Page[ProjectEvent]:
    """One page of the project's history, newest first, narrowed as asked; its entries hold what
    they name (`HistoryNames`), for their words."""
    events = ProjectEvent.objects.filter(project=project).select_related("actor")
    if verb:
        events = events.filter(verb=verb)
    if actor:
        events = events.filter(actor_name__iexact=actor)
    if since:
        events = events.filter(at__date__gte=since)
    if until:
        events = events.filter(at__date__lte=until)
    found = Paginator(events.order_by("-at", "-pk"), HISTORY_PER_PAGE).get_page(page)
    found.object_list = list(found.object_list)
    HistoryNames.read(project, found.object_list)
    return found


@dataclass(frozen=True)
class AuditAnchor:
    """A place in a project's chain recorded outside it (a sealed sheet prints the chain's head
    at sealing): entry `seq` had hash `hash` then."""

    seq: int
    hash: str
    where: str  # who recorded it, for the message ("sheet r3")


def audit_head(project: Project) -> AuditAnchor | None:
    """The newest entry of the project's chain (None before the first)."""
    head = AuditHead.objects.filter(project=project).values_list("seq", "hash").first()
    if head is None or not head[0]:
        return None
    return AuditAnchor(seq=head[0], hash=head[1], where="")


def _anchor_break(project: Project, anchors: Iterable[AuditAnchor]) -> Break | None:
    wanted = {a.seq: a for a in anchors}
    if not wanted:
        return None
    found = dict(
        ProjectEvent.objects.filter(project=project, seq__in=list(wanted)).values_list(
            "seq", "hash"
        )
    )
    for seq in sorted(wanted):
        anchor = wanted[seq]
        if seq not in found:
            return Break(
                seq,
                None,
                f"{anchor.where} recorded entry {seq}, which the chain no longer holds: "
                "entries were deleted after it was sealed",
            )
        if found[seq] != anchor.hash:
            return Break(
                seq,
                None,
                f"{anchor.where} recorded entry {seq} as {anchor.hash[:16]}…, the chain now "
                f"holds {found[seq][:16]}…: the history was rewritten after it was sealed",
            )
    return None


def audit_chain_break(project: Project, anchors: Iterable[AuditAnchor] = ()) -> Break | None:
    """The first broken link of the project's history chain, or None when it holds; then each
    anchor recorded outside the chain must still match it.

    Entries are read in position order, a few thousand at a time, so a long history is checked
    in bounded memory."""
    head = AuditHead.objects.filter(project=project).values_list("seq", "hash").first()
    head_seq, head_hash = head if head is not None else (0, "")
    rows = (
        ProjectEvent.objects.filter(project=project)
        .order_by(F("seq").asc(nulls_first=True), "pk")
        .values_list(
            "pk",
            "seq",
            "at",
            "actor_name",
            "verb",
            "subject",
            "before",
            "after",
            "prev_hash",
            "hash",
            "key_id",
            "subject_parts",
        )
        .iterator(chunk_size=2000)
    )
    entries = (Entry(*row) for row in rows)
    found = first_break(entries, head_seq, head_hash)
    if found is not None and not found.unsealed:
        return found
    return _anchor_break(project, anchors) or found


def audit_key_use() -> dict[str, int]:
    """How many history entries each key id keyed ("" before the chain was keyed)."""
    return dict(ProjectEvent.objects.values_list("key_id").annotate(n=Count("pk")).order_by())


# --- acceptance suite --------------------------------------------------------------------


@dataclass
class SuiteFilters:
    dimension: str = ""
    scenario: str = ""
    team: str = ""

    @property
    def active(self) -> bool:
        return bool(self.dimension or self.scenario or self.team)


@dataclass
class DimensionGroup:
    dimension: str
    label: str
    requirements: list[Requirement]
    folded: bool = False  # requirements show their action count; each opens on demand


# A suite with more acceptance actions than this (after the filters) shows its requirements
# folded: each opens on demand, so the page stays light whatever the size of the suite.
SUITE_UNFOLDED_ACTIONS = 150


def suite_for_project(
    project: Project, filters: SuiteFilters | None = None, *, fold: bool = True
) -> list[DimensionGroup]:
    """Requirements grouped by dimension, each with its (filtered) actions, in order. Each
    requirement carries `action_count`; a suite with more than SUITE_UNFOLDED_ACTIONS shown
    actions is folded (its groups say so): no action is loaded, and each requirement is
    opened on demand. `fold=False` loads every action whatever the size (exports).

    With a scenario filter, requirements without a matching action drop out; without one,
    requirements with no action stay visible ("not yet rewritten").
    """
    filters = filters or SuiteFilters()
    actions = AcceptanceAction.objects.order_by("position", "pk")
    if filters.scenario:
        actions = actions.filter(scenario=filters.scenario)
    requirements = Requirement.objects.filter(project=project)
    if filters.dimension:
        requirements = requirements.filter(dimension=filters.dimension)
    if filters.team:
        requirements = requirements.filter(owner_team=filters.team)
    shown = actions.filter(requirement__in=requirements).count() if fold else 0
    folded = fold and shown > SUITE_UNFOLDED_ACTIONS
    counted = requirements.annotate(
        action_count=Count(
            "actions",
            filter=Q(actions__scenario=filters.scenario) if filters.scenario else None,
        )
    )
    if not folded:
        counted = counted.prefetch_related(
            Prefetch("actions", queryset=actions, to_attr="shown_actions")
        )
    groups = {
        value: DimensionGroup(value, str(label), [], folded=folded)
        for value, label in Dimension.choices
    }
    for requirement in counted.order_by("position", "pk"):
        if filters.scenario and not requirement.action_count:
            continue
        groups[requirement.dimension].requirements.append(requirement)
    return [group for group in groups.values() if group.requirements]


def requirement_for_project(project: Project, requirement_id: int) -> Requirement:
    requirement = (
        Requirement.objects.filter(project=project, pk=requirement_id)
        .annotate(action_count=Count("actions"))
        .prefetch_related(
            Prefetch(
                "actions",
                queryset=AcceptanceAction.objects.order_by("position", "pk"),
                to_attr="shown_actions",
            )
        )
        .first()
    )
    if requirement is None:
        raise Http404
    return requirement


def action_for_project(project: Project, action_id: int) -> AcceptanceAction:
    action = (
        AcceptanceAction.objects.filter(project=project, pk=action_id)
        .select_related("requirement")
        .first()
    )
    if action is None:
        raise Http404
    return action


def action_by_key(project: Project, key: str) -> AcceptanceAction | None:
    """The action a key names now, or the one it named before a rename."""
    action = AcceptanceAction.objects.filter(project=project, key=key).first()
    if action is not None:
        return action
    rename = (
        ActionKeyRename.objects.filter(project=project, old_key=key)
        .select_related("action")
        .order_by("-renamed_at", "-pk")
        .first()
    )
    return rename.action if rename else None


def action_keys_with_aliases(project: Project) -> set[str]:
    """Every key that names an action of the project now or named one before a rename."""
    keys = set(AcceptanceAction.objects.filter(project=project).values_list("key", flat=True))
    keys.update(ActionKeyRename.objects.filter(project=project).values_list("old_key", flat=True))
    return keys


def actions_for_project(project: Project) -> QuerySet[AcceptanceAction]:
    return (
        AcceptanceAction.objects.filter(project=project)
        .select_related("requirement")
        .order_by("requirement__dimension", "requirement__position", "position", "pk")
    )


@dataclass
class Readiness:
    """Which required scenario kinds a project's suite lacks, and which candidates that blocks."""

    counts: dict[str, int]
    missing: list[tuple[str, str]]
    candidates_in_play: list[Candidate]
    unrewritten: int
    action_total: int

    @property
    def ready(self) -> bool:
        return not self.missing and not self.unrewritten


def readiness_for_project(project: Project) -> Readiness:
    counts = dict(
        AcceptanceAction.objects.filter(project=project)
        .values_list("scenario")
        .annotate(n=Count("pk"))
        .values_list("scenario", "n")
    )
    labels = dict(Scenario.choices)
    missing = [(s.value, str(labels[s])) for s in REQUIRED_SCENARIOS if not counts.get(s.value)]
    in_play = list(
        Candidate.objects.filter(
            project=project, tier__in=[Tier.FIRST, Tier.ALTERNATIVE]
        ).select_related("solution")
    )
    unrewritten = Requirement.objects.filter(project=project, actions__isnull=True).count()
    return Readiness(
        counts=counts,
        missing=missing,
        candidates_in_play=in_play,
        unrewritten=unrewritten,
        action_total=sum(counts.values()),
    )


def template_sets() -> QuerySet[TemplateSet]:
    return TemplateSet.objects.select_related("route").annotate(
        action_count=Count("requirements__actions")
    )


def template_set_by_key(key: str) -> TemplateSet:
    template_set = TemplateSet.objects.filter(key=key).first()
    if template_set is None:
        raise Http404
    return template_set


def demo_accounts() -> list[tuple[str, str]]:
    """(username, what they do) for the demo's people (each named after their team role) and
    the demo administrator, as far as they exist."""
    labels = dict(TeamRole.choices)
    rows = (
        Membership.objects.filter(project__slug=DEMO_SLUG)
        .values_list("user__username", "role")
        .order_by("role")
    )
    accounts = [(username, str(labels[role])) for username, role in rows if username == role]
    if get_user_model().objects.filter(username=DEMO_ADMIN, is_superuser=True).exists():
        accounts.append((DEMO_ADMIN, gettext("administrator (admin site, System page)")))
    return accounts


# Claims read for suggestions at once (a pasted list beyond this is suggested in part).
CLAIMS_SUGGESTED = 30


@dataclass(frozen=True)
class ClaimSuggestion:
    claim: str
    matches: list[tuple[TemplateRequirement, Match]]


def claim_suggestions(text: str) -> list[ClaimSuggestion]:
    """For each pasted claim (one per line, bullets and numbering removed), the template
    requirements whose rewrite matches it best, with their set. Two queries whatever the
    number of claims."""
    claims = [CLAIM_BULLET.sub("", line).strip() for line in text.splitlines()]
    claims = [c for c in dict.fromkeys(claims) if c][:CLAIMS_SUGGESTED]
    if not claims:
        return []
    library = list(
        TemplateRequirement.objects.select_related("template_set").prefetch_related("actions")
    )
    by_key = {r.key: r for r in library}
    candidates = [
        ClaimCandidate(
            r.key,
            [
                r.feature_en,
                r.feature_zh,
                *(text for a in r.actions.all() for text in (a.question_en, a.question_zh)),
            ],
        )
        for r in library
    ]
    return [
        ClaimSuggestion(claim, [(by_key[m.key], m) for m in rank(claim, candidates)])
        for claim in claims
    ]
