"""Reads behind the list tables of a project: every result recorded, and the acceptance actions
with how many candidates have a result for each. Each returns an unordered queryset that the
table (`workbench.tables`) filters, sorts and pages; the choices its filters offer come in one
query per list of choices."""

from django.db.models import Count, Exists, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from evaluations import selectors as evaluation_selectors
from evaluations.models import AcceptanceAction, Project, Requirement
from poc.models import Result, ResultCell

type Choices = list[tuple[str, str]]


def result_rows(project: Project) -> QuerySet[Result]:
    """Every result of the project with what a row of the results table shows."""
    return Result.objects.filter(project=project).select_related(
        "candidate__solution", "action__requirement", "recorded_by"
    )


def action_rows(project: Project) -> QuerySet[AcceptanceAction]:
    """Every acceptance action of the project with its requirement and `result_count`, the
    number of candidates with a result for it."""
    cells = ResultCell.objects.filter(action=OuterRef("pk"))
    counted = cells.order_by().values("action").annotate(n=Count("pk")).values("n")
    return (
        AcceptanceAction.objects.filter(project=project)
        .select_related("requirement")
        .annotate(result_count=Coalesce(Subquery(counted, output_field=IntegerField()), Value(0)))
    )


def actions_with_results(
    actions: QuerySet[AcceptanceAction], has: str
) -> QuerySet[AcceptanceAction]:
    """Of `actions`, those with a result for some candidate ("yes") or for none ("no")."""
    cells = Exists(ResultCell.objects.filter(action=OuterRef("pk")))
    return actions.filter(cells if has == "yes" else ~cells)


def candidate_choices(project: Project) -> Choices:
    """Every candidate of the project as (slug, "name version (slug)"), in shortlist order:
    two candidates may be versions of one product."""
    return [
        (c.slug, f"{c.solution.name} {c.version} ({c.slug})".replace("  ", " "))
        for c in evaluation_selectors.candidates_in_play(project, include_all=True)
    ]


def requirement_choices(project: Project) -> Choices:
    """Every requirement of the project as (id, feature in the reader's language)."""
    return [
        (str(r.pk), r.feature_text[:80])
        for r in Requirement.objects.filter(project=project)
        .only("pk", "feature", "translations", "template_key")
        .order_by("position", "pk")
    ]


def member_choices(project: Project) -> Choices:
    """The project's people as (user id, user name), each once, by name."""
    people = {
        m.user_id: m.user.get_username() for m in evaluation_selectors.project_members(project)
    }
    return [(str(pk), name) for pk, name in people.items()]
