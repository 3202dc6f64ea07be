"""Capacity, the baseline and the comparisons (reports/procurement/costs.py and analysis.py):
docs/costs.md's worked example continued, recomputed figure by figure, and the properties the
comparisons keep."""

from decimal import Decimal as D
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reports.procurement.analysis import (
    break_even,
    cheapest_shares,
    tornado,
    versus,
)
from reports.procurement.costs import (
    CapacityPrice,
    Costs,
    Fleet,
    Line,
    Model,
    Range,
    candidate_costs,
    capacity_line,
    gpu_hours_demanded,
    gpus_needed,
    per_used_gpu_hour,
)
from tests.procurement.test_costs import EXAMPLE, LINES

CENT = D("0.01")
FLEET = Fleet(**{**EXAMPLE.fleet.__dict__, "gpu_hours": D(336384)})
MODEL = Model(**{**EXAMPLE.__dict__, "fleet": FLEET})
OWNED = CapacityPrice("owned", D(32000), 4)


def _capacity(utilisation: int) -> Line:
    found = capacity_line(OWNED, D(utilisation), "x")
    assert isinstance(found, Line)
    return found


def _example() -> tuple[Costs, Costs, Costs]:
    a = candidate_costs([*LINES, _capacity(60)], MODEL)
    b = candidate_costs(
        [
            Line("support", "per_year", Range(D(40000), D(60000), D(90000)), "USD"),
            Line("operations", "fte", Range(D(1), D(2), D(3))),
            _capacity(75),
        ],
        MODEL,
    )
    baseline = candidate_costs(
        [Line("operations", "fte", Range(D(2), D(3), D(4))), _capacity(35)], MODEL
    )
    return a, b, baseline


def _cents(value: D) -> D:
    return value.quantize(CENT)


def test_the_worked_example_continued_in_docs_costs_md() -> None:
    a, b, baseline = _example()
    assert a.complete and b.complete and baseline.complete
    assert gpus_needed(FLEET, D(60), 1) == D(64)
    assert gpus_needed(FLEET, D(60), 3) == D("77.44")
    assert gpus_needed(FLEET, D(75), 1) == D("51.2")
    assert _cents(gpus_needed(FLEET, D(35), 1)) == D("109.71")
    assert gpu_hours_demanded(FLEET, 3) == D("1113431.04")
    assert [_cents(y.expected) for y in a.by_category["capacity"]] == [
        D(512000),
        D(563200),
        D(619520),
    ]
    assert _cents(a.total.expected) == D(2757944)
    assert _cents(b.total.expected) == D(2435776)
    assert _cents(baseline.total.expected) == D("4255234.29")
    per_hour = per_used_gpu_hour(a, FLEET)
    assert per_hour is not None and _cents(per_hour.expected) == D("2.48")
    assert _cents(versus(b.total, baseline.total).expected) == D("-1819458.29")
    assert _cents(versus(a.total, baseline.total).expected) == D("-1497290.29")
    assert _cents(a.scaling.expected) == D(2457344)
    meet = break_even(a, b, FLEET.gpus)
    assert meet is not None and meet.below == 0  # A, with the smaller fixed part
    assert meet.scale.quantize(D("0.0001")) == D("0.7075")
    assert meet.gpus is not None and _cents(meet.gpus) == D("45.28")
    totals = [a.total.expected, b.total.expected]
    widest_a = tornado(totals, 0, a)[0]
    assert widest_a.line.category == "operations" and not widest_a.changes_ranking
    assert (_cents(widest_a.at_low), _cents(widest_a.at_high)) == (D(2645444), D(2982944))
    widest_b, support_b = tornado(totals, 1, b)
    assert widest_b.changes_ranking and _cents(widest_b.at_high) == D(2885776)
    assert not support_b.changes_ranking
    assert (_cents(support_b.at_low), _cents(support_b.at_high)) == (D(2375776), D(2525776))
    doc = (Path(__file__).resolve().parents[2] / "docs" / "costs.md").read_text()
    for figure in (
        "2,757,944", "2,435,776", "4,255,234.29", "1,819,458.29", "1,497,290.29", "2.48",
        "45.28", "0.7075", "2,885,776", "2,645,444", "2,982,944", "1,113,431.04", "2,457,344",
    ):  # fmt: skip
        assert figure in doc, figure


def test_capacity_says_what_it_misses() -> None:
    assert capacity_line(OWNED, None, "Volcano") == "no utilisation for Volcano"
    assert capacity_line(CapacityPrice("owned", None, 4), D(50), "x") == (
        "no GPU price or depreciation for owned capacity"
    )
    assert capacity_line(CapacityPrice("cloud"), D(50), "x") == (
        "no GPU-hour price for cloud capacity"
    )
    cloud = capacity_line(CapacityPrice("cloud", gpu_hour_price=D(3)), D(50), "x")
    assert isinstance(cloud, Line)
    costs = candidate_costs([cloud], MODEL)
    # 336,384 GPU-hours at 3 USD, half of every provisioned hour idle: 6 USD an hour used.
    assert costs.by_category["capacity"][0].expected == D(336384) * 6


def test_the_difference_to_the_baseline_spans_both_ranges() -> None:
    found = versus(Range(D(10), D(20), D(40)), Range(D(5), D(8), D(9)))
    assert found == Range(D(1), D(12), D(35))


def test_two_candidates_that_grow_alike_never_meet() -> None:
    one = candidate_costs([Line("support", "per_year", Range(D(1), D(1), D(1)))], MODEL)
    two = candidate_costs([Line("support", "per_year", Range(D(2), D(2), D(2)))], MODEL)
    assert break_even(one, two, FLEET.gpus) is None
    # One cheaper at every size: cheaper fixed part and slower growth.
    cheap = candidate_costs([_capacity(90)], MODEL)
    dear = candidate_costs([_capacity(30), one.lines[0][0]], MODEL)
    assert break_even(cheap, dear, FLEET.gpus) is None


amount = st.integers(min_value=0, max_value=10**6).map(D)


@st.composite
def candidates(draw: st.DrawFn) -> list[Costs]:
    out = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        lines = []
        for _ in range(draw(st.integers(min_value=1, max_value=4))):
            low, mid, high = sorted(draw(st.tuples(amount, amount, amount)))
            lines.append(Line("support", "per_year", Range(low, mid, high)))
        out.append(candidate_costs(lines, MODEL))
    return out


@settings(max_examples=40, deadline=None)
@given(candidates())
def test_the_shares_are_a_reproducible_distribution(given_candidates: list[Costs]) -> None:
    shares = cheapest_shares(given_candidates, samples=200)
    assert abs(sum(shares) - 1) < 1e-9 and all(0 <= s <= 1 for s in shares)
    assert shares == cheapest_shares(given_candidates, samples=200)
    # A candidate whose highest total is below every other's lowest is always the cheapest.
    for index, c in enumerate(given_candidates):
        others = [o for i, o in enumerate(given_candidates) if i != index]
        if others and all(c.total.high < o.total.low for o in others):
            assert shares[index] == 1


@settings(max_examples=40, deadline=None)
@given(candidates())
def test_a_tornado_bar_never_leaves_the_range_of_the_total(given_candidates: list[Costs]) -> None:
    totals = [c.total.expected for c in given_candidates]
    for index, c in enumerate(given_candidates):
        swings = tornado(totals, index, c)
        assert [s.width for s in swings] == sorted((s.width for s in swings), reverse=True)
        for s in swings:
            assert c.total.low <= s.at_low <= totals[index] <= s.at_high <= c.total.high


def test_break_even_is_where_the_totals_meet() -> None:
    a, b, _baseline = _example()
    meet = break_even(a, b, FLEET.gpus)
    assert meet is not None
    scaled = Fleet(**{**FLEET.__dict__, "gpus": FLEET.gpus * meet.scale})
    scaled = Fleet(
        **{
            **scaled.__dict__,
            "nodes": FLEET.nodes * meet.scale,
            "gpu_hours": FLEET.gpu_hours * meet.scale,
        }
    )
    model = Model(**{**MODEL.__dict__, "fleet": scaled})
    at_a = candidate_costs([*LINES, _capacity(60)], model).total.expected
    at_b = candidate_costs(
        [
            Line("support", "per_year", Range(D(40000), D(60000), D(90000)), "USD"),
            Line("operations", "fte", Range(D(1), D(2), D(3))),
            _capacity(75),
        ],
        model,
    ).total.expected
    assert abs(at_a - at_b) < D("0.01")


def test_a_utilisation_range_gives_capacity_a_range_that_moves_the_total() -> None:
    line = capacity_line(OWNED, D(60), "x", (D(50), D(75)))
    assert isinstance(line, Line)
    at = {
        u: capacity_line(OWNED, D(u), "x").amount.expected  # type: ignore[union-attr]
        for u in (50, 60, 75)
    }
    # The high utilisation needs the fewest GPUs: it is the low end of the cost.
    assert line.amount == Range(at[75], at[60], at[50])
    # A bound on the wrong side of the expected figure, or none, is the expected figure.
    assert capacity_line(OWNED, D(60), "x", (D(70), None)).amount == Range(  # type: ignore[union-attr]
        at[60], at[60], at[60]
    )
    costs = candidate_costs([line], MODEL)
    (swing,) = tornado([costs.total.expected, costs.total.expected * 2], 0, costs)
    assert swing.line.category == "capacity"
    assert swing.at_low < costs.total.expected < swing.at_high
