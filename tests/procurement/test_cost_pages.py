"""The cost page and its forms: editors set the cost model and add lines, everyone reads the
totals, a bad input is named and nothing is half-saved, the PoC's integration effort costs its
team's day rate, and a line in a currency without a rate makes the total incomplete."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluations.models import ProjectEvent
from evaluations.services import membership_set
from poc import services as poc_services
from reports.procurement.models import CostLine, CostModel
from reports.procurement.services import LineData, ModelData, cost_line_add, cost_model_save
from tests.factories import UserFactory, make_actions

pytestmark = pytest.mark.django_db

MODEL_FORM = {
    "currency": "usd",
    "horizon_years": "3",
    "discount_rate_percent": "5",
    "gpus": "64",
    "nodes": "8",
    "cores_per_node": "64",
    "sockets_per_node": "2",
    "growth_percent": "10",
    "fte_cost": "150000",
    "day_rate_platform": "800",
    "exchange_rates": "EUR 1.10 2026-12-01 ECB reference rate",
}


@pytest.fixture
def buyer(personas):
    user = UserFactory(username="erin")
    membership_set(project=personas["alpha"], user=user, role="procurement", actor=None)
    return user


def _url(name: str, **kwargs: object) -> str:
    return reverse(f"procurement:{name}", kwargs={"slug": "alpha", **kwargs})


def test_procurement_sets_the_model_and_the_page_adds_it_up(personas, buyer, login) -> None:
    client = login(buyer)
    assert client.post(_url("cost_model_edit"), MODEL_FORM).status_code == 302
    model = CostModel.objects.get()
    assert (model.currency, model.horizon_years, model.exchange_rates["EUR"]["rate"]) == (
        "USD",
        3,
        "1.10",
    )
    line = {
        "category": "licence", "label": "Subscription", "kind": "per_unit", "unit": "per_gpu",
        "currency": "USD", "low": "4000", "expected": "4500", "high": "5000",
        "discount_percent": "20", "first_year": "1", "charge_category": "Purchase",
        "basis": "estimate",
    }  # fmt: skip
    added = client.post(_url("cost_line_add", candidate_slug="volcano"), line)
    assert added.status_code == 302 and added.url.endswith("#c-volcano")
    support = {
        **line, "label": "Support", "kind": "per_year", "unit": "", "currency": "EUR",
        "low": "18000", "expected": "20000", "high": "25000", "discount_percent": "",
    }  # fmt: skip
    assert client.post(_url("cost_line_add", candidate_slug="volcano"), support).status_code == 302
    page = client.get(_url("costs")).content.decode()
    # docs/costs.md's example without its implementation and operations lines.
    assert "$828,624" in page  # 762,624 subscription + 66,000 support
    assert "incomplete" not in page
    assert ProjectEvent.objects.filter(verb="costs.line_added").count() == 2


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("horizon_years", "0", "The horizon must be between 1 and 10, not 0"),
        ("horizon_years", "50", "The horizon must be between 1 and 10, not 50"),
        ("discount_rate_percent", "200", "The discount rate must be between 0 and 50, not 200"),
        ("currency", "XYZ", "XYZ is not an ISO 4217 currency code"),
        ("gpus", "-3", "GPUs must be between 0 and"),
        ("exchange_rates", "EUR 1.1 2999-01-01 ECB", "cannot have been read in the future"),
        (
            "exchange_rates",
            "EUR 1.1",
            "Line 1: give the currency, the rate, the date and the source",
        ),
        ("exchange_rates", "USD 1 2026-01-01 own", "USD is the project"),
        ("day_rate_ops", "lots", "Day rate of ops needs a number, not lots"),
        (
            "capacity",
            "owned",
            "Owned capacity needs the price of one GPU and the years it is depreciated over.",
        ),
        ("capacity", "cloud", "Cloud capacity needs the price of one GPU-hour."),
        ("capacity", "rented", "Select a valid choice"),
        ("depreciation_years", "0", "The depreciation must be between 1 and 15, not 0"),
        ("gpu_hour_price", "-2", "The price of one GPU-hour must be between 0 and"),
        (
            "baseline_utilisation_percent",
            "150",
            "The utilisation today must be between 1 and 100, not 150",
        ),
    ],
)
def test_a_bad_model_is_refused_naming_the_field(
    personas, buyer, login, field, value, says
) -> None:
    answer = login(buyer).post(_url("cost_model_edit"), {**MODEL_FORM, field: value})
    assert answer.status_code == 422
    assert says in answer.content.decode()
    assert not CostModel.objects.exists()


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"low": "5000", "expected": "4500"}, "The figures must run low ≤ expected ≤ high."),
        ({"expected": "-1"}, "Expected must be between 0 and"),
        ({"unit": ""}, "A line per pricing unit needs its unit."),
        ({"currency": "EURO"}, "Ensure this value has at most 3 characters"),
        (
            {"basis": "quote", "reference": "Q-1", "valid_until": "2020-01-01"},
            "the quote expired on 2020-01-01",
        ),
        ({"last_year": "0"}, "To year must be between 1 and 10, not 0"),
        ({"label": ""}, "This field is required"),
    ],
)
def test_a_bad_line_is_refused_and_nothing_is_added(personas, buyer, login, change, says) -> None:
    cost_model_save(project=personas["alpha"], data=ModelData(), actor=None)
    line = {
        "category": "licence", "label": "Subscription", "kind": "per_unit", "unit": "per_gpu",
        "currency": "USD", "low": "1", "expected": "2", "high": "3", "first_year": "1",
        "charge_category": "Purchase", "basis": "tbc",
    }  # fmt: skip
    answer = login(buyer).post(_url("cost_line_add", candidate_slug="volcano"), {**line, **change})
    assert answer.status_code == 422
    assert says in answer.content.decode()
    assert not CostLine.objects.exists()


def test_integration_effort_costs_its_team_and_a_missing_rate_is_said(personas, login) -> None:
    alpha, volcano = personas["alpha"], personas["volcano"]
    _, (action,) = make_actions(alpha, [("quota-hit", "resource_shortage")])
    poc_services.result_record(
        candidate=volcano,
        action=action,
        outcome="needs_integration",
        integration_what="Quota per team",
        integration_owner_team="ops",
        integration_effort_days=Decimal("4"),
        actor=None,
    )
    cost_model_save(
        project=alpha,
        data=ModelData(currency="USD", horizon_years=2, day_rates={"ops": "500"}),
        actor=None,
    )
    cost_line_add(
        candidate=volcano,
        data=LineData("support", "per_year", "Support", 100, 100, 100, currency="GBP"),
        actor=None,
    )
    page = login(personas["bob"]).get(_url("costs")).content.decode()
    assert "$2,000" in page  # 4 person-days of ops at 500
    assert "no exchange rate for GBP" in page and "incomplete" in page
    assert "PoC integration effort" in page and "person-days of Operations" in page


@pytest.mark.parametrize(("who", "status"), [("bob", 403), ("dave", 403), ("charlie", 404)])
def test_only_editors_change_costs(personas, login, who, status) -> None:
    client = login(personas[who])
    assert client.post(_url("cost_model_edit"), MODEL_FORM).status_code == status
    assert not CostModel.objects.exists()
    assert client.get(_url("costs")).status_code == (404 if who == "charlie" else 200)


def test_an_editor_removes_a_line_and_the_history_keeps_it(personas, buyer, login) -> None:
    cost_model_save(project=personas["alpha"], data=ModelData(), actor=None)
    line = cost_line_add(
        candidate=personas["volcano"],
        data=LineData("exit", "one_off", "Migration", 1, 2, 3, currency="USD"),
        actor=None,
    )
    client = login(buyer)
    assert client.get(_url("cost_line_remove", line_id=line.pk)).status_code == 405
    assert client.post(_url("cost_line_remove", line_id=line.pk)).status_code == 302
    assert not CostLine.objects.exists()
    assert ProjectEvent.objects.filter(
        verb="costs.line_removed", subject__contains="Migration"
    ).exists()


def test_chinese_readers_read_the_costs_in_chinese(personas, buyer, login) -> None:
    cost_model_save(project=personas["alpha"], data=ModelData(currency="CNY"), actor=None)
    cost_line_add(
        candidate=personas["volcano"],
        data=LineData("support", "per_year", "Support", 1000, 1000, 1000, currency="CNY"),
        actor=None,
    )
    client = login(buyer)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    page = client.get(_url("costs")).content.decode()
    assert "成本" in page and "净现值" in page
    assert "¥5,000" in page  # five years of 1,000


def test_a_quote_for_a_line_keeps_its_reference(personas) -> None:
    cost_model_save(project=personas["alpha"], data=ModelData(), actor=None)
    line = cost_line_add(
        candidate=personas["volcano"],
        data=LineData(
            "support", "per_year", "Support", 1, 2, 3, currency="USD", basis="quote",
            reference="Q-5", valid_until=timezone.localdate() + timedelta(days=5),
        ),
        actor=None,
    )  # fmt: skip
    assert (line.basis, line.reference) == ("quote", "Q-5")


def test_lines_name_their_unit_and_team_in_words(personas, buyer, login) -> None:
    cost_model_save(project=personas["alpha"], data=ModelData(), actor=None)
    for data in (
        LineData("licence", "per_unit", "Seats", 1, 1, 1, currency="USD", unit="per_core_pair"),
        LineData("implementation", "days", "Rollout", 1, 1, 1, team="platform"),
    ):
        cost_line_add(candidate=personas["volcano"], data=data, actor=None)
    page = login(buyer).get(_url("costs")).content.decode()
    assert "per core pair (2 cores or 4 vCPUs)" in page and "per_core_pair" not in page
    assert "· Platform" in page and "no day rate for Platform" in page


def test_many_candidates_open_one_at_a_time(personas, buyer, login) -> None:
    from reports.procurement.views.costs import DETAILS_INLINE
    from tests.factories import CandidateFactory

    alpha = personas["alpha"]
    keys = ["slurm", "runai", "openshift-ai", "k8s-gpu-operator", "kueue", "kuberay"]
    for key in keys[:DETAILS_INLINE]:
        CandidateFactory(project=alpha, solution_key=key)
    cost_model_save(project=alpha, data=ModelData(), actor=None)
    client = login(buyer)
    page = client.get(_url("costs")).content.decode()
    assert page.count('<section class="card" id="c-') == 0
    assert "?candidate=slurm#c-slurm" in page
    opened = client.get(_url("costs") + "?candidate=slurm").content.decode()
    assert opened.count('<section class="card" id="c-') == 1 and 'id="c-slurm"' in opened
