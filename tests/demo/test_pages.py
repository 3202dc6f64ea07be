"""A first look at the demo project: its pages show the story."""

import pytest
from django.urls import reverse

from evaluations.models import Project

pytestmark = pytest.mark.django_db


def test_the_pages_tell_the_story(demo: Project, login) -> None:
    client = login(demo.memberships.get(role="observer").user)
    slug = {"slug": "demo"}
    runs = client.get(reverse("poc:runs", kwargs=slug)).content.decode()
    assert "Kubernetes acceptance, nightly #105" in runs and "slurm-acceptance-105" in runs
    gaps = client.get(reverse("poc:integration_gaps", kwargs=slug)).content.decode()
    assert "Dex in front of the API server" in gaps
    grid = client.get(reverse("poc:responsibilities", kwargs=slug)).content.decode()
    assert "Wang Lei" in grid and "Run:ai customer success manager" in grid
    client.cookies["django_language"] = "zh-hans"
    matrix = client.get(reverse("poc:matrix", kwargs=slug)).content.decode()
    assert "需集成" in matrix and "未覆盖" in matrix  # outcomes in the reader's language
