"""The demo's sheets once the worker is done: one revision sealed, one awaiting."""

import pytest
from django.urls import reverse

from evaluations.models import Project
from poc.models import Outcome, Responsibility, ResultCell
from reports.demo import SECOND_SIGNERS, demo_sheets_advance
from reports.models import Decision, Sheet, SheetStatus

pytestmark = pytest.mark.django_db


def test_the_worker_seals_one_revision_and_leaves_one_awaiting(finished: Project) -> None:
    first, second = Sheet.objects.filter(project=finished).order_by("revision")
    assert first.status == SheetStatus.SEALED and first.sealed_pdf and first.sealed_sha256
    approvals = first.signoffs.filter(decision=Decision.APPROVE)
    assert sorted(approvals.values_list("role", flat=True)) == sorted(first.required_roles)
    assert not approvals.filter(after_changes=True).exists()
    assert second.status == SheetStatus.READY and second.pdf
    signed = set(second.signoffs.values_list("role", flat=True))
    assert signed == set(SECOND_SIGNERS)
    assert set(second.required_roles) - signed == {"procurement", "business"}
    assert second.fingerprint != first.fingerprint
    # The teams' work between the revisions: Slurm's image runs, and ops holds observability.
    cell = ResultCell.objects.select_related("result").get(
        candidate__slug="slurm", action__key="hpc-container-image-run"
    )
    assert cell.outcome == Outcome.PASSED and "Apptainer" in cell.result.change_reason
    assert Responsibility.objects.filter(candidate__slug="slurm", area="observability").exists()
    assert demo_sheets_advance(finished.pk) is True  # nothing left to do
    assert Sheet.objects.filter(project=finished).count() == 2


def test_the_sheet_pages_show_both_revisions(finished: Project, login) -> None:
    client = login(finished.memberships.get(role="business").user)
    sealed = client.get(reverse("reports:sheet", kwargs={"slug": "demo", "revision": 1}))
    assert sealed.status_code == 200 and "Signed and sealed" in sealed.content.decode()
    awaiting = client.get(reverse("reports:sheet", kwargs={"slug": "demo", "revision": 2}))
    assert awaiting.status_code == 200 and "Ready for sign-off" in awaiting.content.decode()
    client.cookies["django_language"] = "zh-hans"
    listed = client.get(reverse("reports:sheets", kwargs={"slug": "demo"})).content.decode()
    assert "已签核并签章" in listed and "待签核" in listed


def test_no_page_of_the_demo_sheets_is_left_nearly_empty(finished: Project) -> None:
    """The decision document flows from page to page: each page but the last of each PDF
    holds at least an eighth of the text of its fullest page (a page break forced too early, a
    table pushed whole to the next page, leaves a heading alone). Sections that open a page
    (terms, the record) may leave the page before them half full: tables hold less text."""
    from pypdf import PdfReader

    for sheet in Sheet.objects.filter(project=finished):
        pdf = sheet.sealed_pdf or sheet.pdf
        pages = [page.extract_text() or "" for page in PdfReader(pdf.path).pages]
        fullest = max(len(text) for text in pages)
        thin = [n + 1 for n, text in enumerate(pages[:-1]) if len(text) < fullest / 8]
        assert len(pages) >= 3 and thin == [], (sheet.revision, thin, [len(t) for t in pages])
