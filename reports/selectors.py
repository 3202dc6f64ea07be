from django.http import Http404

from evaluations.models import Project
from reports.models import Sheet


def sheets_for_project(project: Project) -> list[Sheet]:
    return list(
        Sheet.objects.filter(project=project)
        .select_related("generated_by")
        .defer("snapshot", "snapshot_json")
    )


def sheet_for_project(project: Project, revision: int) -> Sheet:
    sheet = (
        Sheet.objects.filter(project=project, revision=revision)
        .select_related("project", "generated_by")
        .first()
    )
    if sheet is None:
        raise Http404
    return sheet


def sheet_by_id(sheet_id: int) -> Sheet | None:
    return Sheet.objects.filter(pk=sheet_id).select_related("project").first()
