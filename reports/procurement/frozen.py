"""The costs as a sheet freezes them: every figure to the cent as text, so the frozen record
reads the same wherever it is opened; the comparisons (baseline, break-even, tornado, the share
of draws in which each candidate is cheapest) frozen with them."""

from decimal import Decimal
from functools import partial
from typing import Any

from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project
from reports.procurement import analysis, charts
from reports.procurement.costs import Range
from reports.procurement.selectors.costs import CandidateCost, cost_overview
from reports.procurement.templatetags.procurement import compact_money

CENT = Decimal("0.01")
SWINGS_FROZEN = 5
SERIES_SHOWN = 7  # lines in the cumulative chart: more do not read


def cents(value: Decimal) -> str:
    return str(value.quantize(CENT))


def spread(found: Range | None) -> list[str] | None:
    return None if found is None else [cents(found.low), cents(found.expected), cents(found.high)]


def _figures(c: CandidateCost) -> dict[str, Any]:
    return {
        "total": spread(c.costs.total),
        "list_total": cents(c.costs.list_total.expected),
        "npv": spread(c.npv),
        "per_gpu_year": spread(c.per_gpu_year),
        "per_used_gpu_hour": spread(c.per_used_gpu_hour),
        "per_year": [cents(y.expected) for y in c.costs.per_year],
        "cumulative": [spread(y) for y in c.costs.cumulative()],
        "categories": [
            {"key": key, "label": label, "per_year": [cents(y.expected) for y in per_year]}
            for key, label, per_year in c.category_keyed_rows
        ],
        "gpus_needed": [str(n.quantize(CENT)) for n in c.gpus_needed] if c.gpus_needed else None,
        "utilisation": None if c.utilisation is None else f"{c.utilisation.normalize():f}",
        "missing": list(c.costs.missing),
        "unconfirmed": [c.costs.unconfirmed[0], cents(c.costs.unconfirmed[1])],
    }


def frozen_costs(project: Project, chosen: list[Candidate]) -> dict[str, Any] | None:
    """Each chosen candidate's cost over the horizon and how they compare; None while the
    project has no cost model."""
    overview = cost_overview(project, chosen)
    model = overview.model
    if model is None:
        return None
    shares = analysis.cheapest_shares([c.costs for c in overview.candidates])
    baseline = overview.baseline
    return {
        "currency": model.currency,
        "horizon": model.horizon_years,
        "discount_rate": None
        if model.discount_rate_percent is None
        else str(model.discount_rate_percent.normalize()),
        "capacity": model.capacity,
        "leader": overview.leader.slug if overview.leader else None,
        "samples": analysis.SAMPLES,
        "baseline": None
        if baseline is None
        else {"label": model.baseline_label, **_figures(baseline)},
        "candidates": [
            {
                "slug": c.slug,
                "candidate": c.name,
                **_figures(c),
                "versus_baseline": spread(c.versus_baseline),
                "break_even": None
                if c.break_even is None
                else {
                    "gpus": None if c.break_even.gpus is None else cents(c.break_even.gpus),
                    "scale": str(c.break_even.scale.quantize(CENT)),
                    "cheaper_below": c.slug
                    if c.break_even.below == 0
                    else overview.leader.slug  # type: ignore[union-attr]
                    if overview.leader
                    else None,
                },
                "swings": [
                    {
                        "input": s.line.label,
                        "low": cents(s.at_low),
                        "high": cents(s.at_high),
                        "changes_ranking": s.changes_ranking,
                    }
                    for s in (c.swings or [])[:SWINGS_FROZEN]
                ],
                "cheapest_share": round(share, 3),
            }
            for c, share in zip(overview.candidates, shares, strict=True)
        ],
    }


def _points(figures: dict[str, Any]) -> list[tuple[Decimal, Decimal, Decimal]]:
    return [(Decimal(p[0]), Decimal(p[1]), Decimal(p[2])) for p in figures.get("cumulative") or []]


def frozen_charts(costs: dict[str, Any] | None) -> dict[str, Any]:
    """The cost charts drawn from the frozen costs (the same as the page's): the cumulative
    cost of the cheapest few against the baseline, and per candidate the cost per year by
    category. Costs frozen before charts existed draw none."""
    if not costs or not all("cumulative" in c for c in costs["candidates"]):
        return {}
    write = partial(compact_money, currency=costs["currency"])
    ranked = sorted(costs["candidates"], key=lambda c: Decimal(c["total"][1]))
    baseline = costs.get("baseline")
    return {
        "cumulative": charts.cumulative(
            [(c["candidate"], _points(c)) for c in ranked[:SERIES_SHOWN]],
            _("Cumulative cost over the years, expected with its low-high band"),
            write,
            (baseline["label"] or _("baseline"), _points(baseline)) if baseline else None,
        )
        if ranked
        else None,
        "years": {
            c["slug"]: charts.stacked_years(
                [
                    (r["key"], r["label"], [Decimal(v) for v in r["per_year"]])
                    for r in c["categories"]
                ],
                _("Cost per year by category (expected)"),
                _("Year %(year)s"),
                write,
            )
            for c in costs["candidates"]
            if c["categories"]
        },
    }
