from django.contrib.auth.models import User
from django.http import Http404

from evaluations.models import Membership, Project
from reports.models import Sheet, SignOff


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


def signoffs_for_sheet(sheet: Sheet) -> list[SignOff]:
    return list(sheet.signoffs.select_related("user"))


def signing_roles_of(user: User, sheet: Sheet) -> set[str]:
    """The roles this person holds in the sheet's project that sign this sheet."""
    held = Membership.objects.filter(project=sheet.project, user=user).values_list(
        "role", flat=True
    )
    return set(held) & set(sheet.required_roles)


def sheet_is_stale(sheet: Sheet) -> bool:
    """Whether the project has changed since this revision was frozen (rebuilds the snapshot:
    call it where a decision depends on it, not on every poll)."""
    from reports.snapshot import snapshot_and_hash

    _snapshot, _text, digest = snapshot_and_hash(
        sheet.project, language=sheet.language, candidate_slugs=sheet.candidate_slugs
    )
    return digest != sheet.sha256
