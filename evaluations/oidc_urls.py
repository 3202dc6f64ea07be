"""OpenID Connect sign-in, mounted at /accounts/oidc/ by the root URLconf. Both views send the
browser back to the login page while OIDC is not configured."""

from django.urls import path

from evaluations.views.auth import OidcCallbackView, OidcStartView

urlpatterns = [
    path("authenticate/", OidcStartView.as_view(), name="oidc_authentication_init"),
    path("callback/", OidcCallbackView.as_view(), name="oidc_authentication_callback"),
]
