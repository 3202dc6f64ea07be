"""Who delivers what: each integration need and each responsibility area of a candidate by kind
of delivery (product capability, custom development, implementation service, third-party
component), with the effort and what that effort costs at the owning team's day rate, and the
integration needs nobody is named to deliver. The sheet freezes it (docs/costs.md)."""

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from evaluations.models import Project, TeamRole
from poc.models import Delivery, Responsibility, ResultCell
from reports.procurement.models import CostModel

UNCLASSIFIED = ""


def _label(kind: str) -> str:
    return str(Delivery(kind).label) if kind in Delivery.values else _("not classified")


def day_rates(project: Project) -> dict[str, Decimal]:
    row = CostModel.objects.filter(project=project).only("day_rates").first()
    return {team: Decimal(rate) for team, rate in (row.day_rates if row else {}).items()}


def delivery_split(
    needs: Iterable[ResultCell],
    responsibilities: Iterable[Responsibility],
    rates: dict[str, Decimal],
) -> dict[str, Any]:
    """One candidate's split, every figure as text (the snapshot's form)."""
    kinds = [*Delivery.values, UNCLASSIFIED]
    items = dict.fromkeys(kinds, 0)
    days = dict.fromkeys(kinds, Decimal(0))
    cost: dict[str, Decimal | None] = dict.fromkeys(kinds, Decimal(0))
    nobody = []
    teams = {value: str(label) for value, label in TeamRole.choices}  # once, not per need
    for cell in needs:
        result = cell.result
        kind = result.integration_delivery or UNCLASSIFIED
        effort = result.integration_effort_days or Decimal(0)
        items[kind] += 1
        days[kind] += effort
        rate = rates.get(result.integration_owner_team)
        so_far = cost[kind]
        cost[kind] = (
            None if so_far is None or (rate is None and effort) else so_far + effort * (rate or 0)
        )
        if not result.integration_delivered_by:
            nobody.append(
                {
                    "action": cell.action.key,
                    "what": result.integration_what,
                    "owner_team": teams.get(result.integration_owner_team, ""),
                }
            )
    for area in responsibilities:
        items[area.delivery or UNCLASSIFIED] += 1
    return {
        "rows": [
            {
                "kind": kind,
                "label": _label(kind),
                "items": items[kind],
                "days": str(days[kind]),
                "cost": _cents(cost[kind]),
            }
            for kind in kinds
            if items[kind]
        ],
        "nobody": nobody,
    }


def _cents(value: Decimal | None) -> str | None:
    return None if value is None else str(value.quantize(Decimal("0.01")))
