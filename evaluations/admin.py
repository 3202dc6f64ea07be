from django.contrib import admin

from evaluations.models import Candidate, Membership, Project, ProjectEvent, Solution
from workbench.admin import ReadOnlyAdmin, ReadOnlyInline


@admin.register(Solution)
class SolutionAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "name_en", "name_zh", "route", "position"]
    list_filter = ["kind"]
    search_fields = ["key", "name_en", "name_zh"]
    ordering = ["kind", "position"]


class MembershipInline(ReadOnlyInline):
    model = Membership


# Project data is read here and changed on the project's pages (services, history, rules).
@admin.register(Project)
class ProjectAdmin(ReadOnlyAdmin):
    list_display = ["name", "slug", "phase", "updated_at"]
    list_filter = ["phase"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


@admin.register(Candidate)
class CandidateAdmin(ReadOnlyAdmin):
    list_display = ["project", "slug", "solution", "tier", "version"]
    list_filter = ["tier"]
    list_select_related = ["project", "solution"]


@admin.register(ProjectEvent)
class ProjectEventAdmin(ReadOnlyAdmin):
    list_display = ["project", "seq", "at", "actor_name", "verb", "subject"]
    list_select_related = ["project"]
    readonly_fields = [
        "project",
        "seq",
        "actor",
        "actor_name",
        "at",
        "verb",
        "subject",
        "before",
        "after",
        "prev_hash",
        "hash",
    ]
    # The history is a hash chain (evaluations.audit): only the services append to it.
