"""Every page a newcomer opens of the demo, once its sheet story is carried to the end,
answers in English and in Chinese."""

import pytest
from django.urls import reverse

from evaluations.models import Project
from poc.models import Run
from poc.probes.models import Cluster, ProbeRun

pytestmark = pytest.mark.django_db

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
