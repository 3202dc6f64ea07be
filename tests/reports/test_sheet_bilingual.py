"""A sheet built from actions applied from the bilingual template library speaks the reader's
language: the Chinese PDF carries no English action text that exists in Chinese."""

import re
import subprocess
from typing import Any

import pytest

from evaluations import services as evaluation_services
from evaluations.catalog import load_templates
from evaluations.models import AcceptanceAction, TemplateAction, TemplateSet
from poc import services as poc_services
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db


def _squeezed(text: str) -> str:
    """Text with every space and line break gone: the PDF wraps lines wherever it must."""
    return re.sub(r"\s+", "", text)


def _pdf_text(sheet: Any) -> str:
    return subprocess.run(
        ["pdftotext", sheet.pdf.path, "-"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def bilingual(evaluation: dict[str, Any]) -> dict[str, Any]:
    evaluation_services.template_catalog_seed(sets=load_templates())
    failures = TemplateSet.objects.get(key="controlled-failures")
    evaluation_services.template_set_apply(
        project=evaluation["alpha"], template_set=failures, actor=None, language="en"
    )
    applied = list(
        AcceptanceAction.objects.filter(
            project=evaluation["alpha"], translations__has_key="question"
        )
    )
    assert len(applied) >= 3
    poc_services.result_record(
        candidate=evaluation["volcano"],
        action=applied[0],
        outcome="failed",
        failure_cause="配额未生效",
        actor=None,
    )
    return {**evaluation, "applied": applied}


def test_the_chinese_sheet_has_no_english_action_text(bilingual: dict[str, Any]) -> None:
    text = _squeezed(_pdf_text(rendered(bilingual, language="zh-hans", layout="full")))
    for action in bilingual["applied"]:
        template = TemplateAction.objects.get(key=action.template_key)
        assert _squeezed(template.question_zh) in text, action.key
        assert _squeezed(template.question_en)[:40] not in text, action.key
        assert _squeezed(template.requirement.feature_en) not in text
    assert "quota-hit?" in text  # text the team wrote stays as written


def test_the_english_sheet_of_the_same_project_reads_in_english(
    bilingual: dict[str, Any],
) -> None:
    text = _squeezed(_pdf_text(rendered(bilingual, language="en", layout="full")))
    for action in bilingual["applied"]:
        template = TemplateAction.objects.get(key=action.template_key)
        assert _squeezed(template.question_en) in text, action.key
        assert _squeezed(template.question_zh)[:20] not in text, action.key
