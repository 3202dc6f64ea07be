"""Procurement sheets: frozen snapshots, sign-off rules, PDF in Chinese, seal and verify."""

import re
import subprocess
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from evaluations.models import Project
from poc import services as poc_services
from reports import selectors, services
from reports.models import Sheet, SheetStatus, SignOff
from reports.snapshot import snapshot_and_hash
from reports.verify import verify_pdf

pytestmark = pytest.mark.django_db


def _ready(sheet: Sheet) -> Sheet:
    """Mark a sheet rendered without spending seconds on a PDF (the rules do not need one)."""
    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.READY)
    sheet.refresh_from_db()
    return sheet


def _sign(sheet: Sheet, user: Any, role: str, decision: str = "approve") -> SignOff:
    return services.signoff_record(
        sheet=sheet, user=user, role=role, decision=decision, sheet_sha256=sheet.sha256
    )


def test_revisions_and_a_stable_hash(evaluation) -> None:
    alpha = evaluation["alpha"]
    first = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=evaluation["alice"]
    )
    second = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=evaluation["alice"]
    )
    assert (first.revision, second.revision) == (1, 2)
    assert first.sha256 == second.sha256  # nothing changed in between
    _snapshot, text, digest = snapshot_and_hash(alpha, language="en", candidate_slugs=[])
    assert digest == first.sha256 and text == first.snapshot_json
    candidate = first.snapshot["candidates"][0]
    assert candidate["counts"] == {
        "passed": 1,
        "failed": 1,
        "not_covered": 0,
        "needs_integration": 1,
    }
    assert candidate["integration_total_days"] == "3.5"
    assert len(candidate["gaps"]) == 11
    assert not services.sheet_is_stale(first)
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][0],
        outcome="failed",
        failure_cause="regressed",
        change_reason="rerun",
        actor=None,
    )
    assert services.sheet_is_stale(first)


def test_generation_refuses_bad_input(evaluation) -> None:
    with pytest.raises(ValidationError):
        services.sheet_generate(
            acknowledgement="known gaps", project=evaluation["alpha"], language="fr", actor=None
        )
    with pytest.raises(ValidationError, match="Unknown candidates"):
        services.sheet_generate(
            acknowledgement="known gaps",
            project=evaluation["alpha"],
            language="en",
            actor=None,
            candidate_slugs=["nobody"],
        )
    assert not Sheet.objects.exists()


def test_signoff_rules(evaluation) -> None:
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps",
            project=evaluation["alpha"],
            language="en",
            actor=evaluation["bob"],
        )
    )
    with pytest.raises(PermissionDenied):  # bob is ops, not procurement
        _sign(sheet, evaluation["bob"], "procurement")
    with pytest.raises(ValidationError, match="another revision"):
        services.signoff_record(
            sheet=sheet,
            user=evaluation["bob"],
            role="ops",
            decision="approve",
            sheet_sha256="0" * 64,
        )
    assert not SignOff.objects.exists()
    with pytest.raises(ValidationError, match="A rejection needs a comment"):
        _sign(sheet, evaluation["procurement"], "procurement", "reject")
    with pytest.raises(ValidationError, match="A rejection needs a comment"):
        services.signoff_record(
            sheet=sheet,
            user=evaluation["procurement"],
            role="procurement",
            decision="reject",
            sheet_sha256=sheet.sha256,
            comment="  \n ",
        )
    assert not SignOff.objects.exists()
    services.signoff_record(
        sheet=sheet,
        user=evaluation["procurement"],
        role="procurement",
        decision="reject",
        sheet_sha256=sheet.sha256,
        comment="licence terms unclear",
    )
    with pytest.raises(ValidationError, match="already decided"):
        _sign(sheet, evaluation["procurement"], "procurement")
    # One person holding two roles decides for one of them: the other needs another signer.
    _sign(sheet, evaluation["alice"], "platform")
    with pytest.raises(ValidationError, match="You already decided on this revision as Platform"):
        _sign(sheet, evaluation["alice"], "architecture")
    _sign(sheet, evaluation["architecture"], "architecture")
    roles = dict(SignOff.objects.values_list("role", "user__username"))
    assert roles == {
        "procurement": "procurement-lead",
        "platform": "alice",
        "architecture": "architecture-lead",
    }


def test_an_outdated_revision_is_signed_for_what_it_froze_and_says_so(evaluation) -> None:
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
        )
    )
    _sign(sheet, evaluation["procurement"], "procurement")
    Project.objects.filter(pk=evaluation["alpha"].pk).update(description="changed afterwards")
    signoff = _sign(sheet, evaluation["bob"], "ops")
    assert signoff.after_changes and signoff.sheet_sha256 == sheet.sha256
    assert not SignOff.objects.get(role="procurement").after_changes
    (change,) = selectors.changes_since_freeze(Sheet.objects.get(pk=sheet.pk)).shown
    assert (change.subject, change.after) == ("Description", "changed afterwards")


def test_staleness_is_about_what_the_revision_froze(evaluation) -> None:
    """An edit to a candidate the revision does not cover leaves it signable as it was."""
    from tests.factories import CandidateFactory

    alpha = evaluation["alpha"]
    other = CandidateFactory(project=alpha, solution_key="slurm")
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps",
            project=alpha,
            language="en",
            actor=None,
            candidate_slugs=["volcano"],
        )
    )
    poc_services.responsibility_set(
        candidate=other, area="upgrade_rollback", party="vendor", person="Li Wei", actor=None
    )
    poc_services.result_record(
        candidate=other, action=evaluation["actions"][0], outcome="passed", actor=None
    )
    assert not services.sheet_is_stale(Sheet.objects.get(pk=sheet.pk))
    poc_services.responsibility_set(
        candidate=evaluation["volcano"],
        area="upgrade_rollback",
        party="vendor",
        person="Wang Fang",
        actor=None,
    )
    assert services.sheet_is_stale(Sheet.objects.get(pk=sheet.pk))


def test_one_admin_holding_every_role_cannot_seal_alone(evaluation) -> None:
    """Regression: a project admin granted themself the other roles and sealed a five-role
    sheet alone. Now the roles are granted too late, and one person signs one role anyway."""
    from evaluations.services import membership_set

    solo, alpha = evaluation["alice"], evaluation["alpha"]
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=alpha, language="en", actor=solo
        )
    )
    for role in ("procurement", "business", "ops"):
        membership_set(project=alpha, user=solo, role=role, actor=solo)
    _sign(sheet, solo, "platform")
    with pytest.raises(ValidationError, match="granted after this revision was generated"):
        _sign(sheet, solo, "procurement")
    with pytest.raises(ValidationError, match="already decided on this revision as Platform"):
        _sign(sheet, solo, "architecture")  # held from the start, but a second role
    # A revision generated after the grant: still one role per person.
    later = _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=alpha, language="en", actor=solo
        )
    )
    _sign(later, solo, "procurement")
    for role in ("platform", "architecture", "business", "ops"):
        with pytest.raises(ValidationError, match="one person decides for one role"):
            _sign(later, solo, role)
    assert SignOff.objects.filter(user=solo).count() == 2
    assert Sheet.objects.filter(status=SheetStatus.SEALING).count() == 0


def test_a_project_may_allow_one_signer_for_several_roles_but_not_the_generator_alone(
    evaluation,
) -> None:
    from evaluations.services import membership_set, project_signing_roles_set

    solo, alpha = evaluation["alice"], evaluation["alpha"]
    for role in ("procurement", "business", "ops"):
        membership_set(project=alpha, user=solo, role=role, actor=None)
    project_signing_roles_set(
        project=alpha,
        roles=list(alpha.signing_roles),
        one_signer_many_roles=True,
        actor=solo,
    )
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=alpha, language="en", actor=solo
        )
    )
    assert sheet.one_signer_many_roles
    for role in ("platform", "architecture", "procurement", "business"):
        _sign(sheet, solo, role)
    with pytest.raises(ValidationError, match="Separation of duties"):
        _sign(sheet, solo, "ops")
    _sign(sheet, evaluation["bob"], "ops")  # someone else completes it
    assert SignOff.objects.filter(sheet=sheet, decision="approve").count() == 5
    # The choice is frozen with each revision: turning it off does not change this one.
    project_signing_roles_set(project=alpha, roles=list(alpha.signing_roles), actor=solo)
    assert Sheet.objects.get(pk=sheet.pk).one_signer_many_roles
    assert not services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=solo
    ).one_signer_many_roles


def test_a_token_generated_revision_counts_its_creator_as_generator(evaluation) -> None:
    from evaluations.services import api_token_create, membership_set, project_signing_roles_set

    solo, alpha = evaluation["alice"], evaluation["alpha"]
    token, _raw = api_token_create(
        project=alpha, name="nightly", scopes=["results:write"], actor=solo
    )
    membership_set(project=alpha, user=solo, role="procurement", actor=None)
    project_signing_roles_set(
        project=alpha,
        roles=["platform", "architecture", "procurement"],
        one_signer_many_roles=True,
        actor=solo,
    )
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=alpha, language="en", actor=None, token=token
        )
    )
    assert sheet.generated_by is None and sheet.generated_by_token == token
    _sign(sheet, solo, "platform")
    _sign(sheet, solo, "architecture")
    with pytest.raises(ValidationError, match="Separation of duties"):
        _sign(sheet, solo, "procurement")
    _sign(sheet, evaluation["procurement"], "procurement")


def test_a_sheet_needs_a_shortlisted_candidate_and_an_action(evaluation) -> None:
    from evaluations.models import AcceptanceAction, Candidate
    from tests.factories import CandidateFactory, ProjectFactory

    alpha = evaluation["alpha"]
    Candidate.objects.filter(project=alpha).update(tier="not_applicable")
    with pytest.raises(ValidationError, match="No candidate is shortlisted"):
        services.sheet_generate(
            acknowledgement="known gaps", project=alpha, language="en", actor=None
        )
    # Chosen, a not-applicable candidate is covered.
    chosen = services.sheet_generate(
        acknowledgement="known gaps",
        project=alpha,
        language="en",
        actor=None,
        candidate_slugs=["volcano"],
    )
    assert chosen.candidate_slugs == ["volcano"]
    empty = ProjectFactory(slug="empty")
    with pytest.raises(ValidationError) as caught:
        services.sheet_generate(
            acknowledgement="known gaps", project=empty, language="en", actor=None
        )
    assert len(caught.value.messages) == 2
    assert "acceptance suite has no action" in caught.value.messages[1]
    CandidateFactory(project=empty, solution_key="volcano")
    with pytest.raises(ValidationError, match="acceptance suite has no action"):
        services.sheet_generate(
            acknowledgement="known gaps", project=empty, language="en", actor=None
        )
    assert not AcceptanceAction.objects.filter(project=empty).exists()
    assert Sheet.objects.count() == 1


def test_render_seal_and_verify_independently(evaluation, tmp_path) -> None:
    """One full pass (rendering takes seconds): Chinese PDF with embedded CJK fonts, five
    approvals, the PAdES seal, our verifier and poppler's pdfsig, and single-byte tampering."""
    sheet = services.sheet_generate(
        acknowledgement="known gaps",
        project=evaluation["alpha"],
        language="zh-hans",
        actor=evaluation["bob"],
    )
    sheet = services.sheet_render(sheet_id=sheet.pk)
    assert sheet.status == SheetStatus.READY, sheet.error
    draft = tmp_path / "draft.pdf"
    draft.write_bytes(sheet.pdf.read())
    fonts = subprocess.run(["pdffonts", str(draft)], capture_output=True, text=True, check=True)
    # name, type, encoding, then the "emb", "sub", "uni" columns and the object number/generation.
    listed = {line.split()[0]: line.split()[-5] for line in fonts.stdout.splitlines()[2:]}
    assert any("CJK" in name for name in listed), fonts.stdout
    assert set(listed.values()) == {"yes"}, fonts.stdout  # every font embedded, CJK included
    text = subprocess.run(
        ["pdftotext", str(draft), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "训练作业在第 40 步卡住" in text and "决定" in text

    for user, role in (
        (evaluation["alice"], "platform"),
        (evaluation["architecture"], "architecture"),
        (evaluation["procurement"], "procurement"),
        (evaluation["business"], "business"),
        (evaluation["bob"], "ops"),
    ):
        _sign(sheet, user, role)
    sheet = services.sheet_seal(sheet_id=sheet.pk)
    assert sheet.status == SheetStatus.SEALED
    sealed_bytes = sheet.sealed_pdf.read()
    sealed = tmp_path / "sealed.pdf"
    sealed.write_bytes(sealed_bytes)

    report = verify_pdf(sealed_bytes)
    assert report.valid and report.intact and report.covers_whole_file, report.problems
    assert (report.project, report.revision, report.content_sha256) == ("alpha", 1, sheet.sha256)
    assert report.matches_stored_snapshot is True
    assert "Workbench Test Organisation" in report.signer
    pdfsig = subprocess.run(["pdfsig", str(sealed)], capture_output=True, text=True)
    assert "Signature Validation: Signature is Valid." in pdfsig.stdout, pdfsig.stdout
    assert "Total document signed" in pdfsig.stdout
    signoff_text = subprocess.run(
        ["pdftotext", str(sealed), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "procurement-lead" in signoff_text

    # Flip one byte anywhere in the signed ranges: both verifiers must fail.
    for position in (len(sealed_bytes) // 10, len(sealed_bytes) // 2, len(sealed_bytes) - 100):
        tampered = bytearray(sealed_bytes)
        tampered[position] ^= 0x01
        target = tmp_path / f"tampered-{position}.pdf"
        target.write_bytes(bytes(tampered))
        ours = verify_pdf(bytes(tampered))
        assert not ours.valid, position
        theirs = subprocess.run(["pdfsig", str(target)], capture_output=True, text=True)
        assert "Signature is Valid." not in theirs.stdout, (position, theirs.stdout)

    # A byte flipped in the zeros padding the signature's reserved space changes no digest.
    # It is still not the sealed file: ours says so, and pdfsig no longer calls the whole
    # document signed (decided in reports.verify._reserved_space_untouched).
    contents_end = sealed_bytes.index(b">", sealed_bytes.index(b"/Contents <"))
    assert sealed_bytes[contents_end - 40 : contents_end] == b"0" * 40  # the padding
    padded = bytearray(sealed_bytes)
    padded[contents_end - 20] = ord("1")
    target = tmp_path / "padding.pdf"
    target.write_bytes(bytes(padded))
    ours = verify_pdf(bytes(padded))
    assert ours.intact and not ours.valid
    assert any("reserved for the signature was changed" in p for p in ours.problems)
    theirs = subprocess.run(["pdfsig", str(target)], capture_output=True, text=True)
    assert "Total document signed" not in theirs.stdout, theirs.stdout


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "not a PDF"),
        (b"hello world", "not a PDF"),
        (b"%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF", "unreadable PDF"),
        (b"%PDF-1.7\n" + b"\x00" * 100, ""),
    ],
)
def test_bad_files_are_invalid_with_a_reason(data, reason) -> None:
    report = verify_pdf(data)
    assert not report.valid
    assert report.problems
    assert reason in " ".join(report.problems)


def test_browser_pages_and_the_signoff_form(evaluation, login) -> None:
    client = login(evaluation["bob"])
    response = client.post(
        reverse("reports:sheets", kwargs={"slug": "alpha"}),
        {"language": "en", "acknowledgement": "known gaps"},
    )
    sheet = Sheet.objects.get()
    assert response["Location"] == reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1})
    _ready(sheet)
    url = reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1})
    page = client.get(url).content.decode()
    assert "Your decision as Operations" in page and "Your decision as Procurement" not in page
    bad = client.post(url, {"role": "ops", "sheet_sha256": "1" * 64, "decision": "approve"})
    assert bad.status_code == 422 and "another revision" in bad.content.decode()
    assert (
        client.post(
            url,
            {
                "role": "ops",
                "sheet_sha256": sheet.sha256,
                "decision": "reject",
                "comment": "costs unclear",
            },
        ).status_code
        == 302
    )
    page = client.get(url).content.decode()
    assert "<strong>Rejected by Operations (bob):</strong> costs unclear" in page
    assert "This revision cannot be sealed." in page
    listing = client.get(reverse("reports:sheets", kwargs={"slug": "alpha"})).content.decode()
    assert '<span class="badge flag">rejected</span>' in listing
    assert (
        client.post(
            url, {"role": "procurement", "sheet_sha256": sheet.sha256, "decision": "approve"}
        ).status_code
        == 403
    )
    assert login(evaluation["charlie"]).get(url).status_code == 404
    assert SignOff.objects.count() == 1


def test_production_refuses_to_start_without_a_certificate(settings) -> None:
    from reports.checks import signing_certificate_check

    settings.PRODUCTION = True
    settings.SHEET_SIGNING_P12 = "/nonexistent/org.p12"
    errors = signing_certificate_check()
    assert [e.id for e in errors] == ["reports.E001"]
    assert "not a readable PKCS#12" in errors[0].msg


def test_pages_say_what_is_missing_and_why_a_role_cannot_sign(evaluation, login) -> None:
    from evaluations.services import membership_set
    from tests.factories import ProjectFactory

    empty = ProjectFactory(slug="empty")
    membership_set(
        project=empty, user=evaluation["alice"], role="platform", is_admin=True, actor=None
    )
    client = login(evaluation["alice"])
    url = reverse("reports:sheets", kwargs={"slug": "empty"})
    page = client.get(url).content.decode()
    assert "A sheet cannot be generated yet:" in page and "No candidate is shortlisted" in page
    refused = client.post(url, {"language": "en"})
    assert (
        refused.status_code == 422 and "acceptance suite has no action" in refused.content.decode()
    )
    assert not Sheet.objects.exists()

    # Alice holds platform and architecture: once she decides as one, the other is explained.
    sheet = _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
        )
    )
    detail = reverse("reports:sheet", kwargs={"slug": "alpha", "revision": sheet.revision})
    page = client.get(detail).content.decode()
    assert "Your decision as Platform" in page and "Your decision as Architecture" in page
    assert "(required to reject)" in page
    _sign(sheet, evaluation["alice"], "platform")
    page = client.get(detail).content.decode()
    assert "Your decision as Architecture" not in page
    assert "You already decided on this revision as Platform" in page
    # The admin form turns the rule off for revisions generated from then on.
    roles = reverse("reports:sheet_roles", kwargs={"slug": "alpha"})
    saved = client.post(
        roles, {"signing_roles": evaluation["alpha"].signing_roles, "one_signer_many_roles": "on"}
    )
    assert saved.status_code == 302
    assert "Your decision as Architecture" not in client.get(detail).content.decode()
    later = _ready(
        services.sheet_generate(
            acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
        )
    )
    _sign(later, evaluation["alice"], "platform")
    page = client.get(
        reverse("reports:sheet", kwargs={"slug": "alpha", "revision": later.revision})
    ).content.decode()
    assert "Your decision as Architecture" in page
    assert "This project allows one person to sign for several roles" in page


def test_a_sheet_defaults_to_the_language_of_whoever_asks(evaluation, login) -> None:
    client = login(evaluation["bob"])
    url = reverse("reports:sheets", kwargs={"slug": "alpha"})
    chosen = re.compile(r'id="id_language">.*?<option value="([a-z-]+)" selected>', re.S)
    assert chosen.findall(client.get(url).content.decode()) == ["en"]
    client.cookies["django_language"] = "zh-hans"
    assert chosen.findall(client.get(url).content.decode()) == ["zh-hans"]
