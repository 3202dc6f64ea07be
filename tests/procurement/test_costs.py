"""The cost model's arithmetic (reports/procurement/costs.py): docs/costs.md's worked example,
recomputed figure by figure, and the properties every formula keeps."""

from decimal import Decimal as D

from hypothesis import given
from hypothesis import strategies as st

from reports.procurement.costs import (
    Fleet,
    Line,
    Model,
    Range,
    candidate_costs,
    gpu_years,
    npv,
    per_gpu_year,
)

CENT = D("0.01")
FLEET = D(64), D(8)
EXAMPLE = Model(
    currency="USD",
    horizon=3,
    fleet=Fleet(
        gpus=D(64), nodes=D(8), cores_per_node=D(64), sockets_per_node=D(2), growth_percent=D(10)
    ),
    rates={"EUR": D("1.10")},
    day_rates={"platform": D(800)},
    fte_cost=D(150000),
    discount_rate_percent=D(5),
)
LINES = [
    Line("licence", "per_unit", Range(D(4000), D(4500), D(5000)), "USD", unit="per_gpu",
         discount_percent=D(20)),
    Line("support", "per_year", Range(D(18000), D(20000), D(25000)), "EUR"),
    Line("implementation", "days", Range(D(10), D(12), D(20)), team="platform"),
    Line("operations", "fte", Range(D("0.25"), D("0.5"), D(1))),
]  # fmt: skip


def test_the_worked_example_of_docs_costs_md() -> None:
    costs = candidate_costs(LINES, EXAMPLE)
    assert costs.complete
    expected = [y.expected for y in costs.per_year]
    assert expected == [D(337000), D(350440), D(375784)]
    assert costs.by_category["licence"][1].expected == D(253440)
    assert costs.by_category["support"][2].expected == D(22000)
    assert costs.by_category["implementation"][0].expected == D(9600)
    assert costs.by_category["implementation"][1] == Range(D(0), D(0), D(0))
    assert costs.total == Range(D(857788), D(1063224), D(1395860))
    assert costs.list_total.expected == D(1253880)
    assert npv(costs, D(5)).expected.quantize(CENT) == D("1011599.55")
    assert gpu_years(EXAMPLE.fleet, 3) == D("211.84")
    per = per_gpu_year(costs, EXAMPLE.fleet)
    assert per is not None and per.expected.quantize(CENT) == D("5019.00")
    # The document states these figures: keep it true.
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "costs.md").read_text()
    for figure in ("1,063,224", "1,253,880", "1,011,599.55", "5,019.00", "857,788", "1,395,860"):
        assert figure in doc, figure


def test_a_missing_rate_makes_the_total_incomplete_never_zero() -> None:
    lines = [*LINES, Line("support", "per_year", Range(D(1), D(1), D(1)), "GBP")]
    model = Model(**{**EXAMPLE.__dict__, "day_rates": {}})
    costs = candidate_costs(lines, model)
    assert costs.missing == ["no day rate for platform", "no exchange rate for GBP"]
    assert not costs.complete
    # What can be counted still is.
    assert costs.total.expected == D(1063224) - D(9600)


amounts = st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False)
ranges = st.tuples(amounts, amounts, amounts).map(lambda t: Range(*sorted(t)))
lines = st.builds(
    Line,
    category=st.sampled_from(["licence", "support", "operations", "exit"]),
    kind=st.sampled_from(["per_unit", "per_year", "one_off"]),
    amount=ranges,
    currency=st.sampled_from(["USD", "EUR"]),
    unit=st.sampled_from(["per_gpu", "per_node", "per_core_pair", "flat_per_year"]),
    discount_percent=st.decimals(min_value=0, max_value=100, places=1),
    year=st.integers(1, 5),
)
fleets = st.builds(
    Fleet,
    gpus=st.integers(1, 5000).map(D),
    nodes=st.integers(1, 600).map(D),
    cores_per_node=st.integers(0, 256).map(D),
    growth_percent=st.decimals(min_value=0, max_value=100, places=1),
)


def _model(fleet: Fleet, horizon: int = 5) -> Model:
    return Model(currency="USD", horizon=horizon, fleet=fleet, rates={"EUR": D("1.1")})


@given(st.lists(lines, max_size=8), fleets)
def test_the_total_is_the_sum_of_its_lines_and_its_years(given_lines, fleet) -> None:
    model = _model(fleet)
    whole = candidate_costs(given_lines, model)
    apart = [candidate_costs([line], model).total for line in given_lines]
    assert whole.total == sum(apart, Range(D(0), D(0), D(0)))
    assert whole.total == sum(whole.per_year, Range(D(0), D(0), D(0)))
    assert whole.cumulative()[-1] == whole.total
    assert whole.total.low <= whole.total.expected <= whole.total.high


@given(st.lists(lines, max_size=8), fleets)
def test_npv_at_zero_is_the_total_and_discounting_never_adds(given_lines, fleet) -> None:
    costs = candidate_costs(given_lines, _model(fleet))
    assert npv(costs, D(0)) == costs.total == npv(costs, None)
    assert npv(costs, D(7)).expected <= costs.total.expected


@given(st.lists(lines, min_size=1, max_size=8), fleets, st.integers(1, 100))
def test_cost_grows_with_the_fleet(given_lines, fleet, more) -> None:
    bigger = Fleet(**{**fleet.__dict__, "gpus": fleet.gpus + more, "nodes": fleet.nodes + more})
    small, large = (
        candidate_costs(given_lines, _model(fleet)),
        candidate_costs(given_lines, _model(bigger)),
    )
    assert large.total.expected >= small.total.expected
    assert large.total.high >= small.total.high


def test_a_line_runs_only_in_its_years() -> None:
    model = _model(Fleet(gpus=D(10), nodes=D(2)), horizon=4)
    late = Line("exit", "one_off", Range(D(5), D(5), D(5)), "USD", year=4)
    window = Line("support", "per_year", Range(D(1), D(1), D(1)), "USD", year=2, until=3)
    beyond = Line("exit", "one_off", Range(D(9), D(9), D(9)), "USD", year=7)
    costs = candidate_costs([late, window, beyond], model)
    assert [y.expected for y in costs.per_year] == [D(0), D(1), D(1), D(5)]


def test_figures_longer_than_the_default_precision_still_add_up() -> None:
    """A grown fleet, a discount and an exchange rate give figures of more digits than
    Decimal's default 28: the total of two lines is still the sum of each line's total."""
    lines = [
        Line(
            "licence",
            "per_unit",
            Range(D("84700.54"), D("342347.85"), D("763972.5")),
            "EUR",
            unit="per_gpu",
            discount_percent=D("77.9"),
        ),
        Line(
            "support",
            "per_unit",
            Range(D("603296.69"), D("633836.83"), D("874553.28")),
            "USD",
            unit="per_gpu",
            discount_percent=D("9.6"),
        ),
    ]
    model = _model(Fleet(gpus=D(3997), nodes=D(1), growth_percent=D("2.9")))
    whole = candidate_costs(lines, model).total
    first, second = (candidate_costs([line], model).total for line in lines)
    assert max(len(figure.as_tuple().digits) for figure in vars(whole).values()) > 28
    assert whole == first + second == second + first
    assert npv(candidate_costs(lines, model), D(0)) == whole
