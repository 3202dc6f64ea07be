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
            "phase": "shortlisting",
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
        {"name": "Alpha", "phase": "poc", "workloads": ["mining"], "existing_base": "mainframe"},
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
