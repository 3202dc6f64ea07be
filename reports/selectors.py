import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import IO, cast

from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet
from django.http import Http404
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.models import (
    AcceptanceAction,
    AuditHead,
    Candidate,
    Membership,
    Phase,
    Project,
    TeamRole,
    Tier,
)
from evaluations.selectors import ProjectAccess, readiness_for_project
from poc.models import (
    Evidence,
    Outcome,
    Result,
)
from poc.probes.models import (
    ProbeRun,
)
from poc.probes.selectors import EVIDENCE_STATUSES
from poc.selectors import CandidateOverview, comparison_overview
from reports.diff import Changes, snapshot_changes
from reports.models import (
    OPEN_STATUSES,
    WITHDRAWABLE_STATUSES,
    Decision,
    Notice,
    Sheet,
    SheetStatus,
    SignOff,
)
from reports.snapshot import (
    FORMAT,
    build_snapshot,
    canonical_json,
    content_fingerprint,
    sha256_hex,
    snapshot_and_hash,
)
from workbench.languages import product_language

log = logging.getLogger(__name__)


def open_revision(project_id: int) -> Sheet | None:
    """The newest revision still under way: not sealed, withdrawn or rejected."""
    rejected = SignOff.objects.filter(sheet=OuterRef("pk"), decision=Decision.REJECT)
    return (
        Sheet.objects.filter(project_id=project_id, status__in=OPEN_STATUSES)
        .exclude(Exists(rejected))
        .order_by("-revision")
        .only("pk", "revision", "created_at")
        .first()
    )


def sheet_candidates(project: Project, chosen: list[str]) -> list[str]:
    """The candidates a new revision covers: those chosen, else every shortlisted one (the
    not-applicable tier is left out unless chosen)."""
    if chosen:
        return sorted(set(chosen))
    return sorted(
        Candidate.objects.filter(project=project)
        .exclude(tier=Tier.NOT_APPLICABLE)
        .values_list("slug", flat=True)
    )


def sheet_missing(project: Project, candidate_slugs: list[str]) -> list[str]:
    """What the project lacks before a sheet says anything: each missing part, in words."""
    missing = []
    if not candidate_slugs:
        missing.append(
            _(
                "No candidate is shortlisted: put at least one in “Validate first” or “Validate "
                "as alternative”, or choose the candidates this sheet covers."
            )
        )
    if not AcceptanceAction.objects.filter(project=project).exists():
        missing.append(
            _(
                "The acceptance suite has no action: apply templates or write actions before "
                "generating a sheet."
            )
        )
    return missing


def signer_refusal(sheet: Sheet, user: User, role: str) -> str | None:
    """Why this person may not decide for this role of this revision because of who they are,
    or None. Separation of duties: a role granted after the revision was generated does not
    sign it, and one person decides for one role of a revision unless the project allowed
    otherwise when the revision was generated. (Holding the role at all is the caller's
    check: it answers 403.)"""
    membership = Membership.objects.filter(
        project_id=sheet.project_id, user=user, role=role
    ).first()
    if membership is None:
        return None
    label = TeamRole(role).label
    if membership.created_at > sheet.created_at:
        return _(
            "Your %(role)s role was granted after this revision was generated: a role granted "
            "later cannot sign it. Generate a new revision."
        ) % {"role": label}
    if not sheet.one_signer_many_roles:
        other = sheet.signoffs.filter(user=user).exclude(role=role).first()
        if other is not None:
            return _(
                "You already decided on this revision as %(other)s: one person decides for one "
                "role of a revision, so %(role)s needs another signer."
            ) % {"other": TeamRole(other.role).label, "role": label}
    return None


def sheet_generators(sheet: Sheet) -> set[int]:
    """Who generated this revision: the person, or the creator of the CI token that did."""
    ids = {sheet.generated_by_id}
    token = sheet.generated_by_token
    if token is not None:
        ids.add(token.created_by_id)
    return {i for i in ids if i is not None}


def _sheets_queryset(project: Project) -> QuerySet[Sheet]:
    rejected = SignOff.objects.filter(sheet=OuterRef("pk"), decision="reject")
    return (
        Sheet.objects.filter(project=project)
        .select_related("generated_by", "generated_by_token")
        .annotate(rejected=Exists(rejected))
        .defer("snapshot", "snapshot_json")
    )


def content_marker(project: Project) -> str:
    """A cheap token that changes whenever the project's snapshot may have changed: the head
    of its history chain (every edit of framing, shortlist, suite, responsibilities and
    boundaries, and every recorded result, appends to it), the newest result (results are
    append-only; bulk CI posts write one history entry for many), the evidence, and the probe
    runs. Four indexed aggregates instead of a snapshot of thousands of cells."""
    seq = AuditHead.objects.filter(project=project).values_list("seq", flat=True).first()
    result = Result.objects.filter(project=project).aggregate(newest=Max("pk"))
    evidence = Evidence.objects.filter(project=project).aggregate(n=Count("pk"), newest=Max("pk"))
    runs = ProbeRun.objects.filter(project=project).aggregate(
        n=Count("pk", filter=Q(status__in=EVIDENCE_STATUSES)),
        newest=Max("pk"),
        finished=Max("finished_at"),
    )
    parts = (
        seq,
        result["newest"],
        evidence["n"],
        evidence["newest"],
        runs["n"],
        runs["newest"],
        runs["finished"].isoformat() if runs["finished"] else None,
    )
    return ":".join(str(part) for part in parts)


FINGERPRINT_CACHE_SECONDS = 3600


def current_fingerprint(project: Project, candidate_slugs: list[str]) -> str:
    """content_fingerprint, kept in the cache under the project's content marker: a list of
    revisions shows whether each is outdated without rebuilding a snapshot per visit. For
    display only; decisions (signing, sealing) rebuild the fingerprint."""
    chosen = sha256_hex(canonical_json(sorted(candidate_slugs)))[:16]
    key = f"sheet-fp:{FORMAT}:{project.pk}:{chosen}:{content_marker(project)}"
    fingerprint = cache.get(key)
    if fingerprint is None:
        fingerprint = content_fingerprint(project, candidate_slugs=candidate_slugs)
        cache.set(key, fingerprint, FINGERPRINT_CACHE_SECONDS)
    return cast(str, fingerprint)


def sheets_for_project(project: Project) -> list[Sheet]:
    """The project's revisions, newest first; each knows whether a role rejected it."""
    return list(_sheets_queryset(project))


SHEETS_PER_PAGE = 20


def sheets_page_with_staleness(
    project: Project, page: str | int | None = None
) -> tuple[list[tuple[Sheet, bool]], Page]:
    """One page of the project's revisions, newest first, each with whether the project has
    changed since it was frozen. The queries do not grow with the number of revisions:
    revisions frozen for the same candidates share one fresh fingerprint, only the page's
    revisions are judged, and the fingerprint is cached under the project's content marker."""
    paginator = Paginator(_sheets_queryset(project), SHEETS_PER_PAGE)
    shown = paginator.get_page(page)
    current: dict[tuple[str, ...], str] = {}
    out = []
    for sheet in shown.object_list:
        if not sheet.fingerprint:  # frozen before fingerprints: judged on its own hash
            out.append((sheet, sheet_is_stale(sheet)))
            continue
        key = tuple(sheet.candidate_slugs)
        if key not in current:
            current[key] = current_fingerprint(project, sheet.candidate_slugs)
        out.append((sheet, current[key] != sheet.fingerprint))
    return out, shown


def current_snapshot(project: Project, language: str) -> dict:
    """The project as a sheet would freeze it now, every candidate included (for exports)."""
    return build_snapshot(project, language=product_language(language), candidate_slugs=[])


def previous_comparable_sheet(sheet: Sheet) -> Sheet | None:
    """The latest earlier revision frozen in the same language for the same candidates: the
    one whose content a reader compares this revision with."""
    earlier = Sheet.objects.filter(
        project_id=sheet.project_id, language=sheet.language, revision__lt=sheet.revision
    ).order_by("-revision")
    for pk, slugs in earlier.values_list("pk", "candidate_slugs")[:50]:
        if slugs == sheet.candidate_slugs:
            return Sheet.objects.get(pk=pk)
    return None


def signing_roles_without_holder(project: Project) -> list[str]:
    """The project's signing roles that no member holds: its sheets cannot be sealed."""
    held = set(Membership.objects.filter(project=project).values_list("role", flat=True))
    return [r for r in project.signing_roles if r not in held]


def sheet_for_project(project: Project, revision: int) -> Sheet:
    sheet = (
        Sheet.objects.filter(project=project, revision=revision)
        .select_related("project", "generated_by", "generated_by_token")
        .first()
    )
    if sheet is None:
        raise Http404
    return sheet


def audited_projects(slugs: list[str]) -> list[Project]:
    """The projects whose history chain is checked: every one, or those named; by slug."""
    projects = Project.objects.order_by("slug")
    return list(projects.filter(slug__in=slugs) if slugs else projects)


def sealed_sheets_with_anchor(project: Project) -> list[Sheet]:
    """The project's sealed revisions that recorded the history's head, oldest first."""
    sealed = Sheet.objects.filter(project=project, status=SheetStatus.SEALED)
    return list(sealed.filter(audit_seq__isnull=False).order_by("revision"))


def sheet_by_id(sheet_id: int) -> Sheet | None:
    return Sheet.objects.filter(pk=sheet_id).select_related("project").first()


def sheet_file(sheet: Sheet) -> IO[bytes]:
    """The sealed PDF once signed, else the draft, opened; 404 when there is none yet or its
    file has gone from storage."""
    field = sheet.sealed_pdf if sheet.sealed_pdf else sheet.pdf
    if not field:
        raise Http404
    try:
        return cast(IO[bytes], field.open("rb"))
    except OSError as exc:
        log.error("sheet %s: its PDF %s is missing from storage: %s", sheet.pk, field.name, exc)
        raise Http404 from None


def signoffs_for_sheet(sheet: Sheet) -> list[SignOff]:
    return list(sheet.signoffs.select_related("user"))


def signing_roles_of(user: User, sheet: Sheet) -> set[str]:
    """The roles this person holds in the sheet's project that sign this sheet."""
    held = Membership.objects.filter(project=sheet.project, user=user).values_list(
        "role", flat=True
    )
    return set(held) & set(sheet.required_roles)


def sheet_is_stale(sheet: Sheet) -> bool:
    """Whether the project has changed since this revision was frozen (rebuilds the snapshot:
    call it where a decision depends on it, not on every poll). Compared on the fingerprint,
    so a translation update alone does not make a revision outdated."""
    if sheet.fingerprint:
        current = content_fingerprint(sheet.project, candidate_slugs=sheet.candidate_slugs)
        return current != sheet.fingerprint
    _snapshot, _text, digest = snapshot_and_hash(
        sheet.project, language=sheet.language, candidate_slugs=sheet.candidate_slugs
    )
    return digest != sheet.sha256


def changes_since_freeze(sheet: Sheet) -> Changes:
    """What differs between what this revision froze and the project now, in its language."""
    now = build_snapshot(
        sheet.project, language=sheet.language, candidate_slugs=sheet.candidate_slugs
    )
    return snapshot_changes(sheet.snapshot, now)


# Rendering the largest sheets takes seconds; work older than this was lost with its worker.
STUCK_AFTER = timedelta(minutes=10)


def sheet_work_is_stuck(sheet: Sheet) -> bool:
    """Whether the sheet waits on work nobody is doing any more: queued longer ago than
    STUCK_AFTER without a worker taking it (a lost message), or taken longer ago than that
    without a result (a worker that stopped). A failed seal (seal_error) is not stuck: it waits
    for a retry, which the page offers at once."""
    if sheet.unsent:
        return False  # not lost: it waits for the broker, and the beat sends it
    now = timezone.now()
    if sheet.work_started_at is not None:
        return sheet.status in (SheetStatus.RENDERING, SheetStatus.SEALING) and (
            now - sheet.work_started_at > STUCK_AFTER
        )
    if sheet.status == SheetStatus.SEALING and sheet.seal_error:
        return False
    if sheet.status in (SheetStatus.PENDING, SheetStatus.SEALING):
        return now - (sheet.queued_at or sheet.created_at) > STUCK_AFTER
    return False


def sheet_counts() -> list[tuple[str, float]]:
    """Revisions by state (for metrics)."""
    rows = Sheet.objects.values_list("status").annotate(n=Count("pk")).order_by()
    return [(status, float(n)) for status, n in rows]


def notice_counts() -> list[tuple[str, float]]:
    """Notices not sent: still to be tried, and given up on (for metrics)."""
    pending = Notice.objects.filter(sent_at=None)
    return [
        ("waiting", float(pending.filter(attempts__lt=Notice.MAX_ATTEMPTS).count())),
        ("given_up", float(pending.filter(attempts__gte=Notice.MAX_ATTEMPTS).count())),
    ]


@dataclass
class SheetReview:
    """What one member's sheet page shows: decisions so far, whether the project moved on since
    the freeze (and how), the roles this person may decide for now or why not, and the
    changes since the previous comparable revision."""

    decided: dict[str, SignOff]
    stale: bool
    since_freeze: Changes | None
    open_roles: list[str]
    blocked_roles: list[str]
    may_withdraw: bool
    required: list[tuple[str, SignOff | None]]
    rejections: list[tuple[str, SignOff]]
    stuck: bool
    previous: Sheet | None = None
    changes: Changes | None = None


def sheet_review(
    sheet: Sheet, user: User, access: ProjectAccess, *, with_changes: bool = True
) -> SheetReview:
    """The reads behind a sheet page. Staleness rebuilds the snapshot, so it is judged only for
    a sheet open for sign-off (not while the page polls a rendering one); `with_changes`
    compares with the previous revision (skipped for polls too)."""
    decided = {s.role: s for s in signoffs_for_sheet(sheet)}
    open_for_sign_off = sheet.status == SheetStatus.READY
    stale = open_for_sign_off and sheet_is_stale(sheet)
    open_roles, blocked_roles = [], []
    for role in access.roles:
        if role in sheet.required_roles and role not in decided and open_for_sign_off:
            refusal = signer_refusal(sheet, user, role)
            if refusal is None:
                open_roles.append(role)
            else:
                blocked_roles.append(refusal)
    review = SheetReview(
        decided=decided,
        stale=stale,
        since_freeze=changes_since_freeze(sheet) if stale else None,
        open_roles=open_roles,
        blocked_roles=blocked_roles,
        may_withdraw=sheet.status in WITHDRAWABLE_STATUSES
        and (access.is_admin or sheet.generated_by_id == user.pk)
        and access.can_write,
        required=[(str(TeamRole(r).label), decided.get(r)) for r in sheet.required_roles],
        rejections=[
            (str(TeamRole(r).label), so)
            for r, so in decided.items()
            if so.decision == Decision.REJECT
        ],
        stuck=sheet_work_is_stuck(sheet),
    )
    if with_changes:
        review.previous = previous_comparable_sheet(sheet)
        if review.previous is not None:
            review.changes = snapshot_changes(review.previous.snapshot, sheet.snapshot)
    return review


# --- where an evaluation stands -------------------------------------------------------------


@dataclass(frozen=True)
class ProgressStep:
    key: str
    label: str
    done: bool
    detail: str
    url: str


@dataclass(frozen=True)
class Progress:
    """The method's steps for one project, each done or not, read from the project itself: the
    stage is the first step not done ("decided" once a current revision is sealed)."""

    steps: list[ProgressStep]
    stage: str
    actions: int = 0  # acceptance actions defined
    candidates: list[CandidateOverview] = field(default_factory=list)  # in play: counts, effort

    @property
    def next_step(self) -> ProgressStep | None:
        return next((step for step in self.steps if not step.done), None)

    @property
    def phase(self) -> Phase:
        """The project's phase these steps add up to (framing, shortlisting, proof of concept,
        sign-off, decided). A proof of concept needs an action to run: until the first one is
        written the project stays in shortlisting."""
        step = self.next_step
        if step is None:
            return Phase.SIGNED
        if step.key == "suite" and not self.actions:
            return Phase.SHORTLISTING
        return PHASE_OF_STEP[step.key]


PHASE_OF_STEP = {
    "framing": Phase.FRAMING,
    "shortlist": Phase.SHORTLISTING,
    "suite": Phase.POC,
    "poc": Phase.POC,
    "responsibilities": Phase.POC,
    "recommendation": Phase.REVIEW,
    "sign_off": Phase.REVIEW,
}


def evaluation_progress(project: Project) -> Progress:
    readiness = readiness_for_project(project)
    # Counts only (summed in the database): the card must stay quick on a large project.
    summaries = comparison_overview(project, list_limit=0)
    uncovered = sum(s.counts[Outcome.NOT_COVERED] for s in summaries)
    cells = sum(sum(s.counts.values()) for s in summaries)
    gaps = sum(len(s.responsibility_gaps) for s in summaries)
    sealed = (
        Sheet.objects.filter(project=project, status=SheetStatus.SEALED)
        .order_by("-revision")
        .defer("snapshot", "snapshot_json")
        .first()
    )
    sealed_current = sealed is not None and (
        current_fingerprint(project, sealed.candidate_slugs) == sealed.fingerprint
        if sealed.fingerprint
        else not sheet_is_stale(sealed)
    )
    open_sheet = open_revision(project.pk)
    slug = project.slug
    steps = [
        ProgressStep(
            "framing",
            _("Frame the evaluation"),
            project.framing_complete,
            _("The four framing questions are answered.")
            if project.framing_complete
            else _("Answer the four framing questions."),
            reverse("evaluations:project_framing", args=[slug]),
        ),
        ProgressStep(
            "shortlist",
            _("Shortlist candidates"),
            bool(readiness.candidates_in_play),
            _("%(n)s candidates in play.") % {"n": len(readiness.candidates_in_play)}
            if readiness.candidates_in_play
            else _("Put at least one candidate in a tier that is validated."),
            reverse("evaluations:project_detail", args=[slug]) + "#shortlist-h",
        ),
        ProgressStep(
            "suite",
            _("Rewrite features into acceptance actions"),
            readiness.ready and readiness.action_total > 0,
            _("%(n)s actions; the four minimum scenarios are covered.")
            % {"n": readiness.action_total}
            if readiness.ready and readiness.action_total
            else _(
                "Cover real task, resource shortage, permission overreach and node failure, "
                "and rewrite every requirement into actions."
            ),
            reverse("evaluations:suite", args=[slug]),
        ),
        ProgressStep(
            "poc",
            _("Run the PoC"),
            cells > 0 and uncovered == 0,
            _("Every action has a result for every candidate in play.")
            if cells and not uncovered
            else _("%(n)s of %(total)s cells are not covered yet.")
            % {"n": uncovered, "total": cells},
            reverse("poc:matrix", args=[slug]) + "?outcome=not_covered",
        ),
        ProgressStep(
            "responsibilities",
            _("Agree who carries what"),
            bool(summaries) and gaps == 0,
            _("No responsibility gap.")
            if summaries and not gaps
            else _("%(n)s responsibility gaps.") % {"n": gaps},
            reverse("poc:responsibilities", args=[slug]),
        ),
        ProgressStep(
            "recommendation",
            _("Write the recommendation"),
            bool(project.recommended),
            _("Recommended: %(names)s.") % {"names": ", ".join(project.recommended)}
            if project.recommended
            else _("Name the recommended candidates, the conditions and the reason."),
            reverse("reports:sheets", args=[slug]),
        ),
        ProgressStep(
            "sign_off",
            _("Sign off the procurement sheet"),
            sealed_current,
            _("r%(r)s is sealed and current.") % {"r": sealed.revision}
            if sealed_current and sealed is not None
            else _("r%(r)s awaits its decisions.") % {"r": open_sheet.revision}
            if open_sheet is not None
            else _("Generate a revision and have every role decide."),
            reverse("reports:sheets", args=[slug]),
        ),
    ]
    stages = {
        "framing": _("Framing"),
        "shortlist": _("Shortlisting"),
        "suite": _("Preparing the PoC"),
        "poc": _("PoC under way"),
        "responsibilities": _("PoC under way"),
        "recommendation": _("Review"),
        "sign_off": _("Sign-off"),
    }
    first_open = next((step for step in steps if not step.done), None)
    stage = str(stages[first_open.key]) if first_open is not None else str(_("Decided"))
    return Progress(steps, stage, actions=readiness.action_total, candidates=summaries)


# --- revisions waiting for the worker (reports.render_caps) ---------------------------------


@dataclass(frozen=True)
class RendersWaiting:
    project: int
    person: int | None  # None: nobody to count for (no person behind the request)
    everyone: int


def renders_waiting(project: Project, person: User | None) -> RendersWaiting:
    """How many revisions wait to be rendered: the project's, the person's (theirs and their
    tokens', in any project) and everyone's."""
    waiting = Sheet.objects.filter(status__in=(SheetStatus.PENDING, SheetStatus.RENDERING))
    theirs = None
    if person is not None:
        theirs = waiting.filter(
            Q(generated_by=person) | Q(generated_by_token__created_by=person)
        ).count()
    return RendersWaiting(
        project=waiting.filter(project=project).count(), person=theirs, everyone=waiting.count()
    )
