"""Local accounts: a user name and a password kept here.

`LOCAL_ACCOUNTS=false` refuses every local password but a superuser's, so the accounts made
with `manage.py createsuperuser` stay a way in when the directory or the identity provider is
down; sessions of other local logins end with it.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest


class LocalAccountsBackend(ModelBackend):
    def user_can_authenticate(self, user: Any) -> bool:
        if not super().user_can_authenticate(user):
            return False
        return bool(settings.LOCAL_ACCOUNTS or getattr(user, "is_superuser", False))


def axes_exempt(request: HttpRequest, credentials: dict[str, Any] | None) -> bool:
    """django-axes counts password logins only: an OIDC callback has no user name or password
    (the identity provider throttles its own sign-in page)."""
    if (credentials or {}).get("username"):
        return False
    return not request.POST.get("username")
