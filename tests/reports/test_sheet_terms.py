"""Terms, costs and what is still to be confirmed in the procurement sheet's PDF, in the sheet's
language: values with their basis, an expired quote marked against the revision's date, and the
open list with who chases each item."""

import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from reports import services
from reports.diff import snapshot_changes
from reports.procurement.models import Basis, TermEntry
from reports.procurement.services import (
    LineData,
    ModelData,
    TermChange,
    confirmation_set,
    cost_line_add,
    cost_model_save,
    terms_record,
)
from reports.selectors import sheet_is_stale
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db


def _text(sheet: Any) -> str:
    path = Path(sheet.pdf.path)
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def termed(evaluation: dict[str, Any]) -> dict[str, Any]:
    volcano = evaluation["volcano"]
    soon = timezone.localdate() + timedelta(days=1)
    terms_record(
        candidate=volcano,
        changes=[
            TermChange("licence_kind", "commercial", Basis.LIST_PRICE, source="vendor site"),
            TermChange("licence_spdx", "Apache-2.0 AND LicenseRef-Vendor-EULA"),
            TermChange(
                "list_price",
                {"amount": "4500", "currency": "USD"},
                Basis.QUOTE,
                "Q-77",
                valid_until=soon,
            ),
            TermChange("cve_patch_days", "14", Basis.QUOTE, "Q-78", valid_until=soon),
        ],
        actor=None,
    )
    # The second quote has expired by the time the revision is made.
    TermEntry.objects.filter(key="cve_patch_days").update(
        valid_until=timezone.localdate() - timedelta(days=3)
    )
    confirmation_set(
        candidate=volcano,
        subject="term:sev1_response_hours",
        actor=None,
        owner_team="procurement",
        due=timezone.localdate() + timedelta(days=10),
        request="SLA annex requested",
    )
    return evaluation


def test_the_pdf_prints_terms_with_their_basis_and_the_open_list(termed) -> None:
    text = _text(rendered(termed))
    assert "Terms" in text and "Still to be confirmed" in text
    assert "Apache-2.0 AND LicenseRef-Vendor-EULA" in text
    price = next(line for line in text.splitlines() if "List price per unit" in line)
    assert "$4,500.00" in price and "vendor quote · Q-77" in price
    lines = text.splitlines()
    at = next(n for n, line in enumerate(lines) if "Time to patch a critical CVE" in line)
    assert "quote expired" in " ".join(lines[at : at + 3])  # the basis column wraps
    assert text.count("quote expired") == 1  # Q-77 is still valid
    section = text[text.rindex("Still to be confirmed (") :]
    section = section[: section.index("The record")]
    due = (timezone.localdate() + timedelta(days=10)).isoformat()
    assert "Severity-1 response" in section and "Procurement" in section and due in section
    assert "SLA annex requested" in section
    assert "List price per unit" not in section  # it stands on a quote


def test_the_chinese_pdf_prints_them_in_chinese(termed) -> None:
    text = _text(rendered(termed, language="zh-hans"))
    assert "待确认事项" in text and "单位目录价" in text
    assert "厂商报价 · Q-77" in text and "报价已过期" in text
    assert "一级故障响应" in text


@pytest.fixture
def costed(evaluation: dict[str, Any]) -> dict[str, Any]:
    cost_model_save(
        project=evaluation["alpha"],
        data=ModelData(currency="USD", horizon_years=3, gpus=64, nodes=8, growth_percent=10),
        actor=None,
    )
    cost_line_add(
        candidate=evaluation["volcano"],
        data=LineData(
            "licence", "per_unit", "Subscription", 4000, 4500, 5000, currency="USD",
            unit="per_gpu", discount_percent=20,
        ),
        actor=None,
    )  # fmt: skip
    return evaluation


def test_the_sheet_freezes_and_prints_the_costs(costed) -> None:
    sheet = rendered(costed)
    (frozen,) = sheet.snapshot["costs"]["candidates"]
    assert frozen["total"] == ["677888.00", "762624.00", "847360.00"]  # docs/costs.md
    assert frozen["per_year"] == ["230400.00", "253440.00", "278784.00"]
    text = _text(sheet)
    assert "Costs" in text and "$762,624" in text and "$677,888 – $847,360" in text
    assert "$253,440" in text
    # A new line makes the revision stale and the change is listed.
    cost_line_add(
        candidate=costed["volcano"],
        data=LineData("exit", "one_off", "Migration", 1000, 1000, 1000, currency="USD"),
        actor=None,
    )
    assert sheet_is_stale(sheet)
    later = services.sheet_generate(
        acknowledgement="known gaps", project=costed["alpha"], language="en", actor=None
    )
    changes = snapshot_changes(sheet.snapshot, later.snapshot)
    listed = {(c.section, c.subject): (c.before, c.after) for c in changes.shown}
    before, after = listed[("Costs", "Volcano: total")]
    assert before.startswith("762624.00") and after.startswith("763624.00")


def test_the_chinese_sheet_prints_the_costs_in_chinese(costed) -> None:
    text = _text(rendered(costed, language="zh-hans"))
    assert "成本" in text and "净现值" in text and "许可或订阅" in text
    assert "不完整" in text and "人天费率" in text  # the PoC's 3.5 days of platform: no rate
