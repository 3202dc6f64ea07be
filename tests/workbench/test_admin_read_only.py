"""The Django admin reads project data and changes none of it (changes go through the services,
which check the rules and write the history); the catalogue stays editable there."""

from typing import Any

import pytest
from django.contrib import admin
from django.urls import reverse

from evaluations.models import Candidate, Project, ProjectEvent, Solution
from evaluations.services import event_record
from poc.models import (
    Evidence,
    Responsibility,
    Result,
)
from reports.procurement.models import Confirmation, TermEntry
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PROJECT_DATA = [
    Project,
    Candidate,
    ProjectEvent,
    Result,
    Evidence,
    Responsibility,
    TermEntry,
    Confirmation,
]


@pytest.fixture
def superuser_client(client: Any) -> Any:
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def _url(model: Any, view: str, *args: Any) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


@pytest.mark.parametrize("model", PROJECT_DATA, ids=lambda m: m.__name__)
def test_project_data_is_read_only(superuser_client: Any, personas: Any, model: Any) -> None:
    assert model in admin.site._registry
    assert superuser_client.get(_url(model, "changelist")).status_code == 200
    assert superuser_client.get(_url(model, "add")).status_code == 403


def test_a_project_can_be_read_but_not_changed_or_deleted(superuser_client, personas) -> None:
    alpha = personas["alpha"]
    event = event_record(project=alpha, actor=None, verb="project.updated", subject="x")
    page = superuser_client.get(_url(Project, "change", alpha.pk))
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    refused = superuser_client.post(_url(Project, "change", alpha.pk), {"name": "Renamed"})
    assert refused.status_code == 403
    assert (
        superuser_client.post(_url(Project, "delete", alpha.pk), {"post": "yes"}).status_code == 403
    )
    assert (
        superuser_client.post(_url(ProjectEvent, "delete", event.pk), {"post": "yes"}).status_code
        == 403
    )
    alpha.refresh_from_db()
    assert alpha.name == "Alpha" and ProjectEvent.objects.filter(pk=event.pk).exists()


def test_the_catalogue_stays_editable(superuser_client, personas) -> None:
    assert superuser_client.get(_url(Solution, "add")).status_code == 200
