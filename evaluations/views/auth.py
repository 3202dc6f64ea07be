"""The login page; in development it lists the demo accounts that `make run` created."""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.views import LoginView
from django.utils.translation import gettext as _

from evaluations.models import Membership, TeamRole
from evaluations.services.demo import DEMO_ADMIN, DEMO_PASSWORD, DEMO_SLUG


class WorkbenchLoginView(LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if not settings.PRODUCTION:  # production has no default accounts to show
            context["demo_accounts"] = demo_accounts()
            context["demo_password"] = DEMO_PASSWORD
        return context


def demo_accounts() -> list[tuple[str, str]]:
    """(username, what they do) for the demo's people (each named after their team role) and
    the demo administrator, as far as they exist."""
    labels = dict(TeamRole.choices)
    rows = (
        Membership.objects.filter(project__slug=DEMO_SLUG)
        .values_list("user__username", "role")
        .order_by("role")
    )
    accounts = [(username, str(labels[role])) for username, role in rows if username == role]
    if get_user_model().objects.filter(username=DEMO_ADMIN, is_superuser=True).exists():
        accounts.append((DEMO_ADMIN, _("administrator (admin site, System page)")))
    return accounts
