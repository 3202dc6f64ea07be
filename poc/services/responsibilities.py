"""Assigning many cells of the responsibility grid at once (a row, a column, a selection).

Each chosen cell goes through `responsibility_set`, the single-cell service, so that each one
that changes is recorded in the project history as a single edit would be; all of them run in
one transaction, so that one refusal (a frozen project, a value the model refuses, someone else
assigning the same new cell at the same moment) leaves every cell as it was. Cells that already
hold exactly the assignment are left alone and recorded nowhere."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project
from evaluations.services.freeze import scope_edit_guard
from poc.models import Responsibility, ResponsibilityArea
from poc.services.results import responsibility_set

# What a bulk assignment gives every chosen cell; each cell keeps its own note.
ASSIGNED_FIELDS = ("party", "delivery", "person", "escalation")


@dataclass
class BulkAssignment:
    """The cells a bulk assignment wrote, and those that already held it (left untouched)."""

    changed: list[Responsibility] = field(default_factory=list)
    unchanged: list[Responsibility] = field(default_factory=list)


def responsibilities_assign(
    *,
    project: Project,
    cells: Sequence[tuple[Candidate, str]],
    party: str,
    person: str,
    actor: User | None,
    escalation: str = "",
    delivery: str = "",
) -> BulkAssignment:
    """Give every (candidate, area) cell the same party, person, escalation and kind of
    delivery: all of them, or (on a ValidationError naming what is wrong) none."""
    chosen = _checked_cells(project, cells)
    values = {
        "party": party,
        "delivery": delivery,
        "person": person.strip(),
        "escalation": escalation.strip(),
    }
    try:
        with transaction.atomic():
            return _assign(project, chosen, values, actor)
    except IntegrityError:
        # A cell that had no assignment got one from someone else while this ran.
        raise ValidationError(
            _(
                "Someone else assigned one of these cells at the same moment, so nothing was "
                "changed. Look at the grid again and repeat the assignment."
            ),
            code="concurrent",
        ) from None


def _checked_cells(
    project: Project, cells: Sequence[tuple[Candidate, str]]
) -> list[tuple[Candidate, str]]:
    """The cells once each, in the order given; refused when there are none, or when one is
    not a cell of this project."""
    chosen = list(dict.fromkeys((c, a) for c, a in cells))
    if not chosen:
        raise ValidationError(
            _("Choose at least one cell, a whole row or a whole column to assign."),
            code="nothing_chosen",
        )
    for candidate, area in chosen:
        if candidate.project_id != project.pk:
            raise ValidationError(
                _("%(candidate)s is not a candidate of this project.")
                % {"candidate": candidate.slug},
                code="other_project",
            )
        if area not in ResponsibilityArea.values:
            raise ValidationError(
                _("“%(value)s” is not an area of responsibility.") % {"value": area},
                code="no_area",
            )
    return chosen


def _assign(
    project: Project,
    cells: list[tuple[Candidate, str]],
    values: dict[str, str],
    actor: User | None,
) -> BulkAssignment:
    # One bulk assignment per project at a time, and none across a freeze: the freeze
    # (reports' freeze_refresh) takes the same row lock before it changes the project.
    Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()
    scope_edit_guard(project)
    # Every value checked once, before any cell is written, naming the field it is wrong in.
    Responsibility(project=project, area=cells[0][1], **values).clean_fields(
        exclude=["project", "candidate", "area", "note"]
    )
    held = _locked_rows(cells)
    done = BulkAssignment()
    for candidate, area in cells:
        row = held.get((candidate.pk, area))
        if row is not None and all(getattr(row, f) == values[f] for f in ASSIGNED_FIELDS):
            done.unchanged.append(row)
            continue
        note = row.note if row is not None else ""
        done.changed.append(
            responsibility_set(candidate=candidate, area=area, actor=actor, note=note, **values)
        )
    return done


def _locked_rows(cells: list[tuple[Candidate, str]]) -> dict[tuple[int, str], Responsibility]:
    """The chosen cells' assignments, locked in one order (by id) so that two writers touching
    the same cells cannot deadlock; `responsibility_set` locks each row again, already held."""
    wanted = {(c.pk, a) for c, a in cells}
    rows = (
        Responsibility.objects.select_for_update()
        .filter(candidate_id__in={c for c, _a in wanted}, area__in={a for _c, a in wanted})
        .order_by("pk")
    )
    return {(r.candidate_id, r.area): r for r in rows if (r.candidate_id, r.area) in wanted}
