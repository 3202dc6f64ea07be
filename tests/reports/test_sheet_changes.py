"""A new revision lists what changed since the previous one frozen the same way."""

import copy
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluations import services as evaluation_services
from poc import services as poc_services
from poc.models import (
    ResultCell,
)
from reports import services
from reports.diff import LIMIT, Change, snapshot_changes
from reports.procurement.services import TermChange, terms_record
from tests.factories import CandidateFactory, make_actions

pytestmark = pytest.mark.django_db


def test_every_kind_of_change_is_listed(evaluation) -> None:
    alpha, volcano = evaluation["alpha"], evaluation["volcano"]
    quota, job, tenant = evaluation["actions"]
    first = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=None
    )

    evaluation_services.project_update(
        project=alpha, actor=evaluation["alice"], description="Now with inference too."
    )
    CandidateFactory(project=alpha, solution_key="slurm")
    poc_services.result_record(
        candidate=volcano, action=job, outcome="passed", change_reason="rerun", actor=None
    )
    poc_services.result_record(
        candidate=volcano,
        action=tenant,
        outcome="needs_integration",
        integration_what="LDAP groups",
        integration_owner_team="platform",
        integration_effort_days=Decimal("5"),
        change_reason="estimate revised",
        actor=None,
    )
    poc_services.responsibility_set(
        candidate=volcano, area="support_sla", party="vendor", person="Li Wei", actor=None
    )
    terms_record(candidate=volcano, changes=[TermChange("licence_spdx", "apache-2.0")], actor=None)
    make_actions(alpha, [("new-check", "real_task")], feature="Scheduling")
    cell = ResultCell.objects.select_related("result").get(candidate=volcano, action=quota)
    poc_services.evidence_attach_file(
        result=cell.result, upload=SimpleUploadedFile("quota.log", b"ok\n"), actor=None
    )
    second = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=None
    )

    changes = snapshot_changes(first.snapshot, second.snapshot)
    listed = {(c.section, c.subject): (c.before, c.after) for c in changes.shown}
    assert listed[("Framing", "Description")] == ("—", "Now with inference too.")
    assert listed[("Shortlist", "Slurm")][0] == "—"
    assert listed[("Results", "Volcano × real-job")] == ("Failed", "Passed")
    assert listed[("Acceptance actions", "new-check")] == ("—", "added")
    assert listed[("Integration effort (person-days)", "Volcano")] == ("3.5", "5.0")
    assert listed[("Responsibilities", "Volcano: Support and SLA")] == (
        "unassigned",
        "Vendor · Li Wei",
    )
    assert listed[("Terms", "Volcano: Licence (SPDX expression)")] == (
        "— (to be confirmed)",
        "Apache-2.0 (to be confirmed)",
    )
    assert listed[("Evidence", "Volcano × quota-hit")] == ("—", "quota.log")
    assert changes.total == len(changes.shown) == len(listed)


def test_the_page_compares_with_the_previous_revision_frozen_the_same_way(
    evaluation, login, monkeypatch
) -> None:
    monkeypatch.setattr(services, "MAX_PENDING_RENDERS", 10)  # none of these is rendered
    alpha = evaluation["alpha"]
    client = login(evaluation["bob"])
    services.sheet_generate(acknowledgement="known gaps", project=alpha, language="en", actor=None)
    services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="zh-hans", actor=None
    )
    page = lambda r: client.get(reverse("reports:sheet", args=["alpha", r])).content.decode()  # noqa: E731
    assert "Changes since" not in page(1)
    assert "Changes since" not in page(2)  # the only earlier one is in another language

    services.sheet_generate(acknowledgement="known gaps", project=alpha, language="en", actor=None)
    assert "Changes since r1" in page(3) and "Nothing this sheet shows differs" in page(3)
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][0],
        outcome="failed",
        failure_cause="quota ignored",
        change_reason="rerun",
        actor=None,
    )
    services.sheet_generate(acknowledgement="known gaps", project=alpha, language="en", actor=None)
    fourth = page(4)
    assert "Changes since r3" in fourth
    assert "Volcano × quota-hit" in fourth and "Passed" in fourth and "Failed" in fourth


def test_a_long_list_is_cut_and_counted(evaluation) -> None:
    old = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    ).snapshot
    new = copy.deepcopy(old)
    extra = LIMIT + 50
    new["matrix"]["actions"] += [
        {"key": f"k-{n}", "requirement": "r", "dimension": "d", "scenario": "s"}
        for n in range(extra)
    ]
    new["matrix"]["rows"] += [["passed"] for _ in range(extra)]
    changes = snapshot_changes(old, new)
    assert changes.total == extra and len(changes.shown) == LIMIT and changes.more == 50
    assert changes.shown[0] == Change("Acceptance actions", "k-0", "—", "added")


def test_a_new_failure_cause_for_the_same_failure_is_listed(evaluation) -> None:
    old = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    ).snapshot
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=evaluation["actions"][1],
        outcome="failed",
        failure_cause="OOM on node 3",
        change_reason="root cause found",
        actor=None,
    )
    new = services.sheet_generate(
        acknowledgement="known gaps", project=evaluation["alpha"], language="en", actor=None
    ).snapshot
    assert snapshot_changes(old, new).shown == [
        Change("Failure causes", "Volcano × real-job", "训练作业在第 40 步卡住", "OOM on node 3")
    ]


def test_polling_gets_the_changes_only_once_rendering_is_done(evaluation, login) -> None:
    from reports.models import Sheet, SheetStatus

    alpha = evaluation["alpha"]
    services.sheet_generate(acknowledgement="known gaps", project=alpha, language="en", actor=None)
    second = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="en", actor=None
    )
    client = login(evaluation["bob"])
    url = reverse("reports:sheet", args=["alpha", 2])
    Sheet.objects.filter(pk=second.pk).update(status=SheetStatus.RENDERING)
    assert "Changes since" not in client.get(url, headers={"HX-Request": "true"}).content.decode()
    Sheet.objects.filter(pk=second.pk).update(status=SheetStatus.READY)
    assert "Changes since r1" in client.get(url, headers={"HX-Request": "true"}).content.decode()


def test_a_translation_update_alone_does_not_make_a_revision_outdated(
    evaluation, monkeypatch
) -> None:
    from django.utils.translation import trans_real

    from reports.models import Sheet
    from reports.snapshot import snapshot_and_hash

    alpha = evaluation["alpha"]
    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=alpha, language="zh-hans", actor=None
    )
    assert sheet.fingerprint and sheet.fingerprint != sheet.sha256
    # A new release words a label differently: the Chinese snapshot would hash differently...
    catalog = trans_real.translation("zh-hans")._catalog
    monkeypatch.setitem(catalog, "Validate first", "首批验证")
    rebuilt = snapshot_and_hash(alpha, language="zh-hans", candidate_slugs=[])[2]
    assert rebuilt != sheet.sha256
    # ...but the project has not moved on, so the revision can still be signed.
    assert not services.sheet_is_stale(Sheet.objects.get(pk=sheet.pk))
    alpha.description = "scope widened"
    alpha.save()
    assert services.sheet_is_stale(Sheet.objects.get(pk=sheet.pk))


def test_the_revision_list_names_the_products_a_revision_covers(evaluation, login) -> None:
    alpha, volcano = evaluation["alpha"], evaluation["volcano"]
    services.sheet_generate(
        acknowledgement="known gaps",
        project=alpha,
        language="en",
        candidate_slugs=[volcano.slug],
        actor=None,
    )
    page = login(evaluation["alice"]).get(reverse("reports:sheets", args=["alpha"]))
    row = page.content.decode().split('href="/projects/alpha/sheets/1/"')[1].split("</tr>")[0]
    assert f"<td>{volcano.solution.name}</td>" in row
    assert f"<td>{volcano.slug}</td>" not in row
