"""A revision generated before the review is ready carries its gaps: a person says why at once,
a token's revision waits for a member's acknowledgement before anyone approves it, and every
signer sees both."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from evaluations.models import ProjectEvent
from reports import services
from reports.models import Sheet
from tests.poc.api_helpers import token_client
from tests.reports.helpers import approve_all

pytestmark = pytest.mark.django_db


def _approve(evaluation, sheet, person="alice", role="platform"):
    return services.signoff_record(
        sheet=sheet,
        user=evaluation[person],
        role=role,
        decision="approve",
        sheet_sha256=sheet.sha256,
    )


def test_a_person_must_say_why_and_nothing_is_recorded_without(evaluation) -> None:
    with pytest.raises(ValidationError) as refused:
        services.sheet_generate(project=evaluation["alpha"], language="en", actor=evaluation["bob"])
    message = " ".join(refused.value.message_dict["acknowledgement"])
    assert "The review is not ready" in message
    assert "responsibility areas unassigned" in message and "still to be confirmed" in message
    assert not Sheet.objects.exists()
    assert not ProjectEvent.objects.filter(verb="sheet.generated").exists()


def test_a_persons_reason_is_kept_with_the_gaps_and_the_roles_may_decide(evaluation) -> None:
    sheet = services.sheet_generate(
        project=evaluation["alpha"],
        language="zh-hans",
        actor=evaluation["bob"],
        acknowledgement="  Pilot decision; terms follow in Q3.  ",
    )
    assert sheet.gaps and any("责任领域未指派" in gap for gap in sheet.gaps)  # its language
    assert (sheet.gaps_reason, sheet.gaps_acknowledged_by) == (
        "Pilot decision; terms follow in Q3.",
        evaluation["bob"],
    )
    assert not sheet.gaps_open
    sheet = services.sheet_render(sheet_id=sheet.pk)
    assert _approve(evaluation, sheet).decision == "approve"


def test_a_token_revision_waits_for_a_members_acknowledgement(evaluation) -> None:
    client, token, _raw = token_client(evaluation["alpha"])
    made = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json")
    assert made.status_code == 202, made.content
    body = made.json()
    assert body["gaps"] and body["gaps_acknowledgement"] is None
    sheet = services.sheet_render(sheet_id=body["id"])
    assert sheet.gaps_open
    with pytest.raises(ValidationError, match="nobody has acknowledged its gaps"):
        _approve(evaluation, sheet)
    # A rejection needs no acknowledgement: a signer may still say no.
    services.signoff_record(
        sheet=sheet,
        user=evaluation["bob"],
        role="ops",
        decision="reject",
        comment="not ready",
        sheet_sha256=sheet.sha256,
    )
    with pytest.raises(PermissionDenied):
        services.sheet_acknowledge(sheet=sheet, user=evaluation["dave"], reason="observer")
    with pytest.raises(ValidationError, match="Say why"):
        services.sheet_acknowledge(sheet=sheet, user=evaluation["alice"], reason="   ")
    done = services.sheet_acknowledge(sheet=sheet, user=evaluation["alice"], reason="known")
    assert (done.gaps_reason, done.gaps_acknowledged_by) == ("known", evaluation["alice"])
    with pytest.raises(ValidationError, match="acknowledged already"):
        services.sheet_acknowledge(sheet=done, user=evaluation["bob"], reason="again")
    assert ProjectEvent.objects.filter(verb="sheet.gaps_acknowledged").count() == 1
    assert _approve(evaluation, done).decision == "approve"


def test_the_browser_walks_the_acknowledgement(evaluation, login) -> None:
    bob = login(evaluation["bob"])
    url = reverse("reports:sheets", kwargs={"slug": "alpha"})
    refused = bob.post(url, {"language": "en"})
    assert refused.status_code == 422 and "The review is not ready" in refused.content.decode()
    assert not Sheet.objects.exists()
    made = bob.post(url, {"language": "en", "acknowledgement": "Budget deadline"})
    assert made.status_code == 302
    sheet = Sheet.objects.get()
    page = bob.get(reverse("reports:sheet", kwargs={"slug": "alpha", "revision": 1})).content
    assert "Generated before the review was ready" in page.decode()
    assert "Budget deadline" in page.decode()
    assert sheet.gaps_acknowledged_by == evaluation["bob"]


def test_a_member_acknowledges_on_the_page_and_over_the_api(evaluation, login) -> None:
    client, _token, _raw = token_client(evaluation["alpha"])
    first = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json").json()
    second = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json").json()
    page_url = reverse("reports:sheet", kwargs={"slug": "alpha", "revision": first["revision"]})
    alice = login(evaluation["alice"])
    assert "Acknowledge the gaps" in alice.get(page_url).content.decode()
    assert "Acknowledge the gaps" not in login(evaluation["dave"]).get(page_url).content.decode()
    ack = reverse(
        "reports:sheet_acknowledge", kwargs={"slug": "alpha", "revision": first["revision"]}
    )
    assert alice.post(ack, {"reason": ""}).status_code == 302
    assert Sheet.objects.get(pk=first["id"]).gaps_open  # an empty reason changes nothing
    alice.post(ack, {"reason": "Go ahead"})
    assert not Sheet.objects.get(pk=first["id"]).gaps_open
    # Over the API: a person's session, never a token.
    api_url = f"/api/v1/sheets/{second['id']}/acknowledge/"
    assert client.post(api_url, {"reason": "x"}, format="json").status_code in (401, 403)
    answer = alice.post(
        api_url, {"reason": "CI revision reviewed"}, content_type="application/json"
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["gaps_acknowledgement"]["reason"] == "CI revision reviewed"
    assert answer.json()["gaps_acknowledgement"]["by"] == "alice"


def test_approve_all_works_once_acknowledged(evaluation) -> None:
    sheet = services.sheet_generate(
        project=evaluation["alpha"], language="en", actor=None, acknowledgement="system run"
    )
    sheet = services.sheet_render(sheet_id=sheet.pk)
    assert sheet.gaps and not sheet.gaps_open and sheet.gaps_acknowledged_by is None
    approve_all(evaluation, sheet)
    assert Sheet.objects.get(pk=sheet.pk).status == "sealing"


def test_a_non_member_learns_nothing_and_changes_nothing(evaluation, login) -> None:
    from rest_framework.test import APIClient

    client, _token, _raw = token_client(evaluation["alpha"])
    made = client.post("/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json").json()
    outsider = APIClient()
    outsider.force_login(evaluation["charlie"])  # administers beta, not alpha
    answer = outsider.post(
        f"/api/v1/sheets/{made['id']}/acknowledge/", {"reason": "x"}, format="json"
    )
    assert answer.status_code == 404
    page = login(evaluation["charlie"]).post(
        reverse(
            "reports:sheet_acknowledge", kwargs={"slug": "alpha", "revision": made["revision"]}
        ),
        {"reason": "x"},
    )
    assert page.status_code == 404
    assert Sheet.objects.get(pk=made["id"]).gaps_open
