"""A sealed decision knows when it expires: a review-by date and conditions with the
recommendation, what the workbench sees reopening it, the page that shows it and the e-mail
its signers get."""

from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from evaluations import services as evaluation_services
from poc.probes.services import probes
from reports import services
from reports.models import Notice, Sheet, SheetStatus
from reports.procurement.models import Basis
from reports.procurement.services import TermChange, terms_record
from reports.review import decision_review
from reports.services import notices
from tests.probes.helpers import H100_CAPTURE, bundle

pytestmark = pytest.mark.django_db


def _recommend(evaluation: dict[str, Any], **extra: Any) -> None:
    evaluation_services.project_recommendation_set(
        project=evaluation["alpha"],
        candidates=["volcano"],
        conditions="retest the training job",
        reason="fits the Kubernetes base",
        actor=evaluation["alice"],
        **extra,
    )


def _sealed(evaluation: dict[str, Any]) -> Sheet:
    """A revision as the worker leaves it once every role approved (the PDF is not what this
    is about: tests/reports/test_sheet_record.py seals real files)."""
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    )
    Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.SEALED)
    return Sheet.objects.get(pk=sheet.pk)


def test_the_recommendation_takes_a_review_date_ahead_and_conditions(evaluation) -> None:
    today = timezone.localdate()
    with pytest.raises(ValidationError) as refused:
        _recommend(evaluation, review_by=today)
    assert "must be after today" in str(refused.value)
    _recommend(evaluation, review_by=today + timedelta(days=90), reopen_when="Volcano 2.0\n\n ")
    alpha = evaluation["alpha"]
    alpha.refresh_from_db()
    assert (alpha.review_by, alpha.reopen_when) == (today + timedelta(days=90), "Volcano 2.0")
    # A date set before and now past may stay when the rest is edited: it is simply due.
    type(alpha).objects.filter(pk=alpha.pk).update(review_by=today - timedelta(days=1))
    _recommend(evaluation, review_by=today - timedelta(days=1), reopen_when="Volcano 2.0")
    snapshot = _sealed(evaluation).snapshot["recommendation"]
    assert snapshot["review_by"] == (today - timedelta(days=1)).isoformat()
    assert snapshot["reopen_when"] == ["Volcano 2.0"]


def test_nothing_sealed_nothing_to_review_and_a_fresh_decision_is_not_due(evaluation) -> None:
    assert decision_review(evaluation["alpha"]) is None
    _recommend(evaluation, review_by=timezone.localdate() + timedelta(days=30))
    _sealed(evaluation)
    review = decision_review(evaluation["alpha"])
    assert review is not None and not review.due and review.triggers == []


def test_what_the_workbench_sees_reopens_the_decision(evaluation) -> None:
    today = timezone.localdate()
    _recommend(evaluation, review_by=today + timedelta(days=30), reopen_when="Volcano 2.0 ships")
    terms_record(
        candidate=evaluation["volcano"],
        changes=[
            TermChange(
                "list_price",
                {"amount": "4500", "currency": "USD"},
                Basis.QUOTE,
                "Q-77",
                valid_until=today + timedelta(days=10),
            )
        ],
        actor=None,
    )
    probes.probe_ingest_bundle(
        project=evaluation["alpha"], candidate=evaluation["volcano"], bundle=bundle(), actor=None
    )
    _sealed(evaluation)
    review = decision_review(evaluation["alpha"])
    assert review is not None and not review.due
    assert review.checklist == ["Volcano 2.0 ships"]
    # Later: the date comes and the quote expires.
    later = decision_review(evaluation["alpha"], today=today + timedelta(days=30))
    assert later is not None
    assert any("review-by date" in t for t in later.triggers)
    assert any("Q-77" not in t and "expired on" in t for t in later.triggers)
    # A person records another version; a probe run sees another GPU and driver.
    volcano = evaluation["volcano"]
    type(volcano).objects.filter(pk=volcano.pk).update(version="1.11")
    probes.probe_ingest_bundle(
        project=evaluation["alpha"],
        candidate=volcano,
        bundle=bundle(outputs=[("nvidia-smi -q", H100_CAPTURE.read_text())]),
        actor=None,
    )
    now = decision_review(evaluation["alpha"])
    assert now is not None and now.due
    text = " ".join(now.triggers)
    assert "version 1.11 recorded" in text
    assert "saw GPU models NVIDIA H100 80GB HBM3; the decision saw NVIDIA H200" in text
    assert "saw drivers 590.48.01; the decision saw 580.159.04" in text


def test_signers_are_told_once_and_the_pages_show_it(evaluation, login, settings) -> None:
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    _recommend(evaluation, review_by=timezone.localdate() + timedelta(days=30))
    sheet = _sealed(evaluation)
    assert notices.notices_scan_review() == 0  # not due yet: nobody is told
    volcano = evaluation["volcano"]
    type(volcano).objects.filter(pk=volcano.pk).update(version="2.0")
    assert notices.notices_scan_review() == 1
    assert notices.notices_scan_review() == 0  # once per sealed revision
    told = set(
        Notice.objects.filter(sheet=sheet, kind="review").values_list(
            "recipient__username", flat=True
        )
    )
    assert {"alice", "bob"} <= told
    notices.notices_send()
    bodies = [m.body for m in mail.outbox if "due for review" in m.subject]
    assert bodies and all("version 2.0 recorded" in body for body in bodies)
    page = login(evaluation["bob"]).get(reverse("reports:sheets", kwargs={"slug": "alpha"}))
    assert "Due for another look" in page.content.decode()
    overview = login(evaluation["bob"]).get(reverse("reports:progress", kwargs={"slug": "alpha"}))
    assert "version 2.0 recorded" in overview.content.decode()
