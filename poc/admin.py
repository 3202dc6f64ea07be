from django.contrib import admin

from poc.models import (
    Evidence,
    Responsibility,
    Result,
)
from workbench.admin import ReadOnlyAdmin


@admin.register(Result)
class ResultAdmin(ReadOnlyAdmin):
    """Results are append-only: the admin can read them, never change or delete them."""

    list_display = ["recorded_at", "project", "candidate", "action", "outcome", "source"]
    list_filter = ["outcome", "source"]
    list_select_related = ["project", "candidate", "candidate__solution", "action"]


@admin.register(Evidence)
class EvidenceAdmin(ReadOnlyAdmin):
    list_display = ["uploaded_at", "project", "name", "kind", "size", "sha256"]
    list_select_related = ["project"]


@admin.register(Responsibility)
class ResponsibilityAdmin(ReadOnlyAdmin):
    list_display = ["project", "candidate"]
