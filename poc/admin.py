from typing import Any

from django.contrib import admin

from poc.models import Boundary, Evidence, Responsibility, Result


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    """Results are append-only: the admin can read them, never change or delete them."""

    list_display = ["recorded_at", "project", "candidate", "action", "outcome", "source"]
    list_filter = ["outcome", "source"]
    list_select_related = ["project", "candidate", "candidate__solution", "action"]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Evidence)
class EvidenceAdmin(admin.ModelAdmin):
    list_display = ["uploaded_at", "project", "name", "kind", "size", "sha256"]
    list_select_related = ["project"]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


admin.site.register(Responsibility)
admin.site.register(Boundary)
