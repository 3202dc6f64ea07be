"""The costs as a sheet freezes them: every figure to the cent as text, so the frozen record
reads the same wherever it is opened; the comparisons (baseline, break-even, tornado, the share
of draws in which each candidate is cheapest) frozen with them. Each line as it was entered and
the model's inputs the chosen candidates' figures rest on are frozen too, so that a revision's
changes name the input or line that moved, and an input no chosen figure uses (another team's
day rate, a currency nobody quotes in) leaves the revision as it is."""

from decimal import Decimal
from functools import partial
from typing import Any

from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project, TeamRole
from reports.procurement import analysis, charts
from reports.procurement.costs import Range
from reports.procurement.models import CostLine, CostModel, LineKind
from reports.procurement.selectors.costs import CandidateCost, cost_overview
from reports.procurement.templatetags.procurement import compact_money

CENT = Decimal("0.01")
SWINGS_FROZEN = 5
SERIES_SHOWN = 7  # lines in the cumulative chart: more do not read


def cents(value: Decimal) -> str:
    return str(value.quantize(CENT))


def spread(found: Range | None) -> list[str] | None:
    return None if found is None else [cents(found.low), cents(found.expected), cents(found.high)]


def _plain(value: Decimal) -> str:
    return f"{value.normalize():f}"


def _line(row: CostLine) -> dict[str, str]:
    """One line as entered, in words: what it is, how it runs, its figures and its basis."""
    how = [row.get_kind_display(), row.unit_label, row.team_label]
    if row.discount_percent:
        how.append(f"−{_plain(row.discount_percent)} %")
    years = (
        _("year %(year)s") % {"year": row.first_year}
        if row.kind in (LineKind.ONE_OFF, LineKind.DAYS)
        else _("years %(first)s–%(last)s") % {"first": row.first_year, "last": row.last_year or "…"}
    )
    return {
        "label": row.label,
        "category": row.get_category_display(),
        "how": " · ".join(part for part in (*how, years) if part),
        "figures": " · ".join(_plain(v) for v in (row.low, row.expected, row.high))
        + (f" {row.currency}" if row.currency else ""),
        "basis": " · ".join(
            part
            for part in (
                row.get_basis_display(),
                row.reference,
                row.valid_until.isoformat() if row.valid_until else "",
            )
            if part
        ),
    }


# The fleet's counts a pricing unit reads (GPUs, demand and growth are always read).
UNIT_COUNTS = {
    "per_node": ("nodes",),
    "per_node_hour": ("nodes",),
    "per_core_pair": ("nodes", "cores_per_node"),
    "per_socket_pair": ("nodes", "sockets_per_node"),
    "per_named_user": ("named_users",),
}


def _inputs(model: CostModel, overview_lines: list[CostLine], teams: set[str]) -> list[list[str]]:
    """The model's inputs that the chosen candidates' and the baseline's figures rest on, as
    [label, value] pairs in a fixed order."""

    def field(name: str) -> list[str]:
        value = getattr(model, name)
        label = str(getattr(CostModel._meta.get_field(name), "verbose_name", name))
        return [label[:1].upper() + label[1:], "—" if value is None else _plain(Decimal(value))]

    counts = {"gpus", "gpu_hours_per_year", "growth_percent"}
    for line in overview_lines:
        counts.update(UNIT_COUNTS.get(line.unit, ()))
    names: list[str] = [
        n for n in ("gpus", "nodes", "cores_per_node", "sockets_per_node") if n in counts
    ]
    names += [n for n in ("named_users", "gpu_hours_per_year", "growth_percent") if n in counts]
    if any(line.kind == LineKind.FTE for line in overview_lines):
        names.append("fte_cost")
    if model.capacity:
        names += ["gpu_price", "depreciation_years"] if model.capacity == "owned" else []
        names += ["gpu_hour_price"] if model.capacity == "cloud" else []
    if model.baseline_label or any(line.candidate_id is None for line in overview_lines):
        names.append("baseline_utilisation_percent")
    found = [field(name) for name in names]
    for team in sorted(teams):
        rate = model.day_rates.get(team)
        who = str(TeamRole(team).label) if team in TeamRole.values else team or "—"
        found.append([_("Day rate: %(team)s") % {"team": who}, rate or "—"])
    for code in sorted({line.currency for line in overview_lines} - {"", model.currency}):
        given = model.exchange_rates.get(code)
        found.append(
            [
                _("Exchange rate: %(code)s") % {"code": code},
                " · ".join(
                    str(part)
                    for part in (given["rate"], given.get("date"), given.get("source"))
                    if part
                )
                if given
                else "—",
            ]
        )
    return found


def _figures(c: CandidateCost) -> dict[str, Any]:
    return {
        "lines": [_line(row) for row in c.lines],
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
    everyone = [*overview.candidates, *([baseline] if baseline else [])]
    teams = {line.team for c in everyone for line in c.lines if line.kind == LineKind.DAYS}
    teams |= {team for c in everyone for team in c.effort}
    return {
        "currency": model.currency,
        "inputs": _inputs(model, [line for c in everyone for line in c.lines], teams),
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
