"""Cost lines imported from a file or posted in bulk: every row checked first, each problem
named with its row, and then all of them written in one transaction, or none."""

from dataclasses import fields as dataclass_fields
from datetime import date

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from evaluations.history_labels import phrase_part
from evaluations.models import Candidate, Project
from evaluations.services import event_record, scope_edit_guard
from reports.procurement.lines_io import Row
from reports.procurement.models import CostLine
from reports.procurement.services.costs import LineData, line_fields
from workbench.people import stored_user

BASELINE = "baseline"
ERRORS_SHOWN = 50
LINE_FIELDS = {f.name for f in dataclass_fields(LineData)}


def _candidate(project: Project, key: str, by_slug: dict[str, Candidate]) -> Candidate | None:
    """The candidate a row names (its key, any case), None for the baseline."""
    key = key.strip().lower()
    if key == BASELINE:
        return None
    if key not in by_slug:
        raise ValidationError(
            _("%(key)s is not a candidate of this project (one of %(keys)s, or baseline).")
            % {"key": key or "—", "keys": ", ".join(sorted(by_slug)) or "—"}
        )
    return by_slug[key]


def _data(values: dict[str, str]) -> LineData:
    given = {k: v for k, v in values.items() if k in LINE_FIELDS}
    until = given.pop("valid_until", "")
    try:
        valid_until = date.fromisoformat(until) if until else None
    except ValueError:
        raise ValidationError(
            _("valid_until must be a date, YYYY-MM-DD, not %(value)s.") % {"value": until}
        ) from None
    given = {k: v for k, v in given.items() if v != "" or k in ("label",)}
    for name in ("category", "kind", "label", "low", "expected", "high"):
        given.setdefault(name, "")
    return LineData(valid_until=valid_until, **given)  # type: ignore[arg-type]


@transaction.atomic
def cost_lines_import(*, project: Project, rows: list[Row], actor: User | None) -> int:
    """Add every row as a cost line of the candidate it names (or of the baseline); refused
    as a whole, naming each bad row, if any row is wrong. How many lines were added."""
    by_slug = {c.slug.lower(): c for c in Candidate.objects.filter(project=project)}
    made, problems = [], []
    for row in rows:
        try:
            candidate = _candidate(project, row.values.get("candidate", ""), by_slug)
            fields = line_fields(_data(row.values))
        except ValidationError as exc:
            problems.append(
                _("Row %(n)s: %(problem)s") % {"n": row.number, "problem": " ".join(exc.messages)}
            )
            continue
        made.append(CostLine(project=project, candidate=candidate, **fields))  # type: ignore[arg-type]
    if problems:
        shown = problems[:ERRORS_SHOWN]
        if len(problems) > ERRORS_SHOWN:
            shown.append(
                _("… and %(n)s more rows with problems.") % {"n": len(problems) - ERRORS_SHOWN}
            )
        raise ValidationError(shown)
    scope_edit_guard(project.pk)
    for line in made:
        line.created_by = stored_user(actor)
    CostLine.objects.bulk_create(made)
    event_record(
        project=project,
        actor=actor,
        verb="costs.lines_imported",
        parts=[phrase_part("costs.lines", n=len(made))],
        after={"lines": len(made)},
    )
    return len(made)
