"""What a rendered sheet shows page by page, and a sealed one checked everywhere it can be:
browser, API (body and multipart), the management command; downloads for members only."""

import io
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from evaluations.models import Project
from poc import services as poc_services
from reports import services
from reports.models import Sheet, SheetStatus
from reports.procurement.services import TermChange, terms_record
from tests.factories import make_actions
from tests.poc.api_helpers import token_client
from tests.reports.helpers import SIGNERS, approve_all, rendered

pytestmark = pytest.mark.django_db


def _pages(pdf: Path) -> list[str]:
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split("\f")[:-1]  # pdftotext ends every page with a form feed


@pytest.fixture(params=["one document", "in parts"])
def layout(request: pytest.FixtureRequest, settings: Any) -> str:
    """Both ways a sheet is laid out: one document, and in parts (reports.pdfparts, which a
    sheet over SHEET_PARTS_ABOVE rows takes): the reader sees the same sheet either way."""
    settings.SHEET_PARTS_ABOVE = 0 if request.param == "one document" else 1
    return str(request.param)


def _seal(evaluation: dict[str, Any], sheet: Sheet) -> Sheet:
    approve_all(evaluation, sheet)
    sealed = services.sheet_seal(sheet_id=sheet.pk)
    assert sealed is not None and sealed.status == SheetStatus.SEALED
    return sealed


def test_pages_carry_header_numbers_contents_and_repeated_table_headers(
    evaluation, tmp_path, layout
) -> None:
    # Enough actions that the matrix runs over several pages.
    make_actions(
        evaluation["alpha"],
        [(f"extra-{n:03d}", "real_task") for n in range(90)],
        feature="Scheduling",
        dimension="scheduling",
    )
    sheet = rendered(evaluation, "en", layout="full")
    draft = tmp_path / "draft.pdf"
    draft.write_bytes(sheet.pdf.read())
    pages = _pages(draft)
    total = len(pages)
    assert total == sheet.page_count and total >= 4
    info = subprocess.run(["pdfinfo", str(draft)], capture_output=True, text=True).stdout
    assert "(A4)" in info, info

    for number, page in enumerate(pages, start=1):
        lines = [line for line in page.splitlines() if line.strip()]
        # Running header: project, revision and the start of the content hash, on every page.
        assert "Alpha · r1" in lines[0] and f"sha256 {sheet.sha256}" in lines[0], lines[0]
        assert lines[-1].replace(" ", "") == f"{number}/{total}"  # "n / N" in the footer

    # The first page is the summary; the contents follow on their own page.
    assert "Summary" in pages[0] and "Outcomes per candidate" in pages[0]
    contents = pages[1]
    for entry in (
        "Summary",
        "Framing",
        "Shortlist",
        "Results matrix",
        "Evidence index",
        "Sign-off",
    ):
        assert entry in contents
    # The contents give the page each section starts on, the sign-off page included.
    listed = {
        found.group(1): int(found.group(2))
        for found in re.finditer(
            r"^[ \t]*(\S[^.\n]*?)[ \t]*\.{3,}[ \t]*(\d+)[ \t]*$", contents, re.M
        )
    }
    starts = {
        "Summary": 1,
        "Results matrix": next(n for n, p in enumerate(pages, 1) if "extra-000" in p),
        "Volcano": next(n for n, p in enumerate(pages, 1) if "Failures and their causes" in p),
        "Sign-off": total,
    }
    assert {k: listed.get(k) for k in starts} == starts, contents
    # The matrix spans pages, and each of them repeats the column headings.
    spanning = pages[starts["Results matrix"] - 1 : starts["Volcano"] - 1]
    assert len(spanning) >= 2
    # Columns carry product names, rows the business question (the key small, as a reference).
    assert all("Acceptance action" in p and "Volcano" in p for p in spanning)
    assert "extra-000? extra-000" in " ".join(pages[starts["Results matrix"] - 1].split())
    # The draft says it awaits sign-off on its last page, naming the roles.
    assert "awaiting sign-off" in pages[-1]
    assert "Operations" in pages[-1] and "ops" not in pages[-1].split()
    assert "Each person decides for one role only." in pages[-1]
    # Each candidate's counts read in the usual order: passed, failed, not covered, integration.
    volcano = pages[starts["Volcano"] - 1]
    assert re.search(r"Passed\s+Failed\s+Not covered\s+Needs integration", volcano), volcano


def test_a_sealed_sheet_verifies_in_browser_api_and_command(
    evaluation, login, tmp_path, settings, layout
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000  # a sealed sheet is larger: still verified
    sheet = _seal(evaluation, rendered(evaluation, "zh-hans"))
    sealed_bytes = sheet.sealed_pdf.read()
    sealed = tmp_path / "sealed.pdf"
    sealed.write_bytes(sealed_bytes)
    last = _pages(sealed)[-1]
    for person, _role in SIGNERS:  # the sign-off page lists every signer with the decision
        assert evaluation[person].get_username() in last
    assert "ok from procurement" in last
    assert "自签名" in last  # a self-signed certificate says so on the sheet
    # The sign-off page took the placeholder's place: same page count, the contents link and
    # the bookmark lead to it, and nothing of the placeholder is left in the file.
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(sealed_bytes))
    assert len(reader.pages) == sheet.page_count
    signoff_dest = reader.named_destinations["signoff"]
    assert reader.get_destination_page_number(signoff_dest) == sheet.page_count - 1

    def flat(outline: list) -> list:
        return [x for item in outline for x in (flat(item) if isinstance(item, list) else [item])]

    bookmarks = {b.title: reader.get_destination_page_number(b) for b in flat(reader.outline)}
    assert bookmarks["签核"] == sheet.page_count - 1
    draft_text = "".join(p.extract_text() for p in PdfReader(sheet.pdf.open("rb")).pages)
    sealed_text = "".join(p.extract_text() for p in reader.pages)
    assert "草稿：" in draft_text and "草稿：" not in sealed_text

    # Browser: upload to the verify page.
    client = login(evaluation["bob"])
    page = client.post(
        reverse("reports:verify"), {"file": io.BytesIO(sealed_bytes)}, format="multipart"
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "✓" in html and "Workbench Test Organisation" in html and "alpha r1" in html
    assert "Signed with this workbench's certificate</dt><dd>yes" in html

    # API: raw body and multipart give the same report.
    api = APIClient()
    api.force_login(evaluation["bob"])
    raw = api.post("/api/v1/sheets/verify/", sealed_bytes, content_type="application/pdf").json()
    multipart = api.post(
        "/api/v1/sheets/verify/", {"file": io.BytesIO(sealed_bytes)}, format="multipart"
    ).json()
    assert raw == multipart
    assert raw["valid"] and raw["intact"] and raw["covers_whole_file"], raw
    assert (raw["project"], raw["revision"], raw["content_sha256"]) == ("alpha", 1, sheet.sha256)
    assert raw["matches_stored_snapshot"] is True and raw["trusted_signer"] is True
    assert raw["signed_at"].startswith(str(sheet.sealed_at.year))

    # Command line: exit status 0 and the report; a truncated copy fails with its reason.
    out = io.StringIO()
    call_command("verify_sheet", str(sealed), stdout=out)
    assert '"valid": true' in out.getvalue()
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(sealed_bytes[: len(sealed_bytes) - 2000])
    with pytest.raises(CommandError, match="invalid"):
        call_command("verify_sheet", str(truncated), stdout=io.StringIO())
    pdfsig = subprocess.run(["pdfsig", str(truncated)], capture_output=True, text=True)
    assert "Signature is Valid." not in pdfsig.stdout  # the independent verifier agrees
    cut = api.post("/api/v1/sheets/verify/", sealed_bytes[:-2000], content_type="application/pdf")
    assert cut.status_code == 200 and cut.json()["valid"] is False and cut.json()["problems"]
    with pytest.raises(CommandError, match="cannot read"):
        call_command("verify_sheet", str(tmp_path / "missing.pdf"))


def test_a_non_member_learns_nothing_about_stored_revisions(evaluation, login) -> None:
    sheet = _seal(evaluation, rendered(evaluation, "en"))
    sealed_bytes = sheet.sealed_pdf.read()
    outsider = APIClient()
    outsider.force_login(evaluation["charlie"])  # a member of beta only
    report = outsider.post(
        "/api/v1/sheets/verify/", sealed_bytes, content_type="application/pdf"
    ).json()
    assert report["intact"] is True  # the signature is a fact about the file itself
    assert report["matches_stored_snapshot"] is None
    assert not any("stored" in p for p in report["problems"])
    page = login(evaluation["charlie"]).post(
        reverse("reports:verify"), {"file": io.BytesIO(sealed_bytes)}
    )
    assert "not checked" in page.content.decode()


def test_downloads_give_the_draft_then_the_sealed_file_to_members_only(
    evaluation, login, caplog
) -> None:
    sheet = rendered(evaluation, "en")
    token, _t, _raw = token_client(evaluation["alpha"])
    url = reverse("reports:sheet_pdf", kwargs={"slug": "alpha", "revision": 1})
    member = login(evaluation["bob"])
    draft = b"".join(member.get(url).streaming_content)
    assert draft == sheet.pdf.read()
    assert b"".join(token.get(f"/api/v1/sheets/{sheet.pk}/pdf").streaming_content) == draft

    sheet = _seal(evaluation, sheet)
    sealed = sheet.sealed_pdf.read()
    response = member.get(url)
    assert response["Content-Disposition"].startswith("attachment;")
    assert "signed" in response["Content-Disposition"]
    assert b"".join(response.streaming_content) == sealed != draft
    assert b"".join(token.get(f"/api/v1/sheets/{sheet.pk}/pdf").streaming_content) == sealed

    assert login(evaluation["charlie"]).get(url).status_code == 404
    other, _t, _raw = token_client(evaluation["beta"])
    assert other.get(f"/api/v1/sheets/{sheet.pk}/pdf").status_code == 404
    # A file gone from storage is a clear 404, not a server error.
    sheet.sealed_pdf.storage.delete(sheet.sealed_pdf.name)
    with caplog.at_level("ERROR", logger="reports.selectors"):
        assert member.get(url).status_code == 404
        assert token.get(f"/api/v1/sheets/{sheet.pk}/pdf").status_code == 404
    assert "missing from storage" in caplog.text  # and the operators are told
    assert other.get(f"/api/v1/sheets/{sheet.pk}/pdf").status_code == 404
    assert other.get(f"/api/v1/sheets/{sheet.pk}/").status_code == 404


def test_the_snapshot_freezes_everything_the_sheet_shows(evaluation, tmp_path) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from evaluations import services as evaluation_services
    from poc.models import (
        ResultCell,
    )
    from tests.factories import CandidateFactory

    alpha, volcano = evaluation["alpha"], evaluation["volcano"]
    slurm = CandidateFactory(project=alpha, solution_key="slurm")
    evaluation_services.candidate_update(
        candidate=slurm,
        actor=None,
        tier="not_applicable",
        decided_by_step="infrastructure",
        reason="没有 Slurm 运维经验",
    )
    poc_services.responsibility_set(
        candidate=volcano, area="upgrade_rollback", party="vendor", person="Li Wei", actor=None
    )
    terms_record(
        candidate=volcano,
        changes=[
            TermChange("licence_spdx", "Apache-2.0", basis="list_price", source="LICENSE file"),
            TermChange("exit_notes", "plain Kubernetes"),
        ],
        actor=None,
    )
    cell = ResultCell.objects.select_related("result").get(
        candidate=volcano, action=evaluation["actions"][1]
    )
    evidence = poc_services.evidence_attach_file(
        result=cell.result,
        upload=SimpleUploadedFile("job.log", b"step 40: stuck\n"),
        actor=evaluation["bob"],
    )
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=None
    )
    s = sheet.snapshot

    assert s["project"]["slug"] == "alpha"
    assert set(s["project"]) >= {"workloads", "existing_base", "layer_needed", "supplier_needs"}
    shortlist = {c["slug"]: c for c in s["shortlist"]}
    assert shortlist["slurm"]["tier"] == "not_applicable"
    assert shortlist["slurm"]["reason"] == "没有 Slurm 运维经验"
    # The not-applicable tier stays on the shortlist page and out of the comparison.
    frozen = {c["slug"]: c for c in s["candidates"]}
    assert list(frozen) == ["volcano"] and sheet.candidate_slugs == ["volcano"]
    v = frozen["volcano"]
    assert v["failed"] == [
        {
            "action": "real-job",
            "question": "real-job?",
            "importance": "must",
            "cause": "训练作业在第 40 步卡住",
        }
    ]
    assert v["needs_integration"] == [
        {
            "action": "cross-tenant",
            "question": "cross-tenant?",
            "what": "LDAP groups",
            "owner_team": "Platform",
            "effort_days": "3.5",
            "delivery": "",
            "delivered_by": "",
        }
    ]
    assert [(r["area"], r["party"], r["person"]) for r in v["responsibilities"]] == [
        ("Upgrade and rollback", "Vendor", "Li Wei")
    ]
    assert "Upgrade and rollback" not in v["gaps"] and len(v["gaps"]) == 10
    terms = {row["key"]: row for group in v["terms"] for row in group["rows"]}
    assert (terms["licence_spdx"]["value"], terms["licence_spdx"]["basis"]) == (
        "Apache-2.0",
        "list_price",
    )
    assert terms["licence_spdx"]["source"] == "LICENSE file"
    assert not terms["licence_spdx"]["to_confirm"]
    assert terms["exit_notes"]["value"] == "plain Kubernetes"
    assert terms["support_hours"] == {**terms["support_hours"], "value": "", "to_confirm": True}
    open_terms = {item["term"] for item in s["to_confirm"]}
    assert "Support hours" in open_terms and "Licence (SPDX expression)" not in open_terms
    assert "Exit notes" not in open_terms  # notes are never to be confirmed
    assert s["matrix"]["columns"] == ["volcano"]
    assert [a["key"] for a in s["matrix"]["actions"]] == ["quota-hit", "real-job", "cross-tenant"]
    assert s["matrix"]["rows"] == [["passed"], ["failed"], ["needs_integration"]]
    (indexed,) = s["evidence"]
    assert indexed["name"] == "job.log" and indexed["sha256"] == evidence.sha256
    assert (indexed["candidate_name"], indexed["question"]) == ("Volcano", "real-job?")
    assert indexed["recorded_by"] == "bob" and indexed["recorded_at"]

    # A sheet for chosen candidates freezes only those, with the whole shortlist for context;
    # a not-applicable one is there when chosen.
    chosen = services.sheet_generate(
        acknowledgement="known gaps",
        project=alpha,
        language="en",
        actor=None,
        candidate_slugs=["slurm"],
    )
    assert [c["slug"] for c in chosen.snapshot["candidates"]] == ["slurm"]
    assert chosen.snapshot["candidates"][0]["not_covered"] == [
        {"action": "quota-hit", "question": "quota-hit?"},
        {"action": "real-job", "question": "real-job?"},
        {"action": "cross-tenant", "question": "cross-tenant?"},
    ]
    assert chosen.snapshot["matrix"]["columns"] == ["slurm"]
    assert len(chosen.snapshot["shortlist"]) == 2
    assert chosen.snapshot["evidence"] == []

    # Moving the project on to its review phase is no change to what the sheet shows...
    Project.objects.filter(pk=alpha.pk).update(phase="review")
    assert not services.sheet_is_stale(Sheet.objects.get(pk=sheet.pk))
    # ...but changing anything it shows makes it stale; the stored sheet never changes.
    before = Sheet.objects.get(pk=sheet.pk).snapshot_json
    terms_record(candidate=volcano, changes=[TermChange("exit_notes", "none yet")], actor=None)
    assert services.sheet_is_stale(Sheet.objects.get(pk=sheet.pk))
    assert Sheet.objects.get(pk=sheet.pk).snapshot_json == before
    assert Project.objects.get(pk=alpha.pk).sheets.count() == 2


def test_a_failed_rendering_is_recorded_and_can_be_retried(evaluation, login, monkeypatch) -> None:
    from reports import rendering

    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )

    def broken(html: str, **options: object) -> rendering.Rendered:
        raise OSError("disk full")

    monkeypatch.setattr(rendering, "html_to_pdf", broken)
    failed = services.sheet_render(sheet_id=sheet.pk)
    assert failed.status == SheetStatus.FAILED and "disk full" in failed.error
    assert not failed.pdf
    client = login(evaluation["bob"])
    page = client.get(reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1}))
    assert "disk full" in page.content.decode()
    monkeypatch.undo()
    # A failed sheet is not taken up again by chance (a redelivered job); a retry queues it.
    assert services.sheet_render(sheet_id=sheet.pk).status == SheetStatus.FAILED
    assert services.sheet_retry(sheet=sheet, actor=evaluation["bob"]) == "render"
    assert services.sheet_render(sheet_id=sheet.pk).status == SheetStatus.READY


def test_the_sheet_page_polls_while_rendering_and_marks_stale_revisions(evaluation, login) -> None:
    client = login(evaluation["bob"])
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    url = reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1})
    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.RENDERING, progress=40)
    polling = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert 'hx-trigger="every 1s"' in polling and 'aria-valuenow="40"' in polling

    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.READY, progress=100)
    assert "Your decision as Operations" in client.get(url).content.decode()
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][2],
        outcome="passed",
        change_reason="LDAP sync shipped",
        actor=None,
    )
    page = client.get(url).content.decode()
    assert "The project changed after this revision was frozen" in page
    # The signer reads what changed since the freeze, and may still decide on what it froze.
    since = page[page.index('id="since-freeze"') :]
    assert "Changed since r1 was frozen" in since
    assert "Needs integration" in since and "Passed" in since
    assert "Your decision as Operations" in page
    decided = client.post(url, {"role": "ops", "sheet_sha256": sheet.sha256, "decision": "approve"})
    assert decided.status_code == 302
    assert "after later changes" in client.get(url).content.decode()


def test_a_file_signed_by_someone_else_is_not_a_sealed_sheet(
    evaluation, login, settings, tmp_path
) -> None:
    from reports import signing
    from reports.verify import verify_pdf

    sheet = _seal(evaluation, rendered(evaluation, "en"))
    organisation = signing.signing_identity()
    # Someone takes the draft (its identity and content hash are in its metadata) and signs
    # it with a key of their own: intact, but not sealed by this workbench.
    signing.create_self_signed_p12(
        tmp_path / "other.p12", "other", subject="Somebody Else", algorithm="ec"
    )
    settings.SHEET_SIGNING_P12, settings.SHEET_SIGNING_PASSPHRASE = (
        str(tmp_path / "other.p12"),
        "other",
    )
    forged = signing.sign_pdf(sheet.pdf.read(), signing.signing_identity(), reason="forged")
    report = verify_pdf(forged, trusted_pem=organisation.certificate_pem)
    assert report.intact and report.matches_stored_snapshot is True
    assert report.trusted_signer is False and report.matches_sealed_file is False
    assert not report.valid and "not a sheet it sealed" in " ".join(report.problems)

    # The organisation has since rotated its certificate: the file it sealed is still
    # recognised, byte for byte, by members; outsiders only learn that the signer is unknown.
    genuine = sheet.sealed_pdf.read()
    rotated = verify_pdf(genuine, trusted_pem=signing.signing_identity().certificate_pem)
    assert rotated.valid and rotated.trusted_signer is False and rotated.matches_sealed_file
    api = APIClient()
    api.force_login(evaluation["charlie"])
    outside = api.post("/api/v1/sheets/verify/", genuine, content_type="application/pdf").json()
    assert outside["valid"] is False and outside["matches_sealed_file"] is None
    assert "not a sheet it sealed" in outside["problems"][-1]
    assert "file it stores" not in outside["problems"][-1]  # nothing was compared for them


def test_crafted_metadata_and_headers_get_answers_not_errors(evaluation) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_metadata(
        {"/Keywords": f"workbench-sheet;project=alpha;revision={'9' * 5000};sha256={'a' * 64}"}
    )
    crafted = io.BytesIO()
    writer.write(crafted)
    api = APIClient()
    api.force_login(evaluation["bob"])
    answer = api.post("/api/v1/sheets/verify/", crafted.getvalue(), content_type="application/pdf")
    assert answer.status_code == 200 and answer.json()["valid"] is False
    assert answer.json()["revision"] is None
    bad_length = api.post(
        "/api/v1/sheets/verify/", b"%PDF-", content_type="application/pdf", CONTENT_LENGTH="many"
    )
    assert bad_length.status_code == 400


def test_a_sheet_allowing_one_signer_several_roles_says_so_on_its_sign_off_page(
    evaluation,
) -> None:
    Project.objects.filter(pk=evaluation["alpha"].pk).update(one_signer_many_roles=True)
    sheet = rendered(evaluation)
    assert sheet.one_signer_many_roles
    allowed = "This project allowed one person to sign for several roles of this revision."
    assert allowed in " ".join(_pages(Path(sheet.pdf.path))[-1].split())
    sealed = _seal(evaluation, sheet)
    last = " ".join(_pages(Path(sealed.sealed_pdf.path))[-1].split())
    assert allowed in last and "Sealed with the digital signature of" in last


def test_the_evidence_index_lists_what_the_frozen_results_hold(evaluation) -> None:
    """Three nightly runs attach a log each: the sheet indexes the latest result's, not all."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    volcano, action = evaluation["volcano"], evaluation["actions"][1]
    for night in range(3):
        result = poc_services.result_record(
            candidate=volcano,
            action=action,
            outcome="failed",
            failure_cause=f"night {night}: stuck at step 40",
            change_reason="nightly run",
            actor=None,
        )
        poc_services.evidence_attach_file(
            result=result,
            upload=SimpleUploadedFile(f"night-{night}.log", f"night {night}\n".encode()),
            actor=evaluation["bob"],
        )
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    assert [e["name"] for e in sheet.snapshot["evidence"]] == ["night-2.log"]


def test_the_first_page_gives_the_recommendation_and_the_picture(evaluation) -> None:
    from evaluations.services import project_recommendation_set

    alpha = evaluation["alpha"]
    with pytest.raises(ValidationError, match="Say why"):
        project_recommendation_set(
            project=alpha, candidates=["volcano"], conditions="", reason=" ", actor=None
        )
    with pytest.raises(ValidationError, match="Unknown candidates"):
        project_recommendation_set(
            project=alpha, candidates=["nobody"], conditions="", reason="x", actor=None
        )
    project_recommendation_set(
        project=alpha,
        candidates=["volcano"],
        conditions="LDAP 组同步在上线前完成",
        reason="Queues and quotas behaved as configured under load.",
        actor=evaluation["alice"],
    )
    sheet = rendered(evaluation, "zh-hans", layout="full")
    summary = sheet.snapshot["scenario_coverage"]
    assert len(summary["scenarios"]) == 4 and summary["candidates"][0]["name"].startswith("Volcano")
    cells = summary["candidates"][0]["cells"]
    assert sum(cell["total"] for cell in cells) == 3  # the three actions are of required kinds
    assert sheet.snapshot["candidates"][0]["effort_by_team"] == [{"team": "平台", "days": "3.5"}]
    first = " ".join(_pages(Path(sheet.pdf.path))[0].split())
    assert "摘要" in first and "推荐" in first and "Volcano" in first
    assert "Queues and quotas behaved as configured under load." in first
    assert "LDAP 组同步在上线前完成" in first
    assert "训练作业在第 40 步卡住" in first  # the failure, with its question
    assert "real-job?" in first
    assert "平台 3.5" in first
