"""The support and compatibility matrix: per candidate, every combination with every claim on
it (typed ones, and what its probe runs saw), and the strongest of them: failed, then
verified, then a vendor's claim, then to be confirmed. Nothing unverified reads as supported."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project
from evaluations.selectors import ProjectAccess
from poc.probes.combinations import FIELDS, observed
from poc.probes.models import ProbeRun
from reports.procurement.models import SUPPORT_STRENGTH, Combination, Support

MATRIX_EDITORS = {"platform", "ops", "architecture"}


def can_edit_matrix(access: ProjectAccess) -> bool:
    """Platform, operations, architecture and project admins state compatibility."""
    return access.is_admin or bool(MATRIX_EDITORS & set(access.roles))


# Probe runs read per project for the matrix, newest first: older runs saw older stacks.
RUNS_READ = 200
EVIDENCE_STATUSES = ("done", "partial")


@dataclass(frozen=True)
class Claim:
    status: str
    source: str  # how it is known, in words
    run_id: int | None = None
    reference: str = ""
    note: str = ""
    by: str = ""
    at: datetime | None = None

    @property
    def label(self) -> str:
        return str(Support(self.status).label)


@dataclass
class Row:
    parts: dict[str, str]
    claims: list[Claim] = field(default_factory=list)

    @property
    def status(self) -> str:
        if not self.claims:
            return Support.TBC
        return min((c.status for c in self.claims), key=lambda s: SUPPORT_STRENGTH.index(s))

    @property
    def label(self) -> str:
        return str(Support(self.status).label)

    @property
    def cells(self) -> list[str]:
        return [self.parts[name] or "—" for name in FIELDS]


@dataclass
class CandidateMatrix:
    candidate: Candidate
    rows: list[Row]

    def count(self, status: str) -> int:
        return sum(row.status == status for row in self.rows)


def _run_claims(
    project: Project, candidates: Sequence[Candidate]
) -> dict[tuple[int, tuple[str, ...]], list[Claim]]:
    runs = (
        ProbeRun.objects.filter(
            project=project, candidate__in=list(candidates), status__in=EVIDENCE_STATUSES
        )
        .order_by("-created_at", "-pk")
        .prefetch_related("nodes")[:RUNS_READ]
    )
    found: dict[tuple[int, tuple[str, ...]], list[Claim]] = defaultdict(list)
    for run in runs:
        for seen in observed(run):
            hosts = ", ".join(seen.hosts[:3]) + (" …" if len(seen.hosts) > 3 else "")
            found[(run.candidate_id, seen.key)].append(
                Claim(
                    Support.FAILED if seen.failed else Support.VERIFIED,
                    _("probe run %(id)s on %(hosts)s") % {"id": run.pk, "hosts": hosts},
                    run_id=run.pk,
                    at=run.finished_at or run.created_at,
                )
            )
    return found


def compatibility_matrix(
    project: Project, candidates: Sequence[Candidate]
) -> list[CandidateMatrix]:
    """Each candidate's combinations: those its probe runs saw first (newest run first), then
    those only claimed (in the order they were first named)."""
    seen = _run_claims(project, candidates)
    rows: dict[tuple[int, tuple[str, ...]], Row] = {}
    for (candidate_id, key), claims in seen.items():
        rows[(candidate_id, key)] = Row(dict(zip(FIELDS, key, strict=True)), list(claims))
    stored = (
        Combination.objects.filter(candidate__in=list(candidates))
        .prefetch_related("claims__recorded_by")
        .order_by("pk")
    )
    for combination in stored:
        key = tuple(getattr(combination, name) for name in FIELDS)
        row = rows.setdefault(
            (combination.candidate_id, key), Row(dict(zip(FIELDS, key, strict=True)))
        )
        for claim in combination.claims.all():
            row.claims.append(
                Claim(
                    claim.status,
                    claim.reference or _("recorded by hand"),
                    reference=claim.reference,
                    note=claim.note,
                    by=claim.recorded_by.get_username() if claim.recorded_by else "",
                    at=claim.recorded_at,
                )
            )
    by_candidate: dict[int, list[Row]] = defaultdict(list)
    for (candidate_id, _key), row in rows.items():
        by_candidate[candidate_id].append(row)
    return [CandidateMatrix(c, by_candidate[c.pk]) for c in candidates]


def frozen_matrix(project: Project, candidates: Sequence[Candidate]) -> list[dict[str, object]]:
    """The matrix as a sheet freezes it: per candidate, each combination's parts, its
    strongest status and every claim in words."""
    return [
        {
            "slug": m.candidate.slug,
            "candidate": m.candidate.solution.name,
            "rows": [
                {
                    **row.parts,
                    "status": row.status,
                    "claims": [
                        {
                            "status": claim.status,
                            "source": claim.source,
                            "run": claim.run_id,
                            "note": claim.note,
                            "at": claim.at.date().isoformat() if claim.at else None,
                        }
                        for claim in row.claims
                    ],
                }
                for row in m.rows
            ],
        }
        for m in compatibility_matrix(project, candidates)
    ]
