"""The procurement API: terms and costs read with `read`, terms written with `costs:write` (or by
procurement, business and project admins in a session), bad input answered 400 with what is
wrong and nothing saved."""

import pytest
from rest_framework.test import APIClient

from evaluations.services import membership_set
from reports.procurement.models import Basis, TermEntry
from reports.procurement.services import (
    LineData,
    ModelData,
    TermChange,
    cost_line_add,
    cost_model_save,
    terms_record,
)
from tests.factories import UserFactory
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db
TERMS = "/api/v1/projects/alpha/candidates/volcano/terms/"


def test_a_pipeline_records_terms_and_reads_them_back(personas) -> None:
    client, _token, _raw = token_client(personas["alpha"], scopes=("read", "costs:write"))
    answer = client.post(
        TERMS,
        {
            "reason": "from the vendor's datasheet",
            "terms": [
                {
                    "key": "licence_spdx",
                    "value": "apache-2.0",
                    "basis": "list_price",
                    "where_read": "LICENSE",
                },
                {
                    "key": "list_price",
                    "value": {"amount": "10", "currency": "eur"},
                    "basis": "estimate",
                },
            ],
        },
        format="json",
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["recorded"] == 2
    read = client.get("/api/v1/projects/alpha/terms/").json()
    (volcano,) = read
    terms = {t["key"]: t for t in volcano["terms"]}
    assert (
        terms["licence_spdx"]["value"] == "Apache-2.0" and not terms["licence_spdx"]["to_confirm"]
    )
    assert terms["list_price"]["value"] == {"amount": "10.00", "currency": "EUR"}
    assert terms["support_hours"]["to_confirm"] and volcano["still_to_confirm"] > 0
    assert TermEntry.objects.get(key="licence_spdx").reason == "from the vendor's datasheet"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"terms": [{"key": "licence_spdx", "value": "Apache2"}]}, "nearest known are Apache-2.0"),
        ({"terms": [{"key": "nope", "value": "x"}]}, "is not a valid choice"),
        ({"terms": []}, "This list may not be empty"),
        (
            {"terms": [{"key": "discount_percent", "value": "200", "basis": "estimate"}]},
            "between 0 and 100",
        ),
        (
            {"terms": [{"key": "list_price", "value": [[[[1]]]], "basis": "estimate"}]},
            "takes an amount and a currency",
        ),
        (
            {"terms": [{"key": "support_tier", "value": "x", "basis": "quote"}]},
            "needs its reference",
        ),
        ("not json at all", ""),
    ],
)
def test_bad_input_is_a_400_and_saves_nothing(personas, body, says) -> None:
    client, _token, _raw = token_client(personas["alpha"], scopes=("read", "costs:write"))
    answer = client.post(TERMS, body, format="json")
    assert answer.status_code == 400
    assert says in answer.content.decode()
    assert not TermEntry.objects.exists()


def test_who_may_write_terms(personas) -> None:
    body = {"terms": [{"key": "support_tier", "value": "Gold"}]}
    reader, _t, _r = token_client(personas["alpha"], scopes=("read",))
    assert reader.post(TERMS, body, format="json").status_code == 403
    ops = APIClient()
    ops.force_authenticate(personas["bob"])  # operations writes results, not terms
    assert ops.post(TERMS, body, format="json").status_code == 403
    outsider = APIClient()
    outsider.force_authenticate(personas["charlie"])
    assert outsider.post(TERMS, body, format="json").status_code == 404
    buyer = UserFactory(username="erin")
    membership_set(project=personas["alpha"], user=buyer, role="procurement", actor=None)
    session = APIClient()
    session.force_authenticate(buyer)
    assert session.post(TERMS, body, format="json").status_code == 200
    assert TermEntry.objects.get().recorded_by == buyer


def test_costs_read_the_model(personas) -> None:
    client, _token, _raw = token_client(personas["alpha"], scopes=("read",))
    assert client.get("/api/v1/projects/alpha/costs/").json() == {
        "currency": None,
        "horizon_years": None,
        "discount_rate_percent": None,
        "capacity": None,
        "cheapest": None,
        "baseline": None,
        "candidates": [],
    }
    cost_model_save(project=personas["alpha"], data=ModelData(horizon_years=2), actor=None)
    cost_line_add(
        candidate=personas["volcano"],
        data=LineData("support", "per_year", "Support", 10, 20, 30, currency="GBP"),
        actor=None,
    )
    (volcano,) = client.get("/api/v1/projects/alpha/costs/").json()["candidates"]
    assert volcano["total"] == {"low": "0.00", "expected": "0.00", "high": "0.00"}
    assert volcano["incomplete"] == ["no exchange rate for GBP"]
    assert volcano["against_baseline"] is None and volcano["per_used_gpu_hour"] is None


def test_costs_read_capacity_and_the_baseline(personas) -> None:
    """The continued example of docs/costs.md over the API: volcano is candidate B."""
    client, _token, _raw = token_client(personas["alpha"], scopes=("read",))
    cost_model_save(
        project=personas["alpha"],
        data=ModelData(
            horizon_years=3, gpus=64, nodes=8, growth_percent=10, gpu_hours_per_year=336384,
            fte_cost=150000, capacity="owned", gpu_price=32000, depreciation_years=4,
            baseline_label="Today", baseline_utilisation_percent=35,
        ),
        actor=None,
    )  # fmt: skip
    cost_line_add(
        candidate=None,
        project=personas["alpha"],
        data=LineData("operations", "fte", "Hand-run operations", 2, 3, 4),
        actor=None,
    )
    for data in (
        LineData("support", "per_year", "Support", 40000, 60000, 90000, currency="USD"),
        LineData("operations", "fte", "Operations", 1, 2, 3),
    ):
        cost_line_add(candidate=personas["volcano"], data=data, actor=None)
    terms_record(
        candidate=personas["volcano"],
        changes=[TermChange("utilisation_percent", "75", Basis.ESTIMATE)],
        actor=None,
    )
    found = client.get("/api/v1/projects/alpha/costs/").json()
    assert found["capacity"] == "owned" and found["cheapest"] == "volcano"
    assert found["baseline"]["name"] == "Today"
    assert found["baseline"]["total"]["expected"] == "4255234.29"
    (volcano,) = found["candidates"]
    assert volcano["total"]["expected"] == "2435776.00"
    assert volcano["against_baseline"]["expected"] == "-1819458.29"
    assert volcano["per_used_gpu_hour"]["expected"] == "2.19"
    assert volcano["gpus_needed"] == ["51.20", "61.95"]
    assert volcano["utilisation_percent"] == "75.0000"
