"""The cost page compares: capacity from each candidate's utilisation, the baseline costed by
its own lines, each candidate against it, break-even against the cheapest, the inputs that
change the ranking, the charts, and how likely each candidate is the cheapest; the sealed
sheet prints the same in the sheet's language."""

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from evaluations.models import ProjectEvent
from evaluations.services import membership_set
from reports.procurement.models import Basis, CostLine
from reports.procurement.services import (
    LineData,
    ModelData,
    TermChange,
    cost_line_add,
    cost_model_save,
    terms_record,
)
from tests.factories import CandidateFactory, UserFactory
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db

BASELINE_LINE = {
    "category": "operations", "label": "Hand-run operations", "kind": "fte", "low": "2",
    "expected": "3", "high": "4", "first_year": "1", "charge_category": "Purchase",
    "basis": "estimate",
}  # fmt: skip


def _url(name: str, **kwargs: object) -> str:
    return reverse(f"procurement:{name}", kwargs={"slug": "alpha", **kwargs})


@pytest.fixture
def compared(evaluation: dict[str, Any]) -> dict[str, Any]:
    """docs/costs.md's continued example, B as volcano and A as runai (no implementation
    days: A's PoC effort has no day rate, so its total says it misses one)."""
    alpha = evaluation["alpha"]
    buyer = UserFactory(username="erin")
    membership_set(project=alpha, user=buyer, role="procurement", actor=None)
    cost_model_save(
        project=alpha,
        data=ModelData(
            currency="USD", horizon_years=3, gpus=64, nodes=8, growth_percent=10,
            gpu_hours_per_year=336384, fte_cost=150000, capacity="owned", gpu_price=32000,
            depreciation_years=4, baseline_label="Today's clusters",
            baseline_utilisation_percent=35,
        ),
        actor=None,
    )  # fmt: skip
    volcano = evaluation["volcano"]
    for data in (
        LineData("support", "per_year", "Third-party support", 40000, 60000, 90000, "USD"),
        LineData("operations", "fte", "Scheduler operations", 1, 2, 3),
    ):
        cost_line_add(candidate=volcano, data=data, actor=None)
    terms_record(
        candidate=volcano,
        changes=[TermChange("utilisation_percent", "75", Basis.MEASURED, "PoC run 12")],
        actor=None,
    )
    # A second candidate, with a subscription but no utilisation recorded yet.
    runai = CandidateFactory(project=alpha, solution_key="runai")
    cost_line_add(
        candidate=runai,
        data=LineData(
            "licence", "per_unit", "Subscription", 4000, 4500, 5000, "USD", unit="per_gpu",
            discount_percent=20,
        ),
        actor=None,
    )  # fmt: skip
    return {**evaluation, "buyer": buyer, "runai": runai}


def test_the_page_compares_with_the_baseline_and_charts_it(compared, login) -> None:
    client = login(compared["buyer"])
    added = client.post(_url("baseline_line_add"), BASELINE_LINE)
    assert added.status_code == 302 and added.url.endswith("#c-baseline")
    line = CostLine.objects.get(candidate=None)
    assert line.project == compared["alpha"]
    event = ProjectEvent.objects.filter(verb="costs.line_added").latest("pk")
    assert event.subject == "baseline · Hand-run operations"
    page = client.get(_url("costs")).content.decode()
    assert "Today&#x27;s clusters" in page or "Today's clusters" in page
    # Volcano: 51.2 GPUs in year 1, 61.952 in year 3; 2,435,776 in all; the baseline 4,255,234.
    assert "$2,435,776" in page and "$4,255,234" in page and "−$1,819,458" in page
    assert re.search(r">51 – 62 <span[^>]*>\(75 %, measured in the PoC\)", page)
    assert "$2.19" in page  # per GPU-hour used
    # A candidate without a utilisation says so rather than costing no GPUs.
    assert "no utilisation for Run:ai" in page
    # Charts: the cumulative one and, per candidate with figures, its years and tornado.
    assert page.count("<svg") >= 3 and "Cumulative cost over the years" in page
    assert "Break-even fleet size" in page
    assert "<script" not in page.split('id="comparing"')[1].split("</section>")[0]
    cheapest = client.get(_url("cost_cheapest")).content.decode()
    row = r"<td>([^<]+?)(?: <span[^>]*>[^<]*</span>)?</td><td class=\"num\">(\d+) %"
    shares = dict(re.findall(row, cheapest))
    assert sum(map(int, shares.values())) in (99, 100, 101) and len(shares) >= 2


def test_who_may_cost_the_baseline(compared, login) -> None:
    answer = login(compared["dave"]).post(_url("baseline_line_add"), BASELINE_LINE)
    assert answer.status_code == 403
    refused = login(compared["buyer"]).post(
        _url("baseline_line_add"), {**BASELINE_LINE, "low": "5"}
    )
    assert refused.status_code == 422
    assert "The figures must run low ≤ expected ≤ high." in refused.content.decode()
    assert not CostLine.objects.filter(candidate=None).exists()
    # Removing a baseline line is recorded too.
    client = login(compared["buyer"])
    client.post(_url("baseline_line_add"), BASELINE_LINE)
    line = CostLine.objects.get(candidate=None)
    removed = client.post(_url("cost_line_remove", line_id=line.pk))
    assert removed.status_code == 302 and removed.url.endswith("#c-baseline")
    assert ProjectEvent.objects.get(verb="costs.line_removed").subject.startswith("baseline · ")


def _text(sheet: Any) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(Path(sheet.pdf.path)), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_the_sheet_freezes_and_prints_the_comparison(compared) -> None:
    cost_line_add(
        candidate=None,
        project=compared["alpha"],
        data=LineData("operations", "fte", "Hand-run operations", 2, 3, 4),
        actor=None,
    )
    sheet = rendered(compared)
    costs = sheet.snapshot["costs"]
    assert costs["baseline"]["label"] == "Today's clusters"
    assert costs["baseline"]["total"][1] == "4255234.29"
    frozen = {c["slug"]: c for c in costs["candidates"]}
    assert frozen["volcano"]["versus_baseline"][1] == "-1819458.29"
    assert frozen["volcano"]["gpus_needed"] == ["51.20", "61.95"]
    assert sum(c["cheapest_share"] for c in costs["candidates"]) == pytest.approx(1, abs=0.01)
    text = _text(sheet)
    assert "Against the" in text and "−$1,819,458" in text and "$2.19" in text
    assert "Baseline: Today's clusters." in text and "Cheapest in" in text
    assert "utilisation 75" in text
    chinese = _text(rendered(compared, language="zh-hans"))
    assert "基线" in chinese and "最便宜的概率" in chinese


def test_a_total_resting_on_unconfirmed_lines_says_so(compared, login) -> None:
    """Volcano's lines have no basis yet: the page, the frozen costs, the readiness and the
    first page all say how much of the total waits for confirmation."""
    page = login(compared["buyer"]).get(_url("costs")).content.decode()
    # Support 180,000 and operations 900,000 over three years; capacity is derived.
    assert "rests on 2 lines to be confirmed ($1,080,000)" in page
    sheet = rendered(compared)
    (volcano,) = [c for c in sheet.snapshot["costs"]["candidates"] if c["slug"] == "volcano"]
    assert volcano["unconfirmed"] == [2, "1080000.00"]
    assert "Volcano: 2 cost lines still to be confirmed" in sheet.gaps
    flat = subprocess.run(
        ["pdftotext", str(Path(sheet.pdf.path)), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "rests on 2 lines to be confirmed ($1,080,000)" in re.sub(r"\s+", " ", flat)


def test_unconfirmed_lines_and_combinations_are_chased_and_printed(compared, login) -> None:
    """A cost line without a basis and a combination only asked about are open items with an
    owner, a due date and the request sent, on the page and in the sheet's list."""
    from datetime import timedelta

    from django.utils import timezone

    from reports.procurement.models import Combination
    from reports.procurement.services import Stack, compatibility_claim, confirmation_set

    volcano = compared["volcano"]
    compatibility_claim(
        candidate=volcano, stack=Stack("NVIDIA B200"), status="tbc", note="asked", actor=None
    )
    combination = Combination.objects.get(candidate=volcano)
    support = CostLine.objects.get(candidate=volcano, label="Third-party support")
    client = login(compared["buyer"])
    listed = client.get(_url("to_confirm")).content.decode()
    assert "Third-party support" in listed and "NVIDIA B200" in listed
    due = timezone.localdate() + timedelta(days=7)
    chased = client.post(
        _url("confirmation_edit", candidate_slug="volcano", key=f"line-{support.pk}"),
        {"owner_team": "procurement", "due": due.isoformat(), "request": "Quote asked"},
    )
    assert chased.status_code == 302
    confirmation_set(
        candidate=volcano, subject=f"combo:{combination.pk}", actor=None, owner_team="platform"
    )
    # A line on a basis is not open: chasing it is refused by name.
    quoted = CostLine.objects.create(
        project=compared["alpha"], candidate=volcano, category="other", kind="one_off",
        label="Quoted", low=1, expected=1, high=1, currency="USD", basis="estimate",
    )  # fmt: skip
    refused = client.get(
        _url("confirmation_edit", candidate_slug="volcano", key=f"line-{quoted.pk}")
    )
    assert refused.status_code == 404
    sheet = rendered(compared)
    items = {(i["group"], i["term"]): i for i in sheet.snapshot["to_confirm"]}
    line = items[("Costs", "Third-party support")]
    assert line["owner"] == "Procurement" and line["due"] == due.isoformat()
    assert line["request"] == "Quote asked"
    assert items[("Support and compatibility", "NVIDIA B200")]["owner"] == "Platform"
    flat = subprocess.run(
        ["pdftotext", str(Path(sheet.pdf.path)), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "Quote asked" in re.sub(r"\s+", " ", flat)


def test_the_utilisation_range_reaches_the_capacity_cost(compared) -> None:
    from reports.procurement.selectors import cost_overview

    terms_record(
        candidate=compared["volcano"],
        changes=[
            TermChange("utilisation_low_percent", "60", Basis.ESTIMATE),
            TermChange("utilisation_high_percent", "80", Basis.ESTIMATE),
        ],
        actor=None,
    )
    (volcano,) = [
        c
        for c in cost_overview(compared["alpha"], [compared["volcano"]]).candidates
        if c.slug == "volcano"
    ]
    capacity = volcano.costs.by_category["capacity"][0]
    # 336,384 GPU-hours: at 80 % 48 GPUs (384,000 a year), at 60 % 64 GPUs (512,000).
    assert (round(capacity.low), round(capacity.expected), round(capacity.high)) == (
        384000,
        409600,
        512000,
    )
    assert any(s.line.category == "capacity" for s in volcano.swings or [])
    # The range is optional: it is never asked for in the list of what is to be confirmed.
    from reports.procurement.selectors import open_items

    keys = {i.cell.term.key for i in open_items(compared["alpha"], [compared["runai"]])}
    assert "utilisation_percent" in keys and "utilisation_low_percent" not in keys


def test_a_confirmed_figure_replaces_the_line_and_closes_its_chase(compared, login) -> None:
    from reports.procurement.models import Confirmation
    from reports.procurement.services import confirmation_set

    volcano = compared["volcano"]
    support = CostLine.objects.get(candidate=volcano, label="Third-party support")
    confirmation_set(candidate=volcano, subject=f"line:{support.pk}", actor=None)
    client = login(compared["buyer"])
    url = _url("cost_line_add", candidate_slug="volcano") + f"?replaces={support.pk}"
    form = client.get(url).content.decode()
    assert 'value="Third-party support"' in form and f'name="replaces" value="{support.pk}"' in form
    posted = {
        "category": "support", "label": "Third-party support", "kind": "per_year",
        "currency": "USD", "low": "50000", "expected": "55000", "high": "60000",
        "first_year": "1", "charge_category": "Purchase", "replaces": str(support.pk),
    }  # fmt: skip
    still_open = client.post(url, {**posted, "basis": "tbc"})
    assert still_open.status_code == 422
    assert "give it a basis other than to be confirmed" in still_open.content.decode()
    assert CostLine.objects.filter(pk=support.pk).exists()
    quoted = {**posted, "basis": "quote", "reference": "Q-9", "valid_until": "2099-01-01"}
    assert client.post(url, quoted).status_code == 302
    assert not CostLine.objects.filter(pk=support.pk).exists()
    chase = Confirmation.objects.get(subject=f"line:{support.pk}")
    assert chase.closed_at is not None and chase.closing_reference == "vendor quote: Q-9"
    # A combination's chase closes when its question is answered by a claim.
    from reports.procurement.models import Combination
    from reports.procurement.services import Stack, compatibility_claim

    compatibility_claim(candidate=volcano, stack=Stack("NVIDIA B200"), status="tbc", actor=None)
    combination = Combination.objects.get(candidate=volcano)
    confirmation_set(candidate=volcano, subject=f"combo:{combination.pk}", actor=None)
    compatibility_claim(
        candidate=volcano, stack=Stack("NVIDIA B200"), status="vendor", reference="Matrix v3",
        actor=None,
    )  # fmt: skip
    answered = Confirmation.objects.get(subject=f"combo:{combination.pk}")
    assert (
        answered.closed_at is not None and answered.closing_reference == "vendor claim: Matrix v3"
    )
