"""The cost page's charts (reports/procurement/charts.py) from the cost overview: the
cumulative cost of the cheapest candidates against the baseline, and per candidate its cost
per year by category and its tornado."""

from decimal import Decimal
from functools import partial

from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from reports.procurement import charts
from reports.procurement.costs import Costs
from reports.procurement.frozen import SERIES_SHOWN
from reports.procurement.models import CostCategory
from reports.procurement.selectors.costs import CandidateCost, CostOverview
from reports.procurement.templatetags.procurement import compact_money


def _points(costs: Costs) -> list[tuple[Decimal, Decimal, Decimal]]:
    return [(r.low, r.expected, r.high) for r in costs.cumulative()]


def cumulative_chart(overview: CostOverview) -> SafeString | None:
    assert overview.model is not None
    if not overview.candidates:
        return None
    write = partial(compact_money, currency=overview.model.currency)
    cheapest = sorted(overview.candidates, key=lambda c: c.costs.total.expected)[:SERIES_SHOWN]
    baseline = overview.baseline
    return charts.cumulative(
        [(c.name, _points(c.costs)) for c in cheapest],
        _("Cumulative cost over the years, expected with its low-high band"),
        write,
        (overview.model.baseline_label or _("baseline"), _points(baseline.costs))
        if baseline
        else None,
    )


def candidate_charts(c: CandidateCost, currency: str) -> dict[str, SafeString | None]:
    write = partial(compact_money, currency=currency)
    found = c.costs.by_category
    rows = [
        (key, str(label), [y.expected for y in found[key]])
        for key, label in CostCategory.choices
        if key in found
    ]
    swings = [(s.line.label, s.at_low, s.at_high, s.changes_ranking) for s in (c.swings or [])]
    return {
        "years": charts.stacked_years(
            rows, _("Cost per year by category (expected)"), _("Year %(year)s"), write
        )
        if rows
        else None,
        "tornado": charts.tornado_chart(
            c.costs.total.expected,
            swings,
            _("What moves the total most: each input from its low to its high figure"),
            write,
        )
        if swings
        else None,
    }
