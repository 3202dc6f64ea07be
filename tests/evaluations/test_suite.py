"""Requirements and acceptance actions: templates, keys, coverage, claims, the pages."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evaluations import selectors, services
from evaluations.catalog import load_templates
from evaluations.models import (
    REQUIRED_SCENARIOS,
    AcceptanceAction,
    ActionKeyRename,
    ProjectEvent,
    Requirement,
    TemplateAction,
    TemplateSet,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def templates(catalog) -> None:
    services.template_catalog_seed(sets=load_templates())


@pytest.fixture
def requirement(personas) -> Requirement:
    return services.requirement_create(
        project=personas["alpha"],
        actor=personas["bob"],
        feature="Supports multi-tenancy",
        dimension="tenancy",
        owner_team="platform",
    )


def _action(requirement: Requirement, key: str, scenario: str = "real_task") -> AcceptanceAction:
    return services.action_create(
        requirement=requirement,
        actor=None,
        key=key,
        question=f"Does {key} work?",
        pass_criterion="It does.",
        scenario=scenario,
    )


# --- template library --------------------------------------------------------------------


def test_template_library_is_large_enough_and_bilingual(templates) -> None:
    assert TemplateAction.objects.count() >= 40
    kinds = set(TemplateSet.objects.values_list("kind", flat=True))
    assert kinds == {
        "worked-rewrite",
        "route-must-test",
        "controlled-failure",
        "integration",
        "gpu-evidence",
    }
    assert set(TemplateSet.objects.filter(kind="worked-rewrite").values_list("key", flat=True)) == {
        "multi-tenancy",
        "elasticity",
        "gpu-support",
    }
    routes = TemplateSet.objects.filter(kind="route-must-test").values_list("route__key", flat=True)
    assert set(routes) == {
        "container-native",
        "hpc-batch",
        "commercial",
        "cloud-platform",
        "self-built",
    }
    failures = TemplateAction.objects.filter(requirement__template_set__kind="controlled-failure")
    assert {
        "resource_shortage",
        "node_failure",
        "queue_preemption",
        "permission_overreach",
        "monitoring_gap",
        "upgrade_rollback",
    } <= set(failures.values_list("scenario", flat=True))
    for action in TemplateAction.objects.all():
        assert action.question_en and action.question_zh and action.pass_criterion_zh


def test_template_seed_is_idempotent(templates) -> None:
    again = services.template_catalog_seed(sets=load_templates())
    assert (again.created, again.updated) == (0, 0)


def test_apply_is_idempotent_and_copies_the_chosen_language(personas, templates) -> None:
    project = personas["alpha"]
    tenancy = TemplateSet.objects.get(key="multi-tenancy")
    first = services.template_set_apply(
        project=project, template_set=tenancy, actor=personas["bob"], language="zh-hans"
    )
    assert (
        first.actions_created
        == TemplateAction.objects.filter(requirement__template_set=tenancy).count()
    )
    counts = (Requirement.objects.count(), AcceptanceAction.objects.count())
    second = services.template_set_apply(project=project, template_set=tenancy, actor=None)
    assert (second.requirements_created, second.actions_created) == (0, 0)
    assert second.already_present == first.actions_created
    assert (Requirement.objects.count(), AcceptanceAction.objects.count()) == counts
    template_action = TemplateAction.objects.filter(requirement__template_set=tenancy).first()
    copied = AcceptanceAction.objects.get(project=project, template_key=template_action.key)
    assert copied.question == template_action.question_zh


def test_apply_survives_a_rename_and_a_key_clash(personas, templates, requirement) -> None:
    project = personas["alpha"]
    tenancy = TemplateSet.objects.get(key="multi-tenancy")
    first_key = TemplateAction.objects.filter(requirement__template_set=tenancy).first().key
    _action(requirement, first_key)  # a hand-written action already holds the template's key
    services.template_set_apply(project=project, template_set=tenancy, actor=None)
    copied = AcceptanceAction.objects.get(project=project, template_key=first_key)
    assert copied.key == f"{first_key}-2"
    services.action_update(action=copied, actor=None, key="tenancy-renamed")
    report = services.template_set_apply(project=project, template_set=tenancy, actor=None)
    assert report.actions_created == 0


def test_preview_writes_nothing_and_matches_apply(personas, templates) -> None:
    project = personas["alpha"]
    failures = TemplateSet.objects.get(key="controlled-failures")
    plan = services.template_set_plan(project=project, template_set=failures)
    assert AcceptanceAction.objects.count() == 0
    report = services.template_set_apply(project=project, template_set=failures, actor=None)
    assert report.actions_created == plan.new_action_count
    assert report.requirements_created == plan.new_requirement_count


# --- keys --------------------------------------------------------------------------------


def test_keys_are_unique_per_project(personas, requirement) -> None:
    _action(requirement, "tenant-isolation")
    with pytest.raises(ValidationError, match="already used"):
        _action(requirement, "tenant-isolation")
    other = services.requirement_create(
        project=personas["beta"], actor=None, feature="x", dimension="tenancy", owner_team="ops"
    )
    assert _action(other, "tenant-isolation").key == "tenant-isolation"


def test_rename_keeps_history_and_old_key_still_finds_the_action(personas, requirement) -> None:
    action = _action(requirement, "tenant-logs")
    services.action_update(action=action, actor=personas["bob"], key="tenant-log-isolation")
    rename = ActionKeyRename.objects.get(action=action)
    assert (rename.old_key, rename.new_key, rename.renamed_by) == (
        "tenant-logs",
        "tenant-log-isolation",
        personas["bob"],
    )
    assert selectors.action_by_key(personas["alpha"], "tenant-logs") == action
    assert selectors.action_by_key(personas["alpha"], "tenant-log-isolation") == action
    assert selectors.action_by_key(personas["beta"], "tenant-logs") is None
    assert action.pk == AcceptanceAction.objects.get(key="tenant-log-isolation").pk


def test_rename_to_a_taken_key_changes_nothing(personas, requirement) -> None:
    first = _action(requirement, "first")
    _action(requirement, "second")
    with pytest.raises(ValidationError):
        services.action_update(action=first, actor=None, key="second")
    first.refresh_from_db()
    assert first.key == "first"
    assert not ActionKeyRename.objects.exists()


# --- coverage rule -----------------------------------------------------------------------


def test_readiness_reports_each_missing_kind(personas, requirement) -> None:
    readiness = selectors.readiness_for_project(personas["alpha"])
    assert [value for value, _label in readiness.missing] == [s.value for s in REQUIRED_SCENARIOS]
    assert readiness.unrewritten == 1
    assert [c.slug for c in readiness.candidates_in_play] == ["volcano"]
    for index, scenario in enumerate(REQUIRED_SCENARIOS):
        _action(requirement, f"a{index}", scenario)
        readiness = selectors.readiness_for_project(personas["alpha"])
        assert [v for v, _ in readiness.missing] == [
            s.value for s in REQUIRED_SCENARIOS[index + 1 :]
        ]
    assert readiness.ready


def test_readiness_panel_on_the_project_page(personas, login, requirement) -> None:
    _action(requirement, "real-job", "real_task")
    body = (
        login(personas["bob"])
        .get(reverse("evaluations:project_detail", kwargs={"slug": "alpha"}))
        .content.decode()
    )
    assert 'data-scenario="resource_shortage"' in body
    assert 'data-scenario="permission_overreach"' in body
    assert 'data-scenario="node_failure"' in body
    assert 'data-scenario="real_task"' not in body


# --- claims ------------------------------------------------------------------------------


def test_pasted_claims_become_flagged_requirements(personas, login, requirement) -> None:
    text = "- Supports multi-tenancy\n\n2. Elastic scaling of GPU jobs\n"
    text += "• Elastic scaling of GPU jobs\n"
    response = login(personas["bob"]).post(
        reverse("evaluations:claims_paste", kwargs={"slug": "alpha"}),
        {"text": text, "dimension": "scheduling", "owner_team": "platform", "importance": "must"},
    )
    assert response.status_code == 302
    features = list(
        Requirement.objects.filter(project=personas["alpha"]).values_list("feature", "source")
    )
    assert features == [
        ("Supports multi-tenancy", "manual"),
        ("Elastic scaling of GPU jobs", "vendor_claim"),
    ]
    page = login(personas["bob"]).get(reverse("evaluations:suite", kwargs={"slug": "alpha"}))
    assert page.content.decode().count('badge flag">not yet rewritten') == 2


# --- pages -------------------------------------------------------------------------------


def test_inline_action_editor_round_trip(personas, login, requirement) -> None:
    action = _action(requirement, "tenant-quota")
    client = login(personas["bob"])
    url = reverse("evaluations:action_detail", kwargs={"slug": "alpha", "action_id": action.pk})
    editor = client.get(url, headers={"HX-Request": "true"})
    assert (
        editor.content.decode()
        .lstrip()
        .startswith(f'<article class="requirement card" id="requirement-{requirement.pk}"')
    )
    assert f'name="act{action.pk}-question"' in editor.content.decode()
    prefix = f"act{action.pk}-"
    data = {
        prefix + "key": "tenant-quota-limit",
        prefix + "scenario": "resource_shortage",
        prefix + "question": "What happens at the quota?",
        prefix + "steps": "",
        prefix + "expected_evidence": "",
        prefix + "pass_criterion": "A clear refusal.",
    }
    saved = client.post(url, data, headers={"HX-Request": "true"})
    assert saved.status_code == 200
    assert "tenant-quota-limit" in saved.content.decode()
    bad = client.post(
        url,
        {**data, prefix + "scenario": "magic", prefix + "question": ""},
        headers={"HX-Request": "true"},
    )
    assert bad.status_code == 422
    action.refresh_from_db()
    assert (action.key, action.scenario) == ("tenant-quota-limit", "resource_shortage")


def test_add_action_with_a_clashing_key_is_a_form_error(personas, login, requirement) -> None:
    _action(requirement, "taken")
    prefix = f"new{requirement.pk}-"
    response = login(personas["bob"]).post(
        reverse(
            "evaluations:action_add", kwargs={"slug": "alpha", "requirement_id": requirement.pk}
        ),
        {
            prefix + "key": "taken",
            prefix + "scenario": "real_task",
            prefix + "question": "q",
            prefix + "pass_criterion": "p",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 422
    assert "already used" in response.content.decode()
    assert AcceptanceAction.objects.count() == 1


def test_reorder_actions(personas, login, requirement) -> None:
    a, b, c = (_action(requirement, key) for key in ("a", "b", "c"))
    client = login(personas["bob"])
    url = reverse("evaluations:action_move", kwargs={"slug": "alpha", "action_id": c.pk})
    client.post(url, {"direction": "up"}, headers={"HX-Request": "true"})
    order = list(
        AcceptanceAction.objects.filter(requirement=requirement).values_list("key", flat=True)
    )
    assert order == ["a", "c", "b"]
    client.post(
        reverse("evaluations:action_move", kwargs={"slug": "alpha", "action_id": a.pk}),
        {"direction": "up"},
    )
    assert (
        list(AcceptanceAction.objects.filter(requirement=requirement).values_list("key", flat=True))
        == order
    )
    assert client.post(url, {"direction": "sideways"}).status_code == 400
    # The move is in the history, by whom; the move past the top changed nothing and is not.
    moves = ProjectEvent.objects.filter(project=personas["alpha"], verb="action.reordered")
    assert [(e.actor_name, e.subject, e.after["position"]) for e in moves] == [("bob", "c", 2)]


def test_filters(personas, login, requirement, templates) -> None:
    services.template_set_apply(
        project=personas["alpha"],
        template_set=TemplateSet.objects.get(key="controlled-failures"),
        actor=None,
    )
    client = login(personas["bob"])
    url = reverse("evaluations:suite", kwargs={"slug": "alpha"})
    body = client.get(
        url, {"scenario": "node_failure"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert body.lstrip().startswith('<div id="suite">')
    assert "scenario-node_failure" in body
    assert "scenario-resource_shortage" not in body
    assert "Supports multi-tenancy" not in body  # it has no node-failure action
    by_team = client.get(url, {"team": "business"}).content.decode()
    assert "No requirement matches these filters." in by_team
    assert client.get(url, {"dimension": "nonsense"}).status_code == 200


def test_suite_page_queries_do_not_grow(
    personas, login, templates, django_assert_max_num_queries
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = login(personas["bob"])
    url = reverse("evaluations:suite", kwargs={"slug": "alpha"})
    services.template_set_apply(
        project=personas["alpha"],
        template_set=TemplateSet.objects.get(key="elasticity"),
        actor=None,
    )
    with CaptureQueriesContext(connection) as small:
        client.get(url)
    for key in ("controlled-failures", "integration-checklist", "multi-tenancy"):
        services.template_set_apply(
            project=personas["alpha"], template_set=TemplateSet.objects.get(key=key), actor=None
        )
    with CaptureQueriesContext(connection) as large:
        client.get(url)
    assert len(large.captured_queries) == len(small.captured_queries)


def test_template_preview_and_apply_pages(personas, login, templates) -> None:
    client = login(personas["bob"])
    url = reverse("evaluations:template_apply", kwargs={"slug": "alpha", "set_key": "elasticity"})
    preview = client.get(url)
    assert preview.status_code == 200
    assert AcceptanceAction.objects.count() == 0
    offered = re.findall(r'name="actions" value="([^"]+)" checked', preview.content.decode())
    assert len(offered) > 2  # every planned action ticked at first
    refused = client.post(url, {"language": "en"})  # nothing ticked: nothing added
    assert refused.status_code == 200 and "Choose at least one action" in refused.content.decode()
    unknown = client.post(url, {"language": "en", "actions": ["no-such-action"]})
    assert unknown.status_code == 200 and AcceptanceAction.objects.count() == 0
    # Two ticked, the rest left out: only those two are added, and said so.
    answer = client.post(url, {"language": "en", "actions": offered[:2]}, follow=True)
    assert set(AcceptanceAction.objects.values_list("template_key", flat=True)) == set(offered[:2])
    assert f"{len(offered) - 2} actions of the set were left out" in answer.content.decode()
    # Applying again offers only what is not there yet.
    again = client.get(url).content.decode()
    rest = re.findall(r'name="actions" value="([^"]+)" checked', again)
    assert set(rest) == set(offered[2:])
    assert client.post(url, {"language": "en", "actions": rest}).status_code == 302
    created = AcceptanceAction.objects.count()
    assert created == len(offered)
    observer = login(personas["dave"])
    assert observer.post(url, {"language": "en", "actions": rest}).status_code == 403


def test_demo_has_a_realistic_suite(personas, settings, tmp_path) -> None:
    from io import StringIO

    from django.core.management import call_command

    settings.MEDIA_ROOT = str(tmp_path / "media")  # the demo stores evidence files
    call_command("demo", stdout=StringIO())
    readiness = selectors.readiness_for_project(
        selectors.project_for_user(
            __import__("django.contrib.auth", fromlist=["get_user_model"])
            .get_user_model()
            .objects.get(username="platform"),
            "demo",
        )
    )
    assert readiness.ready
    assert readiness.action_total >= 40
    assert len(readiness.candidates_in_play) >= 3


def test_actions_api_lists_keys_for_members_only(personas, login, requirement) -> None:
    _action(requirement, "tenant-audit", "permission_overreach")
    url = reverse("api_action_list", kwargs={"slug": "alpha"})
    data = login(personas["bob"]).get(url).json()
    assert data["count"] == 1
    assert data["actions"][0] == {
        "key": "tenant-audit",
        "requirement": "Supports multi-tenancy",
        "requirement_id": requirement.pk,
        "dimension": "tenancy",
        "owner_team": "platform",
        "scenario": "permission_overreach",
        "question": "Does tenant-audit work?",
        "pass_criterion": "It does.",
    }
    assert login(personas["charlie"]).get(url).status_code == 404


def test_the_suite_page_has_contents_that_follow_the_filters(personas, templates, login) -> None:
    project = personas["alpha"]
    services.template_set_apply(
        project=project, template_set=TemplateSet.objects.get(key="multi-tenancy"), actor=None
    )
    client = login(personas["bob"])
    url = reverse("evaluations:suite", args=["alpha"])
    page = client.get(url).content.decode()
    contents = page.split('class="suite-toc')[1].split("</details>")[0]
    for requirement in Requirement.objects.filter(project=project):
        assert f'href="#requirement-{requirement.pk}"' in contents
        assert f'id="requirement-{requirement.pk}"' in page
    filtered = client.get(url, {"scenario": "node_failure"}).content.decode()
    shown = (
        filtered.split('class="suite-toc')[1].split("</details>")[0]
        if "suite-toc" in filtered
        else ""
    )
    assert shown.count('href="#requirement-') < contents.count('href="#requirement-')
