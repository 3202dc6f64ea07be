"""The project history names things, never keys: a candidate as its product's name and version,
a choice as its label, in the reader's language whatever the writer's was. Entries keep what
they are about as parts (kinds and keys), covered by the chain; entries written before parts
still read, with the candidates and choices recognisable in their stored subject named."""

import re
from typing import Any

import pytest
from django.urls import reverse
from django.utils import translation

from evaluations.catalog import load_templates
from evaluations.models import ProjectEvent, TemplateSet
from evaluations.selectors import audit_chain_break
from evaluations.services import (
    event_record,
    project_recommendation_set,
    template_catalog_seed,
    template_set_apply,
)
from poc import services as poc_services
from reports import services as report_services
from tests.factories import CandidateFactory

pytestmark = pytest.mark.django_db

# "slinky" is a product whose name differs between the languages.
ENGLISH_NAME = "Slurm on Kubernetes (Slinky) 0.3"
CHINESE_NAME = "Kubernetes 上的 Slurm（Slinky） 0.3"


@pytest.fixture
def slinky(suite: dict[str, Any]) -> Any:
    template_catalog_seed(sets=load_templates())
    return CandidateFactory(project=suite["alpha"], solution_key="slinky", version="0.3")


def _history(client: Any, language: str) -> str:
    """The entries of the history page as a reader of `language` sees them."""
    client.post(reverse("set_language"), {"language": language, "next": "/"})
    page = client.get(reverse("evaluations:project_history", kwargs={"slug": "alpha"}))
    assert page.status_code == 200
    found = re.search(r'<ol class="events">.*?</ol>', page.content.decode(), re.S)
    assert found is not None
    return found[0]


def _words(text: str) -> str:
    """The entries' visible words (attributes, such as the verb code's title, left out)."""
    return re.sub(r"<[^>]*>", " ", text)


def test_a_result_recorded_in_chinese_reads_in_english_by_product_name(
    suite, slinky, login
) -> None:
    with translation.override("zh-hans"):
        poc_services.result_record(
            candidate=slinky, action=suite["actions"][0], outcome="passed", actor=suite["bob"]
        )
    client = login(suite["dave"])
    english = _words(_history(client, "en"))
    assert f"recorded a result {ENGLISH_NAME} · quota-hit" in " ".join(english.split())
    assert "Kubernetes 上的" not in english and "slinky" not in english
    assert "result.recorded" not in english  # the verb's code is no reading matter
    chinese = _words(_history(client, "zh-hans"))
    assert CHINESE_NAME in chinese and "Slurm on Kubernetes" not in chinese
    assert "slinky" not in chinese


def test_a_responsibility_assigned_in_english_reads_in_chinese(suite, slinky, login) -> None:
    with translation.override("en"):
        poc_services.responsibility_set(
            candidate=slinky, area="deployment", party="ops_team", person="Omar", actor=None
        )
    chinese = _words(_history(login(suite["dave"]), "zh-hans"))
    assert f"{CHINESE_NAME} · 部署" in chinese
    assert "Deployment" not in chinese and "Ops team" not in chinese and "slinky" not in chinese


def test_a_recommendation_names_the_products_in_its_changes_too(suite, slinky, login) -> None:
    with translation.override("zh-hans"):
        project_recommendation_set(
            project=suite["alpha"],
            candidates=["slinky", "volcano"],
            conditions="",
            reason="Both ran the real jobs.",
            actor=suite["alice"],
        )
    english = " ".join(_words(_history(login(suite["dave"]), "en")).split())
    assert f"wrote the recommendation Volcano, {ENGLISH_NAME}" in english
    assert re.search(rf"Recommended candidates: [^;]*→ Volcano, {re.escape(ENGLISH_NAME)}", english)
    assert "slinky" not in english and "推荐" not in english


def test_sheet_decisions_and_the_freeze_read_in_the_readers_language(
    suite, login, settings, tmp_path
) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    alpha = suite["alpha"]
    with translation.override("en"):
        report_services.review_freeze_set(project=alpha, frozen=True, actor=suite["alice"])
        sheet = report_services.sheet_generate(
            acknowledgement="known gaps", project=alpha, language="en", actor=suite["alice"]
        )
        report_services.sheet_render(sheet_id=sheet.pk)
        sheet.refresh_from_db()
        report_services.signoff_record(
            sheet=sheet,
            user=suite["bob"],
            role="ops",
            decision="reject",
            comment="No exit plan.",
            sheet_sha256=sheet.sha256,
        )
    chinese = _words(_history(login(suite["dave"]), "zh-hans"))
    assert "r1 · 运维" in chinese  # the role that decided, not its code "ops"
    assert "r1 · English" in chinese  # the sheet's language, as the sheet names it
    assert "已为签核冻结" in chinese
    assert "frozen for sign-off" not in chinese and " ops" not in chinese


def test_a_template_set_applied_in_english_reads_in_chinese(suite, slinky, login) -> None:
    with translation.override("en"):
        template_set_apply(
            project=suite["alpha"],
            template_set=TemplateSet.objects.get(key="multi-tenancy"),
            actor=suite["alice"],
        )
    chinese = _words(_history(login(suite["dave"]), "zh-hans"))
    assert "改写示例：多租户" in chinese and "multi-tenancy" not in chinese


def test_entries_from_before_parts_still_read(suite, slinky, login) -> None:
    alpha = suite["alpha"]
    for verb, subject in (
        ("result.recorded", "slinky × quota-hit"),
        ("responsibility.set", "slinky · Deployment"),
        ("candidate.moved", "Kubernetes 上的 Slurm（Slinky） 0.3"),
        ("sheet.approve", "r2 · ops"),
        ("project.review_freeze", "frozen for sign-off"),
        ("template.applied", "multi-tenancy"),
        ("suite.imported", "alpha"),
        ("token.created", "ci (wbk_1234)"),  # nothing to name: read as stored
        ("result.recorded", "gone-candidate × quota-hit"),  # no such candidate any more
    ):
        event_record(project=alpha, actor=None, verb=verb, subject=subject)
    assert not ProjectEvent.objects.exclude(subject_parts=[]).exists()
    english = " ".join(_words(_history(login(suite["dave"]), "en")).split())
    for shown in (
        f"{ENGLISH_NAME} · quota-hit",
        f"{ENGLISH_NAME} · Deployment",
        f"moved a candidate to another tier {ENGLISH_NAME}",
        "r2 · Operations",
        "applied a template set Worked rewrite: multi-tenancy",
        "imported the acceptance suite Alpha",
        "ci (wbk_1234)",
        "gone-candidate × quota-hit",
    ):
        assert shown in english, shown
    assert "slinky ×" not in english and "Kubernetes 上的" not in english
    chinese = _words(_history(login(suite["dave"]), "zh-hans"))
    assert f"{CHINESE_NAME} · 部署" in chinese and "Deployment" not in chinese
    assert "改写示例：多租户" in chinese and "multi-tenancy" not in chinese


def test_the_parts_are_covered_by_the_chain(suite, slinky, login) -> None:
    alpha = suite["alpha"]
    event_record(project=alpha, actor=None, verb="token.created", subject="an entry without")
    result = poc_services.result_record(
        candidate=slinky, action=suite["actions"][0], outcome="passed", actor=suite["bob"]
    )
    entry = ProjectEvent.objects.get(verb="result.recorded")
    assert entry.subject == "slinky · quota-hit"  # stored beside the parts: keys, in English
    assert entry.subject_parts == [
        {"kind": "candidate", "key": "slinky", "solution": "slinky", "version": "0.3"},
        {"kind": "action", "key": "quota-hit"},
    ]
    assert result.pk and audit_chain_break(alpha) is None
    # Someone who can write the table points the entry at another product: the chain says so.
    parts = [{**entry.subject_parts[0], "solution": "volcano"}, entry.subject_parts[1]]
    ProjectEvent.objects.filter(pk=entry.pk).update(subject_parts=parts)
    found = audit_chain_break(alpha)
    assert found is not None and found.seq == entry.seq
    assert "its content was changed" in found.problem
    # Parts changed into what no writer stores still read, as far as they can: no server error.
    junk = ["junk", {"kind": "phrase", "key": "costs.lines", "numbers": {"x": 1}}, {"kind": 7}]
    ProjectEvent.objects.filter(pk=entry.pk).update(subject_parts=junk)
    assert "recorded a result" in _words(_history(login(suite["dave"]), "en"))  # answered 200
