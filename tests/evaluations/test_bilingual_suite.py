"""Actions and requirements applied from the template library keep both languages; the team's
own text stays as written."""

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.urls import reverse
from django.utils import translation

from evaluations import services
from evaluations.catalog import load_templates
from evaluations.models import (
    AcceptanceAction,
    ProjectEvent,
    Requirement,
    TemplateAction,
    TemplateSet,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def applied(personas: dict[str, Any]) -> dict[str, Any]:
    """The multi-tenancy set applied to alpha in English."""
    services.template_catalog_seed(sets=load_templates())
    tenancy = TemplateSet.objects.get(key="multi-tenancy")
    services.template_set_apply(
        project=personas["alpha"], template_set=tenancy, actor=personas["alice"], language="en"
    )
    action = AcceptanceAction.objects.filter(project=personas["alpha"]).first()
    template = TemplateAction.objects.get(key=action.template_key)
    return {**personas, "action": action, "template": template}


def test_an_applied_action_reads_in_each_readers_language(applied: dict[str, Any]) -> None:
    action, template = applied["action"], applied["template"]
    assert action.question == template.question_en  # the stored wording: the chosen language
    with translation.override("zh-hans"):
        assert action.question_text == template.question_zh
        assert action.pass_criterion_text == template.pass_criterion_zh
        assert action.requirement.feature_text == template.requirement.feature_zh
    with translation.override("en"):
        assert action.question_text == template.question_en


def test_pages_and_api_show_the_readers_language(applied: dict[str, Any], login: Any) -> None:
    action, template = applied["action"], applied["template"]
    client = login(applied["bob"])
    suite = client.get(
        reverse("evaluations:suite", args=["alpha"]), headers={"accept-language": "zh-hans"}
    ).content.decode()
    assert template.question_zh in suite and template.question_en not in suite
    answer = client.get(
        "/api/v1/projects/alpha/actions/", headers={"accept-language": "zh-hans"}
    ).json()
    listed = next(row for row in answer["actions"] if row["key"] == action.key)
    assert listed["question"] == template.question_zh
    assert listed["requirement"] == template.requirement.feature_zh
    english = client.get("/api/v1/projects/alpha/actions/", headers={"accept-language": "en"})
    listed = next(row for row in english.json()["actions"] if row["key"] == action.key)
    assert listed["question"] == template.question_en


def test_an_edit_form_saved_unchanged_in_chinese_changes_nothing(
    applied: dict[str, Any], login: Any
) -> None:
    action, template = applied["action"], applied["template"]
    client = login(applied["bob"])
    url = reverse("evaluations:action_detail", args=["alpha", action.pk])
    form = client.get(url, headers={"accept-language": "zh-hans"}).content.decode()
    assert template.question_zh in form  # the form shows what the reader reads
    events = ProjectEvent.objects.count()
    services.action_update(
        action=action,
        actor=applied["bob"],
        question=template.question_zh,
        pass_criterion=template.pass_criterion_zh,
    )
    action.refresh_from_db()
    assert ProjectEvent.objects.count() == events
    assert action.question == template.question_en
    assert set(action.translations) >= {"question", "pass_criterion"}


def test_text_the_team_writes_stays_as_written_in_every_language(
    applied: dict[str, Any],
) -> None:
    action, template = applied["action"], applied["template"]
    services.action_update(action=action, actor=applied["bob"], question="我们自己的问题？")
    action.refresh_from_db()
    assert "question" not in action.translations
    assert "pass_criterion" in action.translations  # untouched fields stay bilingual
    for language in ("en", "zh-hans"):
        with translation.override(language):
            assert action.question_text == "我们自己的问题？"
    with translation.override("zh-hans"):
        assert action.pass_criterion_text == template.pass_criterion_zh
    requirement = action.requirement
    services.requirement_update(requirement=requirement, actor=None, feature="Our own feature")
    requirement.refresh_from_db()
    with translation.override("zh-hans"):
        assert requirement.feature_text == "Our own feature"


def test_a_stored_text_that_no_longer_matches_the_library_is_shown_as_stored(
    applied: dict[str, Any],
) -> None:
    action = applied["action"]
    AcceptanceAction.objects.filter(pk=action.pk).update(question="Changed elsewhere")
    action.refresh_from_db()
    with translation.override("zh-hans"):
        assert action.question_text == "Changed elsewhere"


def test_the_migration_gives_earlier_copies_both_languages_unless_edited(
    applied: dict[str, Any],
) -> None:
    migration = importlib.import_module("evaluations.migrations.0009_library_text_translations")
    edited, untouched = AcceptanceAction.objects.filter(project=applied["alpha"])[:2]
    AcceptanceAction.objects.filter(pk=edited.pk).update(question="Edited before", translations={})
    AcceptanceAction.objects.filter(pk=untouched.pk).update(translations={})
    Requirement.objects.update(translations={})
    migration.fill(apps, None)
    edited.refresh_from_db()
    untouched.refresh_from_db()
    assert "question" not in edited.translations and "pass_criterion" in edited.translations
    template = TemplateAction.objects.get(key=untouched.template_key)
    assert untouched.translations["question"] == {
        "en": template.question_en,
        "zh": template.question_zh,
    }
    assert Requirement.objects.exclude(translations={}).exists()


def test_the_demo_reads_in_both_languages(catalog: None) -> None:
    from evaluations.services.demo import demo_seed

    services.template_catalog_seed(sets=load_templates())
    project, _users = demo_seed()
    actions = list(AcceptanceAction.objects.filter(project=project).select_related("requirement"))
    assert actions
    templates = {t.key: t for t in TemplateAction.objects.select_related("requirement")}
    for action in actions:
        template = templates[action.template_key]
        with translation.override("zh-hans"):
            assert action.question_text == template.question_zh
            assert action.requirement.feature_text == template.requirement.feature_zh
        with translation.override("en"):
            assert action.question_text == template.question_en
