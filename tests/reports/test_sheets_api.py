"""Sheets over the API and the spreadsheet exports; rendering by a real worker."""

import csv
import io

import pytest
from django.conf import settings as django_settings
from django.urls import reverse
from openpyxl import load_workbook
from rest_framework.test import APIClient

from reports import exports, services
from reports.models import Sheet, SheetStatus, SignOff
from reports.verify import verify_pdf
from tests.poc.api_helpers import token_client
from tests.reports.helpers import approve_all
from tests.workers import celery_worker, wait_until
from workbench.celery import app as celery_app


@pytest.mark.django_db
def test_generate_read_and_sign_through_the_api(evaluation) -> None:
    client, token, _raw = token_client(evaluation["alpha"])
    response = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json")
    assert response.status_code == 202
    sheet = Sheet.objects.get(pk=response.json()["id"])
    assert sheet.generated_by_token == token and sheet.generated_by is None
    assert response.json()["generated_by_token"] == {"name": token.name, "prefix": token.prefix}
    assert response.json()["one_signer_many_roles"] is False
    assert response.json()["status"] == "pending" and response.json()["sha256"] == sheet.sha256
    assert (
        client.post("/api/v1/projects/beta/sheets/", {"language": "en"}, format="json").status_code
        == 404
    )
    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.READY)
    # A token cannot sign: signing is a person's act.
    refused = client.post(
        f"/api/v1/sheets/{sheet.pk}/signoffs/", {"decision": "approve"}, format="json"
    )
    assert refused.status_code in (401, 403)
    person = APIClient()
    person.force_login(evaluation["bob"])
    misread = person.post(
        f"/api/v1/sheets/{sheet.pk}/signoffs/",
        {"decision": "approve", "sha256": "0" * 64},
        format="json",
    )
    assert misread.status_code == 409 and "another revision" in misread.json()["detail"]
    assert not SignOff.objects.exists()
    signed = person.post(
        f"/api/v1/sheets/{sheet.pk}/signoffs/",
        {"decision": "reject", "comment": "exit plan missing", "sha256": sheet.sha256},
        format="json",
    )
    assert signed.status_code == 201 and signed.json()["role"] == "ops"
    again = person.post(
        f"/api/v1/sheets/{sheet.pk}/signoffs/", {"decision": "approve"}, format="json"
    )
    assert again.status_code == 409
    alice = APIClient()
    alice.force_login(evaluation["alice"])  # platform and architecture: must name the role
    assert (
        alice.post(
            f"/api/v1/sheets/{sheet.pk}/signoffs/", {"decision": "approve"}, format="json"
        ).status_code
        == 400
    )
    outsider = APIClient()
    outsider.force_login(evaluation["charlie"])
    assert outsider.get(f"/api/v1/sheets/{sheet.pk}/").status_code == 404
    listed = client.get("/api/v1/projects/alpha/sheets/").json()["sheets"]
    assert [(s["id"], s["revision"], s["rejected"]) for s in listed] == [(sheet.pk, 1, True)]
    other, _token, _raw = token_client(evaluation["beta"])
    assert other.get("/api/v1/projects/alpha/sheets/").status_code == 404
    detail = client.get(f"/api/v1/sheets/{sheet.pk}/").json()
    assert detail["signoffs"][0]["comment"] == "exit plan missing"
    assert detail["stale"] is False and detail["required_roles"][-1] == "ops"
    assert detail["changes_since_freeze"] is None
    assert detail["signoffs"][0]["after_changes"] is False
    evaluation["alpha"].description = "scope widened"
    evaluation["alpha"].save()
    detail = client.get(f"/api/v1/sheets/{sheet.pk}/").json()
    assert detail["stale"] is True
    assert detail["changes_since_freeze"] == {
        "total": 1,
        "shown": [
            {
                "section": "Framing",
                "subject": "Description",
                "before": "—",
                "after": "scope widened",
            }
        ],
    }
    assert SignOff.objects.count() == 1


@pytest.mark.django_db
def test_verify_api_never_fails_with_a_server_error(evaluation) -> None:
    client = APIClient()
    client.force_login(evaluation["bob"])
    for body in (b"", b"%PDF-1.4 truncated", b"\x00\xff" * 50):
        response = client.post("/api/v1/sheets/verify/", body, content_type="application/pdf")
        assert response.status_code == 200
        assert response.json()["valid"] is False and response.json()["problems"]


@pytest.mark.django_db
def test_exports_carry_the_same_numbers(evaluation, login) -> None:
    from poc import services as poc_services

    client = login(evaluation["bob"])

    def csv_rows(url: str) -> list[list[str]]:
        return list(csv.reader(io.StringIO(client.get(url).content.decode("utf-8-sig"))))

    def export(table: str, fmt: str, revision: int | None = None) -> str:
        if revision is None:
            kwargs = {"slug": "alpha", "table": table, "fmt": fmt}
            return reverse("reports:export", kwargs=kwargs)
        kwargs = {"slug": "alpha", "revision": revision, "table": table, "fmt": fmt}
        return reverse("reports:sheet_export", kwargs=kwargs)

    rows = csv_rows(export("comparison", "csv"))
    assert rows[0] == [
        "Candidate",
        "Tier",
        "Passed",
        "Failed",
        "Not covered",
        "Needs integration",
        "Integration effort (person-days)",
        "Responsibility gaps",
    ]
    volcano = f"Volcano {evaluation['volcano'].version}".strip()
    assert rows[1] == [volcano, "Validate first", "1", "1", "0", "1", "3.5", "11"]
    poc_services.responsibility_set(
        candidate=evaluation["volcano"],
        area="support_sla",
        party="vendor",
        person="=HYPERLINK(evil)",
        actor=None,
    )
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    frozen = sheet.snapshot["candidates"][0]

    # The revision's exports are its snapshot's numbers.
    comparison = csv_rows(export("comparison", "csv", 1))
    assert comparison[1][2:6] == [str(frozen["counts"][o]) for o in exports.OUTCOME_ORDER]
    assert comparison[1][7] == str(len(frozen["gaps"])) == "10"
    book = load_workbook(io.BytesIO(client.get(export("matrix", "xlsx", 1)).content))
    values = [[c.value for c in row] for row in book.active.iter_rows()]
    assert values[0] == ["Acceptance action", "Key", "Requirement", "Scenario", volcano]
    assert [row[1] for row in values[1:]] == [a["key"] for a in sheet.snapshot["matrix"]["actions"]]
    assert [row[0] for row in values[1:]] == [
        a["question"] for a in sheet.snapshot["matrix"]["actions"]
    ]
    words = {"passed": "Passed", "failed": "Failed", "needs_integration": "Needs integration"}
    assert [row[4:] for row in values[1:]] == [
        [words[o] for o in row] for row in sheet.snapshot["matrix"]["rows"]
    ]
    # A sheet to work in: frozen header with filters, widths, outcome colours.
    grid = book.active
    assert grid.freeze_panes == "A2" and grid.auto_filter.ref == "A1:E4"
    assert grid["A1"].font.bold and grid.column_dimensions["A"].width >= 10
    assert grid["E2"].fill.fgColor.rgb.endswith(exports.OUTCOME_FILLS["passed"])
    assert grid["E3"].fill.fgColor.rgb.endswith(exports.OUTCOME_FILLS["failed"])
    responsibilities = csv_rows(export("responsibilities", "csv", 1))
    assigned = [r for r in responsibilities[1:] if r[5] == "yes"]
    assert assigned == [[volcano, "Support and SLA", "Vendor", "'=HYPERLINK(evil)", "", "yes"]]
    assert len(responsibilities) - 1 == 11  # every area, assigned or a gap
    # The same cell in XLSX is text, never a formula a spreadsheet would run.
    book = load_workbook(io.BytesIO(client.get(export("responsibilities", "xlsx", 1)).content))
    cells = [
        c for row in book.active.iter_rows() for c in row if c.value and "HYPERLINK" in str(c.value)
    ]
    assert [(c.value, c.data_type) for c in cells] == [("'=HYPERLINK(evil)", "s")]

    # The project moves on: current exports follow it, the revision's stay as signed.
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][1],
        outcome="passed",
        change_reason="fixed upstream",
        actor=None,
    )
    assert csv_rows(export("comparison", "csv"))[1][2:4] == ["2", "0"]
    assert csv_rows(export("comparison", "csv", 1))[1][2:4] == ["1", "1"]

    assert login(evaluation["charlie"]).get(export("comparison", "csv")).status_code == 404
    assert login(evaluation["charlie"]).get(export("matrix", "csv", 1)).status_code == 404
    # In Chinese: headers and choice labels follow the reader's language.
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    rows = csv_rows(export("comparison", "csv"))
    assert rows[0][:3] == ["候选方案", "层级", "通过"] and rows[1][1] == "优先验证"
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    bad = reverse("reports:export", kwargs={"slug": "alpha", "table": "secrets", "fmt": "csv"})
    assert client.get(bad).status_code == 404
    assert client.get(export("matrix", "pdf", 1)).status_code == 404


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_renders_and_seals_the_sheet_on_the_reports_queue(
    evaluation, login, settings
):
    celery_app.control.purge()
    db = django_settings.DATABASES["default"]
    database_url = (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )
    env = {
        "DATABASE_URL": database_url,
        "MEDIA_ROOT": settings.MEDIA_ROOT,
        "SHEET_SIGNING_P12": settings.SHEET_SIGNING_P12,
        "SHEET_SIGNING_PASSPHRASE": settings.SHEET_SIGNING_PASSPHRASE,
    }
    with celery_worker(env, queues="reports") as worker:
        client = login(evaluation["bob"])
        client.post(
            reverse("reports:sheets", kwargs={"slug": "alpha"}),
            {"language": "zh-hans", "acknowledgement": "known gaps"},
        )
        sheet = Sheet.objects.get()

        def rendered() -> bool:
            sheet.refresh_from_db()
            return sheet.status in (SheetStatus.READY, SheetStatus.FAILED)

        try:
            wait_until(rendered, seconds=90, what="the worker to render the sheet")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
        assert sheet.status == SheetStatus.READY, sheet.error
        assert sheet.page_count >= 2
        status = client.get(
            reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1}),
            headers={"HX-Request": "true"},
        ).content.decode()
        assert "hx-trigger" not in status  # finished: the page stops polling
        pdf = client.get(reverse("reports:sheet_pdf", kwargs={"slug": "alpha", "revision": 1}))
        assert pdf["Content-Disposition"].startswith("attachment;")
        assert b"".join(pdf.streaming_content).startswith(b"%PDF-")
        assert services.sheet_is_stale(sheet) is False

        # The last approval hands sealing to the same worker.
        approve_all(evaluation, sheet)

        def sealed() -> bool:
            sheet.refresh_from_db()
            return sheet.status == SheetStatus.SEALED or bool(sheet.seal_error)

        try:
            wait_until(sealed, seconds=90, what="the worker to seal the sheet")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
        assert sheet.status == SheetStatus.SEALED, sheet.seal_error
        assert verify_pdf(sheet.sealed_pdf.read()).valid


@pytest.mark.django_db
def test_a_token_cannot_queue_renders_without_end(evaluation) -> None:
    from reports.services import MAX_PENDING_RENDERS

    client, _token, _raw = token_client(evaluation["alpha"])
    for _ in range(MAX_PENDING_RENDERS):
        response = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json")
        assert response.status_code == 202
    refused = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json")
    assert refused.status_code == 429 and refused["Retry-After"] == "30"
    assert "still waiting to be rendered" in refused.json()["detail"]
    assert Sheet.objects.filter(project=evaluation["alpha"]).count() == MAX_PENDING_RENDERS
    # Once one is rendered, another may be queued.
    first = Sheet.objects.filter(project=evaluation["alpha"]).order_by("pk").first()
    Sheet.objects.filter(pk=first.pk).update(status=SheetStatus.READY)
    again = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json")
    assert again.status_code == 202


@pytest.mark.django_db
def test_a_signed_in_person_can_verify_a_raw_pdf_body(evaluation) -> None:
    """Verifying changes nothing, so the raw body works with a session too (as documented),
    without a CSRF token that a raw PDF body cannot carry."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(evaluation["bob"])
    response = client.post(
        "/api/v1/sheets/verify/", b"%PDF-1.7 not sealed", content_type="application/pdf"
    )
    assert response.status_code == 200, response.content[:200]
    assert response.json()["valid"] is False
    # Writes through the same session still need the token.
    refused = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json")
    assert refused.status_code == 403
