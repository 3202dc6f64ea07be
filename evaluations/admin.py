from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from evaluations import services
from evaluations.models import (
    Candidate,
    Membership,
    Project,
    ProjectEvent,
    Solution,
    SsoIdentity,
)
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


class SsoIdentityInline(ReadOnlyInline):
    model = SsoIdentity
    fields = readonly_fields = ("provider", "issuer", "subject", "groups", "last_login_at")


@admin.register(SsoIdentity)
class SsoIdentityAdmin(ReadOnlyAdmin):
    list_display = ["user", "provider", "subject", "last_login_at"]
    list_filter = ["provider"]
    list_select_related = ["user"]
    search_fields = ["subject", "user__username"]


class WorkbenchUserAdmin(UserAdmin):
    """Django's user admin, except that deactivating an account goes through the service that
    also ends its sessions and revokes its API tokens."""

    inlines = [SsoIdentityInline]
    actions = ["deactivate"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        deactivating = change and "is_active" in form.changed_data and not obj.is_active
        if deactivating:
            obj.is_active = True  # the service turns it off, with what must go with it
        super().save_model(request, obj, form, change)
        if deactivating:
            self._deactivate(request, obj)

    @admin.action(description=_("Deactivate (end sessions, revoke API tokens)"))
    def deactivate(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        for user in queryset:
            self._deactivate(request, user)

    def _deactivate(self, request: HttpRequest, user: User) -> None:
        actor = request.user if isinstance(request.user, User) else None
        withdrawn = services.user_deactivate(
            user=user, actor=actor, reason="deactivated in the admin"
        )
        self.message_user(
            request,
            _("%(user)s is inactive. Sessions ended: %(sessions)d; API tokens revoked: %(tokens)d.")
            % {"user": user, "sessions": withdrawn.sessions, "tokens": withdrawn.tokens},
        )


admin.site.unregister(User)
admin.site.register(User, WorkbenchUserAdmin)
