"""The cost model as files: every line per year for people (the reader's language, CSV and
XLSX) and with FinOps FOCUS columns (English, CSV), agreeing with docs/costs.md's example."""

import csv
import io
from typing import Any

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from reports.procurement.services import LineData, ModelData, cost_line_add, cost_model_save

pytestmark = pytest.mark.django_db


def _url(table: str, fmt: str) -> str:
    return reverse("reports:export", kwargs={"slug": "alpha", "table": table, "fmt": fmt})


@pytest.fixture
def costed(evaluation: dict[str, Any]) -> dict[str, Any]:
    """docs/costs.md's example: 64 GPUs growing 10 % a year, a subscription at 4,500 less 20 %
    and support in EUR; the baseline costs one FTE."""
    cost_model_save(
        project=evaluation["alpha"],
        data=ModelData(
            currency="USD", horizon_years=3, gpus=64, nodes=8, growth_percent=10,
            fte_cost=150000, baseline_label="today", day_rates={"platform": 800},
            exchange_rates={"EUR": {"rate": "1.10", "date": "2026-12-01", "source": "ECB"}},
        ),
        actor=None,
    )  # fmt: skip
    for data in (
        LineData("licence", "per_unit", "Subscription", 4000, 4500, 5000, currency="USD",
                 unit="per_gpu", discount_percent=20, basis="estimate"),
        LineData("support", "per_year", "Support", 18000, 20000, 25000, currency="EUR"),
    ):  # fmt: skip
        cost_line_add(candidate=evaluation["volcano"], data=data, actor=None)
    cost_line_add(
        candidate=None,
        project=evaluation["alpha"],
        data=LineData("operations", "fte", "=SUM(A1)", 1, 1, 1),
        actor=None,
    )
    return evaluation


def _csv(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8-sig"))))


def test_people_read_every_line_per_year(costed, login) -> None:
    client = login(costed["bob"])
    rows = _csv(client.get(_url("costs", "csv")).content)
    subscription = [r for r in rows if r["What"] == "Subscription"]
    assert [r["Year"] for r in subscription] == ["1", "2", "3"]
    year2 = subscription[1]
    assert (year2["List cost"], year2["Expected"]) == ("316800.00", "253440.00")
    assert (year2["Low"], year2["High"]) == ("225280.00", "281600.00")
    assert year2["Basis"] == "our estimate" and year2["Pricing unit or team"].startswith("per GPU")
    support = next(r for r in rows if r["What"] == "Support")
    assert support["Expected"] == "22000.00" and support["Basis"] == "to be confirmed"
    # The PoC's integration effort is costed at the team's day rate, and the baseline has rows.
    effort = next(r for r in rows if r["What"] == "PoC integration effort")
    assert effort["Expected"] == "2800.00" and effort["Basis"] == "from the PoC results"
    baseline = [r for r in rows if r["Candidate"] == "Baseline: today"]
    assert len(baseline) == 3 and baseline[0]["What"] == "'=SUM(A1)"  # kept as text
    book = load_workbook(io.BytesIO(client.get(_url("costs", "xlsx")).content))
    (sheet,) = book.worksheets
    assert sheet.max_row == len(rows) + 1


def test_chinese_readers_get_chinese_columns(costed, login) -> None:
    client = login(costed["bob"])
    client.cookies["django_language"] = "zh-hans"
    rows = _csv(client.get(_url("costs", "csv"), HTTP_ACCEPT_LANGUAGE="zh-hans").content)
    assert "预期" in rows[0] and rows[0]["类别"] in {"许可或订阅", "支持", "实施", "运维"}


def test_focus_rows_load_into_finops_tools(costed, login) -> None:
    client = login(costed["bob"])
    answer = client.get(_url("costs-focus", "csv") + "?start=2027-04-01")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    rows = _csv(answer.content)
    assert list(rows[0])[:5] == ["BillingCurrency", "BilledCost", "EffectiveCost", "ListCost",
                                 "ContractedCost"]  # fmt: skip
    year2 = [r for r in rows if r["ChargeDescription"] == "Subscription"][1]
    assert (year2["ListCost"], year2["ContractedCost"], year2["BilledCost"]) == (
        "316800.00",
        "253440.00",
        "253440.00",
    )
    assert year2["ChargePeriodStart"] == "2028-04-01T00:00:00Z"
    assert year2["ChargePeriodEnd"] == "2029-04-01T00:00:00Z"
    assert (year2["PricingUnit"], year2["PricingQuantity"]) == ("GPU-year", "70.4")
    assert (year2["ListUnitPrice"], year2["ContractedUnitPrice"]) == ("4500.00", "3600.00")
    assert year2["ChargeFrequency"] == "Recurring" and year2["ChargeCategory"] == "Purchase"
    assert year2["x_Candidate"] == "volcano" and year2["x_Projection"] == "true"
    assert year2["ServiceCategory"] == "Management and Governance"
    effort = next(r for r in rows if r["x_CostCategory"] == "implementation")
    assert effort["ChargeFrequency"] == "One-Time" and effort["PricingUnit"] == "Person-day"
    # English whatever the reader's language.
    client.cookies["django_language"] = "zh-hans"
    again = _csv(client.get(_url("costs-focus", "csv") + "?start=2027-04-01").content)
    assert again == rows


def test_a_bad_start_or_format_is_named_not_a_server_error(costed, login) -> None:
    client = login(costed["bob"])
    bad = client.get(_url("costs-focus", "csv") + "?start=next-year")
    assert bad.status_code == 400 and "YYYY-MM-DD" in bad.content.decode()
    assert client.get(_url("costs-focus", "xlsx")).status_code == 404
    outsider = login(costed["charlie"]).get(_url("costs", "csv"))
    assert outsider.status_code == 404
