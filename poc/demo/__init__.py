"""The demo project's PoC (development only): GPU probe runs from real captures, two CI
pipelines' nightly runs, what people recorded by hand with their evidence, and who holds each
area of responsibility, so a first look finds a review near its end. Written once: a project
whose demo history exists already is left as its people have made it since."""

from django.contrib.auth.models import User
from django.db import transaction

from evaluations.models import Project, TeamRole
from poc.demo.ci import FIRST_RUN, ci_history
from poc.demo.followups import followups
from poc.demo.people import people_results
from poc.demo.responsibilities import responsibilities
from poc.models import Run
from poc.probes.demo import demo_probes

__all__ = ["demo_built", "demo_followups", "demo_people", "demo_results"]


def demo_people() -> dict[str, User]:
    """The demo account of each team role, by role."""
    return {u.username: u for u in User.objects.filter(username__in=TeamRole.values)}


def demo_built(project: Project) -> bool:
    """Whether the demo's PoC was written in this project already."""
    return Run.objects.filter(project=project, external_id=FIRST_RUN).exists()


@transaction.atomic
def demo_results(project: Project) -> int:
    """Write the demo's PoC once; how many results people recorded (0 when it was written
    before). A project from an earlier demo gets what it lacks: cells, runs and areas that
    hold something already are left alone."""
    if demo_built(project):
        return 0
    people = demo_people()
    demo_probes(project, people)
    ci_history(project, people)
    recorded = people_results(project, people)
    responsibilities(project, people.get("platform"))
    return recorded


def demo_followups(project: Project) -> int:
    """The teams' work after the first revision was signed (see poc.demo.followups)."""
    return followups(project, demo_people())
