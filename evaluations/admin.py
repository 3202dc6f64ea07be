from django.contrib import admin

from evaluations.models import Candidate, Membership, Project, ProjectEvent, Solution


@admin.register(Solution)
class SolutionAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "name_en", "name_zh", "route", "position"]
    list_filter = ["kind"]
    search_fields = ["key", "name_en", "name_zh"]
    ordering = ["kind", "position"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "phase", "updated_at"]
    list_filter = ["phase"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ["project", "slug", "solution", "tier", "version"]
    list_filter = ["tier"]
    list_select_related = ["project", "solution"]


@admin.register(ProjectEvent)
class ProjectEventAdmin(admin.ModelAdmin):
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

    # The history is a hash chain (evaluations.audit): nothing here may add, change or remove
    # an entry; only the services append.
    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False
