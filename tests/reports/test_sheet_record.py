"""The sheet as a decision document with the whole record sealed inside it: the short body in
both languages, the files attached to the PDF, their survival through the seal, and their
place in verification."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from reports import attachments, decision, services
from reports.models import Sheet, SheetStatus
from reports.verify import verify_pdf
from tests.poc.api_helpers import token_client
from tests.reports.helpers import approve_all, rendered

pytestmark = pytest.mark.django_db

NAMES = ("evidence.csv", "probe-facts.json", "results.csv", "results.xlsx", "snapshot.json")


def _text(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_the_decision_document_in_english(evaluation, tmp_path) -> None:
    sheet = rendered(evaluation, "en")
    text = _text(_write(tmp_path, "en.pdf", sheet.pdf.read()))
    first = text.split("\f")[0]
    # The first page: the decision, whether the review was ready, the candidates at a glance.
    assert "Decision" in first and "The candidates at a glance" in first
    assert "Generated before the review was ready" in first
    assert "responsibility areas unassigned" in first
    assert "To sign, each on this exact revision" in first
    # The exceptions with their reasons; the record named at the end.
    assert "训练作业在第 40 步卡住" in text and "LDAP groups" in text
    assert "Risk register" in text and "Must-have failed" in text
    for name in NAMES:
        assert f"alpha-r1-{name}" in text
    assert "How to verify this file" in text
    # Not the full listing: no results matrix, no evidence index.
    assert "Results matrix" not in text and "Evidence index" not in text


def test_the_decision_document_in_chinese(evaluation, tmp_path) -> None:
    sheet = rendered(evaluation, "zh-hans")
    text = _text(_write(tmp_path, "zh.pdf", sheet.pdf.read()))
    for word in ("决定", "候选方案一览", "记分卡", "例外", "风险登记", "如何验证本文件"):
        assert word in text, word
    for english in ("Decision", "Scorecards", "Risk register", "The record", "Must-have failed"):
        assert english not in text, english


def test_the_record_is_attached_listed_once_and_survives_the_seal(evaluation, tmp_path) -> None:
    sheet = rendered(evaluation, "en")
    draft = sheet.pdf.read()
    path = _write(tmp_path, "draft.pdf", draft)
    listed = subprocess.run(
        ["pdfdetach", "-list", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert listed.startswith(f"{len(NAMES)} embedded files")
    files = {f["name"]: f for f in attachments.embedded(draft)}
    assert sorted(files) == [f"alpha-r1-{name}" for name in NAMES]
    # Each listed once among the document's associated files, with its relationship.
    assert {f["in_af"] for f in files.values()} == {1}
    assert files["alpha-r1-snapshot.json"]["relationship"] == "Source"
    assert {f["relationship"] for n, f in files.items() if "snapshot" not in n} == {"Data"}
    assert all(f["description"] for f in files.values())
    # The attached snapshot is the frozen one, byte for byte (pdfdetach agrees).
    subprocess.run(
        [
            "pdfdetach",
            "-savefile",
            "alpha-r1-snapshot.json",
            "-o",
            str(tmp_path / "s.json"),
            str(path),
        ],
        check=True,
    )
    assert (tmp_path / "s.json").read_bytes() == sheet.snapshot_json.encode()
    results = files["alpha-r1-results.csv"]["data"].decode("utf-8-sig").splitlines()
    matrix = sheet.snapshot["matrix"]
    assert len(results) == 1 + len(matrix["actions"]) * len(matrix["columns"])
    assert any("训练作业在第 40 步卡住" in line for line in results)
    # Made from the snapshot alone: the same bytes every time.
    again = {f.name: f.sha256 for f in attachments.sheet_attachments(sheet)}
    assert again == {name: f["sha256"] for name, f in files.items()}

    approve_all(evaluation, sheet)
    sheet = services.sheet_seal(sheet_id=sheet.pk)
    assert sheet.status == SheetStatus.SEALED, sheet.seal_error
    sealed = sheet.sealed_pdf.read()
    assert {f["name"]: f["sha256"] for f in attachments.embedded(sealed)} == {
        name: f["sha256"] for name, f in files.items()
    }
    report = verify_pdf(sealed)
    assert report.valid, report.problems
    assert report.snapshot_attached_matches is True
    assert [a["name"] for a in report.attachments] == sorted(files)
    assert report.attachments[0]["sha256"] == files[report.attachments[0]["name"]]["sha256"]

    # One byte changed inside an attached file breaks the seal for both verifiers.
    start = sealed.index(b"stream", sealed.index(b"/EmbeddedFile")) + 20
    tampered = bytearray(sealed)
    tampered[start] ^= 0x01
    target = _write(tmp_path, "tampered.pdf", bytes(tampered))
    assert not verify_pdf(bytes(tampered)).valid
    pdfsig = subprocess.run(["pdfsig", str(target)], capture_output=True, text=True)
    assert "Signature is Valid." not in pdfsig.stdout


def test_the_verify_page_and_api_list_the_attached_files(evaluation, login) -> None:
    sheet = rendered(evaluation, "en")
    approve_all(evaluation, sheet)
    sealed = services.sheet_seal(sheet_id=sheet.pk).sealed_pdf.read()
    client, _token, _raw = token_client(evaluation["alpha"])
    answer = client.post("/api/v1/sheets/verify/", sealed, content_type="application/pdf").json()
    assert [a["name"] for a in answer["attachments"]] == [f"alpha-r1-{n}" for n in NAMES]
    assert answer["snapshot_attached_matches"] is True and answer["valid"] is True
    import io

    page = login(evaluation["bob"]).post(reverse("reports:verify"), {"file": io.BytesIO(sealed)})
    assert "alpha-r1-results.xlsx" in page.content.decode()


def test_a_record_over_the_limit_fails_the_render_saying_the_sizes(evaluation, settings) -> None:
    settings.SHEET_ATTACHMENTS_MAX_BYTES = 2000
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    sheet = services.sheet_render(sheet_id=sheet.pk)
    assert sheet.status == SheetStatus.FAILED
    assert "The record to attach is" in sheet.error and "the limit is 0.0 MB" in sheet.error
    assert "alpha-r1-" in sheet.error  # the largest file, named


def test_print_every_result_is_a_layout_of_its_own(evaluation, login) -> None:
    page = login(evaluation["alice"]).post(
        reverse("reports:sheets", kwargs={"slug": "alpha"}),
        {"language": "en", "print_every_result": "on", "acknowledgement": "known gaps"},
    )
    assert page.status_code in (200, 302)
    assert Sheet.objects.get(project=evaluation["alpha"]).layout == "full"
    client, _token, _raw = token_client(evaluation["alpha"])
    made = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json")
    assert made.status_code == 202, made.content
    assert made.json()["layout"] == "decision"
    bad = client.post(
        "/api/v1/projects/alpha/sheets/", {"language": "en", "layout": "poster"}, format="json"
    )
    assert bad.status_code == 400 and "layout" in json.dumps(bad.json())


def _snapshot(outcomes: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    """A frozen snapshot of one candidate, one action per (importance, outcome)."""
    actions = [
        {
            "key": f"a{i}",
            "question": f"question {i}?",
            "dimension": "Scheduling semantics",
            "importance": importance,
            "owner_team": "Platform",
            "scenario": "Real task",
        }
        for i, (importance, _o) in enumerate(outcomes)
    ]
    return {
        "candidates": [
            {
                "slug": "v",
                "solution": "Volcano",
                "version": "1.9",
                "counts": {},
                "failed": [
                    {"action": f"a{i}", "cause": f"cause {i}"}
                    for i, (_imp, o) in enumerate(outcomes)
                    if o == "failed"
                ],
                "needs_integration": [],
                "gaps": [],
                "untried": 0,
            }
        ],
        "matrix": {"actions": actions, "columns": ["v"], "rows": [[o] for _i, o in outcomes]},
        "evidence": [],
        "recommendation": {"candidates": [], "conditions": ""},
        **extra,
    }


def test_more_exceptions_than_fit_are_counted_and_named_in_the_attachment() -> None:
    outcomes = [("should", "failed")] * 20 + [("must", "failed")] * 10 + [("must", "not_covered")]
    snapshot = _snapshot(outcomes)
    (card,) = decision.decision_context(snapshot)["cards"]
    (group,) = card["groups"]
    assert len(group.exceptions) == decision.GROUP_LIMIT
    # Must-haves first, then the rest in the suite's order.
    assert [x["must"] for x in group.exceptions[:10]] == [True] * 10
    assert group.exceptions[10]["key"] == "a0"
    assert group.exceptions_more == {"failed": 5, "needs_integration": 0}
    assert [n["key"] for n in group.not_covered] == ["a30"] and group.not_covered_more == 0
    assert card["must"]["failed"] == 10 and card["must_total"] == 11
    # The risk register names five failed must-haves and counts the others.
    risks = [
        r for r in decision.decision_context(snapshot)["risks"] if r["risk"] == "Must-have failed"
    ]
    assert len(risks) == decision.RISKS_PER_KIND + 1
    assert risks[-1]["detail"] == "and 5 more failed must-haves, listed under Exceptions"
    # The attachment names every one of them.
    rows = attachments.results_rows(snapshot)
    assert len(rows) == 1 + len(outcomes)
    assert sum(str(r[7]) == "Failed" for r in rows[1:]) == 30


def test_readiness_names_each_gap_and_a_ready_review_has_none() -> None:
    ready = _snapshot([("must", "passed")], costs={"candidates": []}, to_confirm=[])
    assert decision.readiness(ready) == []
    lacking = _snapshot([("must", "passed")], costs=None, to_confirm=[{"slug": "v"}])
    lacking["candidates"][0].update(untried=2, gaps=["Upgrades", "On-call"])
    assert decision.readiness(lacking) == [
        "Volcano 1.9: 2 actions have no result",
        "Volcano 1.9: 2 responsibility areas unassigned",
        "No cost model: the total cost of the candidates is unknown",
        "1 item still to be confirmed",
    ]


def _pdfa_problems(pdf: bytes) -> list[str]:
    """What PDF/A-3b asks of the structure, checked without a validator (none is packaged for
    this platform): identification and output intent, no encryption, the document information
    agreeing with the XMP metadata, and every embedded file associated the way part 3 asks."""
    import io
    import re

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    root = reader.trailer["/Root"]
    problems = []
    if "/Encrypt" in reader.trailer:
        problems.append("encrypted")
    xmp = root["/Metadata"].get_object().get_data().decode()

    def xmp_value(name: str) -> str | None:
        found = re.search(rf'{name}="([^"]*)"', xmp) or re.search(
            rf"<{name}[^>]*>(?:<rdf:Alt><rdf:li[^>]*>)?([^<]*)<", xmp
        )
        return found.group(1) if found else None

    if (xmp_value("pdfaid:part"), xmp_value("pdfaid:conformance")) != ("3", "B"):
        problems.append("no PDF/A-3b identification in the XMP")
    intents = [i.get_object() for i in root.get("/OutputIntents", [])]
    if not any(i.get("/S") == "/GTS_PDFA1" and "/DestOutputProfile" in i for i in intents):
        problems.append("no PDF/A output intent with an ICC profile")
    info = reader.metadata or {}
    for key, name in (
        ("/Title", "dc:title"),
        ("/Keywords", "pdf:Keywords"),
        ("/Producer", "pdf:Producer"),
    ):
        if key in info and xmp_value(name) != str(info[key]):
            problems.append(f"{key} {info[key]!r} differs from XMP {name} {xmp_value(name)!r}")
    listed = [r.idnum for r in root.get("/AF", [])]
    tree = root["/Names"]["/EmbeddedFiles"]["/Names"]
    for i in range(1, len(tree), 2):
        spec = tree[i].get_object()
        name = str(spec["/UF"])
        if listed.count(tree[i].idnum) != 1:
            problems.append(f"{name} listed {listed.count(tree[i].idnum)} times in /AF")
        if str(spec.get("/AFRelationship")) not in ("/Data", "/Source"):
            problems.append(f"{name}: relationship {spec.get('/AFRelationship')}")
        if not spec.get("/Desc") or "/F" not in spec:
            problems.append(f"{name}: no description or file name")
        stream = spec["/EF"]["/F"].get_object()
        if "/Subtype" not in stream or "/ModDate" not in stream.get("/Params", {}):
            problems.append(f"{name}: no media type or modification date")
    return problems


def test_the_decision_document_has_the_pdfa_3b_structure_before_and_after_the_seal(
    evaluation,
) -> None:
    sheet = rendered(evaluation, "zh-hans")
    draft = sheet.pdf.read()
    assert _pdfa_problems(draft) == []
    approve_all(evaluation, sheet)
    sealed = services.sheet_seal(sheet_id=sheet.pk).sealed_pdf.read()
    assert _pdfa_problems(sealed) == []
    report = verify_pdf(sealed)
    assert report.valid and report.project == "alpha", report.problems
    # The check finds what it looks for: a file whose information disagrees with its XMP.
    from io import BytesIO

    from pypdf import PdfReader, PdfWriter

    changed = PdfWriter(clone_from=PdfReader(BytesIO(draft)))
    changed.add_metadata({"/Title": "Another title"})
    out = BytesIO()
    changed.write(out)
    assert any("/Title" in p for p in _pdfa_problems(out.getvalue()))
