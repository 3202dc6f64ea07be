"""Bearer tokens for CI: `Authorization: Bearer wbt_...`, scoped to one project."""

from typing import Any

from django.contrib.auth.models import AnonymousUser
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from evaluations.models import ApiToken
from evaluations.services.tokens import api_token_find, api_token_touch


class TokenUser(AnonymousUser):
    """The principal behind a token: authenticated for DRF, yet no person (it cannot sign)."""

    def __init__(self, token: ApiToken) -> None:
        self.token = token

    @property
    def is_authenticated(self) -> bool:  # type: ignore[override]
        return True

    @property
    def is_anonymous(self) -> bool:  # type: ignore[override]
        return False

    def __str__(self) -> str:
        return f"token {self.token.prefix}"


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if parts[0] != self.keyword:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer <token>, one token")
        token = api_token_find(parts[1])
        if token is None:
            raise exceptions.AuthenticationFailed("unknown, expired or revoked token")
        api_token_touch(token)
        return TokenUser(token), token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class RawBodySessionAuthentication(authentication.SessionAuthentication):
    """The session, with DRF's CSRF check run on the plain Django request: an endpoint that
    reads its body raw (a JUnit report) has no parser, and the check would otherwise try to
    parse that body for a form token and answer 415. The token then comes from the
    X-CSRFToken header, as from any script; the check itself is unchanged."""

    def enforce_csrf(self, request: Request) -> None:
        super().enforce_csrf(request._request)  # type: ignore[arg-type]
