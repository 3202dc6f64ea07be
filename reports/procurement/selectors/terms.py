"""Reads of procurement: the terms of the candidates side by side, a term's history, what is
still to be confirmed, and the same as plain data for the sheet. A fixed number of queries
whatever the number of candidates."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from babel.numbers import format_currency, format_decimal
from django.contrib.auth.models import User
from django.http import Http404
from django.utils import timezone
from django.utils.translation import get_language, to_locale

from evaluations.models import Candidate, Project, TeamRole
from evaluations.selectors import ProjectAccess
from reports.procurement.models import Basis, Confirmation, TermEntry
from reports.procurement.terms import (
    BY_KEY,
    SUPPORT_LAYERS,
    TERMS,
    Group,
    Kind,
    Term,
    applies,
    terms_in,
)
from workbench.typing import JSON, JSONObject

# Besides project admins, who may change terms and prices.
TERM_EDITORS = {TeamRole.PROCUREMENT, TeamRole.BUSINESS}


def can_edit_terms(access: ProjectAccess) -> bool:
    return access.is_admin or bool(TERM_EDITORS & set(access.roles))


def _locale() -> str:
    return to_locale(get_language() or "en")


def term_display(term: Term, value: JSON) -> str:
    """The value as its reader reads it, in the active language ("" when there is none)."""
    if value is None:
        return ""
    locale = _locale()
    if term.kind == Kind.CHOICE and term.choices is not None:
        return str(term.choices(value).label) if value in term.choices.values else str(value)
    if term.kind == Kind.MONEY and isinstance(value, dict):
        amount = Decimal(str(value.get("amount")))
        return format_currency(amount, str(value.get("currency")), locale=locale)
    if term.kind in (Kind.INTEGER, Kind.DECIMAL):
        number = format_decimal(Decimal(str(value)), locale=locale)
        return f"{number} {term.unit}".strip() if term.unit != "%" else f"{number} %"
    if term.kind == Kind.LAYERS and isinstance(value, dict) and term.choices is not None:
        labels = dict(SUPPORT_LAYERS)
        parties = dict(term.choices.choices)
        return "; ".join(
            f"{labels[layer]}: {parties.get(str(party), party)}"
            for layer, party in value.items()
            if layer in labels
        )
    return str(value)


@dataclass
class TermCell:
    term: Term
    entry: TermEntry | None
    applies: bool = True
    today: date = field(default_factory=timezone.localdate)

    @property
    def display(self) -> str:
        return term_display(self.term, self.entry.value if self.entry else None)

    @property
    def basis(self) -> str:
        return self.entry.basis if self.entry else Basis.TBC

    @property
    def basis_label(self) -> str:
        return str(Basis(self.basis).label)

    @property
    def expired(self) -> bool:
        return self.entry is not None and self.entry.quote_expired(self.today)

    @property
    def open(self) -> bool:
        """Still to be confirmed: no basis yet, or a quote that has expired."""
        return self.applies and self.term.confirmable and (self.basis == Basis.TBC or self.expired)


@dataclass
class TermRow:
    term: Term
    cells: list[TermCell]


@dataclass
class TermGroup:
    key: str
    label: str
    rows: list[TermRow]


@dataclass
class TermsTable:
    candidates: list[Candidate]
    groups: list[TermGroup]

    def open_count(self, candidate: Candidate) -> int:
        index = self.candidates.index(candidate)
        return sum(row.cells[index].open for group in self.groups for row in group.rows)


def current_entries(candidates: Sequence[Candidate]) -> dict[int, dict[str, TermEntry]]:
    """Each candidate's current entry per term (one query)."""
    found: dict[int, dict[str, TermEntry]] = {c.pk: {} for c in candidates}
    entries = TermEntry.objects.filter(candidate__in=list(candidates), current=True)
    for entry in entries.select_related("recorded_by"):
        found[entry.candidate_id][entry.key] = entry
    return found


def _licence_kind(entries: dict[str, TermEntry]) -> str | None:
    entry = entries.get("licence_kind")
    return entry.value if entry is not None and isinstance(entry.value, str) else None


def terms_table(candidates: Sequence[Candidate], *, group: str | None = None) -> TermsTable:
    """The terms side by side: a row per term, a cell per candidate, grouped."""
    entries = current_entries(candidates)
    today = timezone.localdate()
    kinds = {c.pk: _licence_kind(entries[c.pk]) for c in candidates}
    groups = []
    for key, label in Group.choices:
        if group is not None and key != group:
            continue
        rows = [
            TermRow(
                term,
                [
                    TermCell(term, entries[c.pk].get(term.key), applies(term, kinds[c.pk]), today)
                    for c in candidates
                ],
            )
            for term in terms_in(key)
        ]
        groups.append(TermGroup(key, str(label), rows))
    return TermsTable(list(candidates), groups)


def candidate_terms(candidate: Candidate, group: str) -> list[TermCell]:
    table = terms_table([candidate], group=group)
    return [row.cells[0] for row in table.groups[0].rows]


def term_history(candidate: Candidate, key: str) -> list[TermEntry]:
    if key not in BY_KEY:
        raise Http404
    return list(
        TermEntry.objects.filter(candidate=candidate, key=key)
        .select_related("recorded_by")
        .order_by("-recorded_at", "-pk")
    )


@dataclass
class OpenItem:
    candidate: Candidate
    cell: TermCell
    chase: Confirmation | None

    @property
    def subject(self) -> str:
        return f"term:{self.cell.term.key}"

    @property
    def overdue(self) -> bool:
        return bool(self.chase and self.chase.due and self.chase.due < self.cell.today)


def open_items(project: Project, candidates: Sequence[Candidate]) -> list[OpenItem]:
    """What is still to be confirmed for these candidates, with who chases it (two queries):
    overdue first, then by due date; items nobody chases last."""
    table = terms_table(candidates)
    chases = {
        (row.candidate_id, row.subject): row
        for row in Confirmation.objects.filter(
            project=project, candidate__in=list(candidates), closed_at=None
        ).select_related("owner")
    }
    items = [
        OpenItem(candidate, row.cells[index], chases.get((candidate.pk, f"term:{row.term.key}")))
        for group in table.groups
        for row in group.rows
        for index, candidate in enumerate(table.candidates)
        if row.cells[index].open
    ]
    order = {c.pk: n for n, c in enumerate(candidates)}
    position = {term.key: n for n, term in enumerate(TERMS)}
    items.sort(
        key=lambda item: (
            item.chase is None or item.chase.due is None,
            item.chase.due if item.chase and item.chase.due else date.max,
            order[item.candidate.pk],
            position[item.cell.term.key],
        )
    )
    return items


def candidate_in_project(project: Project, slug: str) -> Candidate:
    candidate = Candidate.objects.filter(project=project, slug=slug).select_related("solution")
    found = candidate.first()
    if found is None:
        raise Http404
    return found


def terms_frozen(candidates: Sequence[Candidate]) -> dict[str, list[JSONObject]]:
    """Each candidate's terms as plain data for the sheet's snapshot, in the active language:
    per group, per term its label, the value as read, the basis and its reference, source and
    valid-until date, and whether it is still to be confirmed. Holds no clock reading: a quote
    found expired is judged against the sheet's date where it is printed."""
    table = terms_table(candidates)
    frozen: dict[str, list[JSONObject]] = {c.slug: [] for c in candidates}
    for index, candidate in enumerate(table.candidates):
        for group in table.groups:
            rows: list[JSON] = []
            for row in group.rows:
                cell = row.cells[index]
                if not cell.applies:
                    continue
                entry = cell.entry
                rows.append(
                    {
                        "key": row.term.key,
                        "label": str(row.term.label),
                        "value": cell.display,
                        "basis": cell.basis,
                        "basis_label": cell.basis_label,
                        "reference": entry.reference if entry else "",
                        "source": entry.source if entry else "",
                        "valid_until": entry.valid_until.isoformat()
                        if entry and entry.valid_until
                        else None,
                        "to_confirm": row.term.confirmable and cell.basis == Basis.TBC,
                    }
                )
            frozen[candidate.slug].append({"group": group.key, "label": group.label, "rows": rows})
    return frozen


def open_chase(candidate: Candidate, key: str) -> Confirmation | None:
    """The open chase of a candidate's term (None when nobody chases it yet); Http404 for a
    term that is never to be confirmed."""
    term = BY_KEY.get(key)
    if term is None or not term.confirmable:
        raise Http404
    return Confirmation.objects.filter(
        candidate=candidate, subject=f"term:{key}", closed_at=None
    ).first()


def chase_initial(chase: Confirmation | None) -> dict[str, object]:
    if chase is None:
        return {}
    return {
        "owner_team": chase.owner_team,
        "owner": chase.owner_id,
        "due": chase.due,
        "request": chase.request,
        "requested_at": chase.requested_at,
    }


def project_people(project: Project) -> list[User]:
    return list(User.objects.filter(memberships__project=project).distinct().order_by("username"))
