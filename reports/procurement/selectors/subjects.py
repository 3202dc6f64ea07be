"""What can be still to be confirmed besides a term, and be chased like one (an owner, a due
date, the request sent): a candidate's cost line that has no basis yet or whose quote has
expired (subject `line:<id>`), and a combination of its compatibility matrix whose strongest
claim is "to be confirmed" (subject `combo:<id>`). Terms are `term:<key>` (selectors/terms.py).

In addresses a subject is written with a dash (`line-12`), since a colon is not a slug."""

from dataclasses import dataclass
from datetime import date

from django.http import Http404
from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project
from poc.probes.combinations import FIELDS
from reports.procurement.models import Combination, Confirmation, CostLine, Support
from reports.procurement.selectors.compatibility import compatibility_matrix


@dataclass
class OtherItem:
    """A cost line or a combination still to be confirmed, with who chases it."""

    candidate: Candidate
    subject: str
    group: str  # "Costs" or "Support and compatibility", in the reader's language
    what: str
    stated: str
    chase: Confirmation | None
    today: date

    @property
    def key(self) -> str:
        return self.subject.replace(":", "-", 1)

    @property
    def line_id(self) -> int | None:
        kind, _sep, pk = self.subject.partition(":")
        return int(pk) if kind == "line" else None

    @property
    def overdue(self) -> bool:
        return bool(self.chase and self.chase.due and self.chase.due < self.today)


def subject_of(key: str) -> str:
    """The stored subject of an address key: `line-12` is `line:12`, a term key `term:<key>`."""
    kind, _sep, rest = key.partition("-")
    if kind in ("line", "combo") and rest.isdigit():
        return f"{kind}:{rest}"
    return f"term:{key}"


def _combination_text(combination: Combination) -> str:
    return " · ".join(value for name in FIELDS if (value := getattr(combination, name))) or "—"


def open_lines(candidates: list[Candidate], today: date) -> list[tuple[CostLine, str]]:
    lines = CostLine.objects.filter(candidate__in=candidates).order_by("candidate", "pk")
    return [
        (line, _("quote expired") if line.quote_expired(today) else _("no basis yet"))
        for line in lines
        if line.unconfirmed(today)
    ]


def open_combinations(project: Project, candidates: list[Candidate]) -> list[Combination]:
    """Stored combinations whose strongest claim is still "to be confirmed"."""
    open_keys = {
        (m.candidate.pk, tuple(row.parts[name] for name in FIELDS))
        for m in compatibility_matrix(project, candidates)
        for row in m.rows
        if row.status == Support.TBC
    }
    return [
        c
        for c in Combination.objects.filter(candidate__in=candidates).order_by("candidate", "pk")
        if (c.candidate_id, tuple(getattr(c, name) for name in FIELDS)) in open_keys
    ]


def other_open_items(project: Project, candidates: list[Candidate], today: date) -> list[OtherItem]:
    """Cost lines and combinations still to be confirmed, overdue and soonest due first."""
    by_pk = {c.pk: c for c in candidates}
    chases = {
        (row.candidate_id, row.subject): row
        for row in Confirmation.objects.filter(
            project=project, candidate__in=candidates, closed_at=None
        )
        .exclude(subject__startswith="term:")
        .select_related("owner")
    }
    items = []
    for line, why in open_lines(candidates, today):
        assert line.candidate_id is not None
        subject = f"line:{line.pk}"
        items.append(
            OtherItem(
                by_pk[line.candidate_id], subject, _("Costs"), line.label,
                f"{line.expected.normalize():f} {line.currency} · {why}".strip(),
                chases.get((line.candidate_id, subject)), today,
            )
        )  # fmt: skip
    for combination in open_combinations(project, candidates):
        subject = f"combo:{combination.pk}"
        items.append(
            OtherItem(
                by_pk[combination.candidate_id], subject, _("Support and compatibility"),
                _combination_text(combination), _("to be confirmed"),
                chases.get((combination.candidate_id, subject)), today,
            )
        )  # fmt: skip
    items.sort(
        key=lambda i: (i.chase is None or i.chase.due is None, i.chase and i.chase.due or date.max)
    )
    return items


def subject_label(project: Project, candidate: Candidate, subject: str, today: date) -> str:
    """What a line or combination subject is, in words, while it is still to be confirmed;
    Http404 otherwise (closed, another candidate's, or unknown)."""
    kind, _sep, pk = subject.partition(":")
    if kind == "line":
        for line, _why in open_lines([candidate], today):
            if str(line.pk) == pk:
                return _("cost line %(label)s") % {"label": line.label}
    elif kind == "combo":
        for combination in open_combinations(project, [candidate]):
            if str(combination.pk) == pk:
                return _("combination %(parts)s") % {"parts": _combination_text(combination)}
    raise Http404
