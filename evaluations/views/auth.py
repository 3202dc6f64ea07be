"""The login page and the OpenID Connect sign-in; in development the page lists the demo
accounts that `make run` created."""

import logging
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import LoginView, LogoutView
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.generic import View
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from evaluations.demo import DEMO_PASSWORD
from evaluations.selectors import demo_accounts
from evaluations.sso import oidc
from evaluations.sso.extra import ldap_enabled

logger = logging.getLogger(__name__)


class WorkbenchLoginView(LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if not settings.PRODUCTION:  # production has no default accounts to show
            context["demo_accounts"] = demo_accounts()
            context["demo_password"] = DEMO_PASSWORD
        context["oidc_label"] = oidc.button_label() if oidc.enabled() else ""
        context["ldap_enabled"] = ldap_enabled()
        # With neither local accounts nor LDAP the form is only the superusers' way in.
        context["password_form_open"] = settings.LOCAL_ACCOUNTS or ldap_enabled()
        return context


def _failed(request: HttpRequest) -> HttpResponse:
    if oidc.enabled():
        messages.error(
            request,
            _("Signing in with %(provider)s did not succeed. Try again, or ask an administrator.")
            % {"provider": oidc.button_label()},
        )
    return HttpResponseRedirect(reverse("login"))


class OidcStartView(OIDCAuthenticationRequestView):
    """Sends the browser to the provider's authorization endpoint (found by discovery)."""

    http_method_names = ["get", "post"]

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the library reads its endpoint from settings here

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc.enabled():
            return HttpResponseRedirect(reverse("login"))
        try:
            self.OIDC_OP_AUTH_ENDPOINT = oidc.provider().authorization_endpoint
        except oidc.ProviderUnavailable as exc:
            logger.warning("OIDC sign-in cannot start: %s", exc)
            return _failed(request)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_CLIENT_ID
        return super().get(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        return _to_login(request)


class OidcCallbackView(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back; failures come back to the login page with a
    message instead of an error page."""

    http_method_names = ["get", "post"]

    @property
    def failure_url(self) -> str:
        return reverse("login")

    def login_failure(self) -> HttpResponse:
        return _failed(self.request)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc.enabled():
            return HttpResponseRedirect(reverse("login"))
        try:
            return super().get(request)
        except SuspiciousOperation as exc:  # a state this session did not start
            logger.warning("OIDC callback refused: %s", exc)
            return _failed(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        return _to_login(request)


def _to_login(request: HttpRequest) -> HttpResponse:
    """Only a GET starts or completes a sign-in; anything else goes back to the login page."""
    return HttpResponseRedirect(reverse("login"))


class WorkbenchLogoutView(LogoutView):
    """Log out here; a session that came from the OIDC provider is then ended there too, and
    the provider sends the browser back to the login page."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        id_token = request.session.get("oidc_id_token")
        response = super().post(request, *args, **kwargs)
        back_to = request.build_absolute_uri(reverse("login"))
        url = oidc.provider_logout_url(id_token, back_to)
        return HttpResponseRedirect(url) if url else response
