from django.contrib import admin

from reports.procurement.models import Confirmation, CostLine, CostModel, TermEntry
from workbench.admin import ReadOnlyAdmin


@admin.register(TermEntry)
class TermEntryAdmin(ReadOnlyAdmin):
    """Term entries are append-only: the admin reads them, the terms page records new ones."""

    list_display = ["recorded_at", "project", "candidate", "key", "basis", "current"]
    list_filter = ["basis", "current"]
    list_select_related = ["project", "candidate", "candidate__solution"]


@admin.register(Confirmation)
class ConfirmationAdmin(ReadOnlyAdmin):
    list_display = ["project", "candidate", "subject", "owner_team", "due", "closed_at"]
    list_select_related = ["project", "candidate", "candidate__solution"]


@admin.register(CostModel)
class CostModelAdmin(ReadOnlyAdmin):
    list_display = ["project", "currency", "horizon_years", "updated_at"]
    list_select_related = ["project"]


@admin.register(CostLine)
class CostLineAdmin(ReadOnlyAdmin):
    list_display = ["project", "candidate", "category", "label", "expected", "currency", "basis"]
    list_select_related = ["project", "candidate", "candidate__solution"]
