"""What the Django admin may do with project data: read it. Every change goes through the
services, which check the rules and write the project history; an admin form would bypass both."""

from typing import Any

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Lists and shows rows; adds, changes and deletes nothing."""

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
