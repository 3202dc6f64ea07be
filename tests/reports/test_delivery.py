"""Who delivers what: each integration need (recorded by hand or posted by CI, carried to the
cell's next result unless it changes) and each responsibility area is classified as product
capability, custom development, implementation service or third-party component, with who
delivers it; the sheet totals effort and cost per kind and names what nobody delivers."""

import re
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from poc import services as poc_services
from poc.models import ResultCell
from reports.procurement.services import ModelData, cost_model_save
from tests.poc.api_helpers import post_results, token_client
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db


def _latest(evaluation: dict[str, Any], action: Any) -> Any:
    return ResultCell.objects.get(candidate=evaluation["volcano"], action=action).result


def _needs(evaluation: dict[str, Any], **extra: Any) -> Any:
    tenant = evaluation["actions"][2]
    return poc_services.result_record(
        candidate=evaluation["volcano"],
        action=tenant,
        outcome="needs_integration",
        integration_what="LDAP groups",
        integration_owner_team="platform",
        integration_effort_days=Decimal("3.5"),
        actor=None,
        **extra,
    )


def test_a_later_result_carries_who_delivers_unless_it_changes(evaluation) -> None:
    first = _needs(evaluation, integration_delivery="custom", integration_delivered_by="Acme")
    assert (first.integration_delivery, first.integration_delivered_by) == ("custom", "Acme")
    again = _needs(evaluation)  # says nothing of delivery: carried
    assert (again.integration_delivery, again.integration_delivered_by) == ("custom", "Acme")
    changed = _needs(evaluation, integration_delivery="product", integration_delivered_by="")
    assert (changed.integration_delivery, changed.integration_delivered_by) == ("product", "")
    passed = poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][2],
        outcome="passed",
        change_reason="works now",
        actor=None,
    )
    assert (passed.integration_delivery, passed.integration_delivered_by) == ("", "")
    with pytest.raises(ValidationError, match="is not a kind of delivery"):
        _needs(evaluation, integration_delivery="magic", change_reason="needs work again")


def test_ci_posts_carry_and_check_it(evaluation) -> None:
    client, _token, _raw = token_client(evaluation["alpha"])
    tenant = evaluation["actions"][2].key

    def row(**integration: Any) -> dict[str, Any]:
        return {
            "candidate": "volcano",
            "action": tenant,
            "outcome": "needs_integration",
            "integration": {"what": "LDAP", "owner_team": "platform", "effort_days": 2,
                            **integration},
        }  # fmt: skip

    first = post_results(
        client, "alpha", {"run": {"external_id": "n-1"}, "results": [row(
            delivery="third_party", delivered_by="Keycloak community")]}
    )  # fmt: skip
    assert first.status_code == 201, first.content
    second = post_results(client, "alpha", {"run": {"external_id": "n-2"}, "results": [row()]})
    assert second.status_code == 201
    latest = _latest(evaluation, evaluation["actions"][2])
    assert (latest.integration_delivery, latest.integration_delivered_by) == (
        "third_party",
        "Keycloak community",
    )
    bad = post_results(
        client, "alpha", {"run": {"external_id": "n-3"}, "results": [row(delivery="magic")]}
    )
    assert bad.status_code == 400 and "integration.delivery" in bad.content.decode()


def _text(sheet: Any) -> str:
    raw = subprocess.run(
        ["pdftotext", str(Path(sheet.pdf.path)), "-"], capture_output=True, text=True, check=True
    ).stdout
    return re.sub(r"\s+", " ", raw)


def test_the_sheet_totals_each_kind_and_names_what_nobody_delivers(evaluation) -> None:
    cost_model_save(
        project=evaluation["alpha"], data=ModelData(day_rates={"platform": 800}), actor=None
    )
    poc_services.responsibility_set(
        candidate=evaluation["volcano"],
        area="upgrade_rollback",
        party="vendor",
        person="Vendor TAM",
        delivery="service",
        actor=None,
    )
    sheet = rendered(evaluation)
    (volcano,) = [c for c in sheet.snapshot["candidates"] if c["slug"] == "volcano"]
    rows = {r["kind"]: r for r in volcano["delivery"]["rows"]}
    # The fixture's LDAP need (3.5 days of platform at 800) is not classified yet.
    assert rows[""] == {
        "kind": "", "label": "not classified", "items": 1, "days": "3.5", "cost": "2800.00",
    }  # fmt: skip
    assert rows["service"]["items"] == 1 and rows["service"]["days"] == "0"
    assert [n["what"] for n in volcano["delivery"]["nobody"]] == ["LDAP groups"]
    text = _text(sheet)
    assert "Who delivers what" in text and "not classified" in text and "$2,800" in text
    assert "1 integration need has nobody named to deliver it: LDAP groups" in text
    chinese = _text(rendered(evaluation, language="zh-hans"))
    assert "谁来交付什么" in chinese and "实施服务" in chinese


def test_a_team_without_a_day_rate_leaves_the_cost_unknown(evaluation) -> None:
    cost_model_save(project=evaluation["alpha"], data=ModelData(), actor=None)
    _needs(evaluation, integration_delivery="custom", integration_delivered_by="our platform")
    sheet = rendered(evaluation)
    (volcano,) = [c for c in sheet.snapshot["candidates"] if c["slug"] == "volcano"]
    (custom,) = volcano["delivery"]["rows"]
    assert custom["kind"] == "custom" and custom["cost"] is None
    assert volcano["delivery"]["nobody"] == []
    assert "no day rate" in _text(sheet)


def test_a_long_list_of_needs_nobody_delivers_is_cut_and_the_record_names_them_all() -> None:
    """The body names the first ten per candidate and counts the rest; the attached results
    carry every need's kind of delivery and who delivers it (empty: nobody)."""
    from django.template.loader import render_to_string

    from reports.attachments import results_rows
    from reports.decision import NOBODY_SHOWN

    nobody = [{"action": f"a{i}", "what": f"need {i}", "owner_team": "Platform"} for i in range(13)]
    candidate = {
        "slug": "volcano",
        "solution": "Volcano",
        "version": "1.9",
        "delivery": {
            "rows": [{"kind": "", "label": "not classified", "items": 13}],
            "nobody": nobody,
        },
    }
    html = render_to_string(
        "reports/pdf/_delivery.html",
        {"s": {"candidates": [candidate]}, "nobody_shown": NOBODY_SHOWN},
    )
    flat = re.sub(r"\s+", " ", html)
    assert "need 9 (Platform); and 3 more, listed in the attached results" in flat
    assert "need 10" not in flat
    snapshot = {
        "matrix": {
            "columns": ["volcano"],
            "actions": [{"key": "a1", "question": "Q1?"}, {"key": "a2", "question": "Q2?"}],
            "rows": [["needs_integration"], ["needs_integration"]],
        },
        "candidates": [
            {
                **candidate,
                "failed": [],
                "needs_integration": [
                    {"action": "a1", "what": "LDAP", "owner_team": "Platform", "effort_days": "2",
                     "delivery": "custom development", "delivered_by": "our platform team"},
                    {"action": "a2", "what": "SSO", "owner_team": "Platform", "effort_days": "1",
                     "delivery": "", "delivered_by": ""},
                ],
            }
        ],
    }  # fmt: skip
    header, first, second = results_rows(snapshot)
    delivered = header.index("Delivered by")
    assert header[delivered - 1] == "Kind of delivery"
    assert first[delivered - 1 : delivered + 1] == ["custom development", "our platform team"]
    assert second[delivered - 1 : delivered + 1] == ["", ""]
