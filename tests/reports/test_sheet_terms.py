"""Terms and what is still to be confirmed in the procurement sheet's PDF, in the sheet's
language: values with their basis, an expired quote marked against the revision's date, and the
open list with who chases each item."""

import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from reports.procurement.models import Basis, TermEntry
from reports.procurement.services import TermChange, confirmation_set, terms_record
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
    section = section[: section.index("Evidence index")]
    due = (timezone.localdate() + timedelta(days=10)).isoformat()
    assert "Severity-1 response" in section and "Procurement" in section and due in section
    assert "SLA annex requested" in section
    assert "List price per unit" not in section  # it stands on a quote


def test_the_chinese_pdf_prints_them_in_chinese(termed) -> None:
    text = _text(rendered(termed, language="zh-hans"))
    assert "待确认事项" in text and "单位目录价" in text
    assert "厂商报价 · Q-77" in text and "报价已过期" in text
    assert "一级故障响应" in text
