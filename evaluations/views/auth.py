"""The login page; in development it lists the demo accounts that `make run` created."""

from typing import Any

from django.conf import settings
from django.contrib.auth.views import LoginView

from evaluations.selectors import demo_accounts
from evaluations.services.demo import DEMO_PASSWORD


class WorkbenchLoginView(LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if not settings.PRODUCTION:  # production has no default accounts to show
            context["demo_accounts"] = demo_accounts()
            context["demo_password"] = DEMO_PASSWORD
        return context
