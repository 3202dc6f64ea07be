"""A first look at the demo project: every page a newcomer opens answers, in English and in
Chinese, and shows the story."""

import pytest
from django.urls import reverse

from evaluations.models import Project
from poc.models import Run
from poc.probes.models import Cluster, ProbeRun

PAGES = (
    "evaluations:project_detail",
    "evaluations:suite",
    "evaluations:project_history",
    "poc:matrix",
    "poc:comparison",
    "poc:results",
    "poc:integration_gaps",
    "poc:responsibilities",
    "poc:runs",
    "poc:probes",
    "poc:clusters",
    "reports:sheets",
    "reports:progress",
    "procurement:terms",
    "procurement:costs",
    "procurement:to_confirm",
    "procurement:compatibility",
)


def _urls(project: Project) -> list[str]:
    slug = {"slug": project.slug}
    urls = [reverse(name, kwargs=slug) for name in PAGES]
    urls += [
        reverse("poc:run_detail", kwargs={**slug, "ci_run_id": pk})
        for pk in Run.objects.filter(project=project).values_list("pk", flat=True)[:3]
    ]
    urls += [
        reverse("poc:probe_run", kwargs={**slug, "run_id": pk})
        for pk in ProbeRun.objects.filter(project=project).values_list("pk", flat=True)
    ]
    urls += [
        reverse("poc:cluster", kwargs={**slug, "cluster_id": pk})
        for pk in Cluster.objects.filter(project=project).values_list("pk", flat=True)
    ]
    urls += [reverse("reports:sheet", kwargs={**slug, "revision": n}) for n in (1, 2)]
    return urls


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_page_of_the_demo_answers(finished: Project, language: str, login) -> None:
    client = login(finished.memberships.get(role="platform").user)
    client.cookies["django_language"] = language
    failing = {
        url: response.status_code
        for url in _urls(finished)
        if (response := client.get(url)).status_code != 200
    }
    assert failing == {}


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
