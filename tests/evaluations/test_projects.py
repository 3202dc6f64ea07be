"""Creating projects and answering the four framing questions."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evaluations import services
from evaluations.models import Membership, Project, ProjectEvent

pytestmark = pytest.mark.django_db


def test_creator_becomes_admin_in_their_role(personas, login) -> None:
    client = login(personas["bob"])
    response = client.post(
        reverse("evaluations:project_create"),
        {"name": "Inference pool 2027", "slug": "", "description": "", "role": "architecture"},
    )
    project = Project.objects.get(slug="inference-pool-2027")
    assert response["Location"] == reverse(
        "evaluations:project_detail", kwargs={"slug": project.slug}
    )
    membership = Membership.objects.get(project=project)
    assert (membership.user, membership.role, membership.is_admin) == (
        personas["bob"],
        "architecture",
        True,
    )


def test_duplicate_or_reserved_slug_is_a_form_error(personas, login) -> None:
    client = login(personas["bob"])
    url = reverse("evaluations:project_create")
    taken = client.post(url, {"name": "Again", "slug": "alpha", "role": "ops"})
    assert taken.status_code == 200
    assert "already exists" in taken.content.decode()
    reserved = client.post(url, {"name": "New", "slug": "new", "role": "ops"})
    assert "reserved" in reserved.content.decode()
    assert Project.objects.count() == 2


def test_framing_form_saves_answers_and_history(personas, login) -> None:
    client = login(personas["bob"])
    url = reverse("evaluations:project_framing", kwargs={"slug": "alpha"})
    response = client.post(
        url,
        {
            "name": "Alpha",
            "description": "",
            "workloads": ["training", "inference"],
            "existing_base": "kubernetes",
            "layer_needed": "queues-quotas",
            "supplier_needs": ["long-term-support"],
        },
    )
    assert response.status_code == 302
    project = Project.objects.get(slug="alpha")
    assert project.workloads == ["training", "inference"]
    assert project.framing_complete
    event = ProjectEvent.objects.get(project=project, verb="project.updated")
    assert event.after["existing_base"] == "kubernetes"
    assert event.before["existing_base"] == ""


def test_framing_rejects_unknown_answers(personas, login) -> None:
    client = login(personas["bob"])
    url = reverse("evaluations:project_framing", kwargs={"slug": "alpha"})
    response = client.post(
        url,
        {"name": "Alpha", "workloads": ["mining"], "existing_base": "mainframe"},
    )
    assert response.status_code == 422
    assert "Select a valid choice" in response.content.decode()
    assert Project.objects.get(slug="alpha").workloads == []


def test_model_refuses_unknown_list_values(personas) -> None:
    with pytest.raises(ValidationError, match="Unknown values: mining"):
        services.project_update(
            project=personas["alpha"], actor=personas["bob"], workloads=["mining"]
        )
    personas["alpha"].refresh_from_db()
    assert personas["alpha"].workloads == []


def test_history_reads_in_the_readers_words(personas, login) -> None:
    from evaluations.history_labels import VERB_LABELS
    from evaluations.services import candidate_update

    candidate_update(
        candidate=personas["volcano"],
        actor=personas["alice"],
        tier="alternative",
        decided_by_step="workload",
        reason="later",
    )
    client = login(personas["bob"])
    url = reverse("evaluations:project_history", kwargs={"slug": "alpha"})
    page = client.get(url).content.decode()
    assert "moved a candidate to another tier" in page
    assert "Tier: <del>Validate first</del> → Validate as alternative" in page
    assert "validate_first" not in page
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    page = client.get(url).content.decode()
    assert "层级: <del>优先验证</del> → 备选验证" in page
    # Every verb the services record has words (a verb without any shows as its code).
    import re
    from pathlib import Path

    recorded = set()
    root = Path(__file__).resolve().parents[2]
    for app in ("workbench", "evaluations", "poc", "reports"):  # nested apps' services too
        for path in (root / app).rglob("*.py"):
            if "services" in path.relative_to(root).parts or path.name == "services.py":
                recorded |= set(re.findall(r'verb(?:=| = )"([a-z_]+\.[a-z_]+)"', path.read_text()))
    assert {"terms.changed", "probe.finished"} <= recorded
    assert recorded and recorded <= set(VERB_LABELS), recorded - set(VERB_LABELS)
