"""OpenID Connect sign-in (authorization code flow with PKCE), through mozilla-django-oidc.

The provider's endpoints come from its discovery document (`OIDC_ISSUER` +
`/.well-known/openid-configuration`), fetched once per process when first needed and checked at
start-up (`evaluations.sso.checks`); any of them may be given instead (`OIDC_*_ENDPOINT`,
`OIDC_JWKS_URI`). Beyond the library's checks (signature against the provider's keys, nonce,
expiry), the ID token's issuer and audience must be ours and the userinfo's subject the ID
token's. An account is found by its issuer and subject only (`SsoIdentity`).
"""

import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

logger = logging.getLogger(__name__)

ENDPOINTS = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")
DISCOVERY_PATH = "/.well-known/openid-configuration"


class ProviderUnavailable(Exception):
    """The issuer's discovery document cannot be had, or does not describe this issuer.

    `unreachable`: no answer at all (refused, timed out, no such host), as opposed to an answer
    that shows the configuration is wrong."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_uri: str
    end_session_endpoint: str = ""  # optional: where the provider's own session is ended


_discovered: dict[tuple[str, tuple[str, ...]], Provider] = {}


def enabled() -> bool:
    return bool(settings.OIDC_ISSUER)


def button_label() -> str:
    """What the sign-in button names: OIDC_BUTTON_LABEL, else the issuer's host."""
    if settings.OIDC_BUTTON_LABEL:
        return str(settings.OIDC_BUTTON_LABEL)
    return str(settings.OIDC_ISSUER).split("://", 1)[-1].split("/", 1)[0]


def discover(issuer: str) -> dict[str, Any]:
    """The issuer's discovery document, checked to name this very issuer."""
    url = issuer + DISCOVERY_PATH
    try:
        response = requests.get(url, timeout=settings.SSO_TIMEOUT_S, allow_redirects=False)
    except requests.RequestException as exc:
        raise ProviderUnavailable(
            f"{url} cannot be reached ({type(exc).__name__})", unreachable=True
        ) from exc
    if response.status_code != 200:
        raise ProviderUnavailable(f"{url} answered HTTP {response.status_code}")
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise ProviderUnavailable(f"{url} is not an OpenID Connect discovery document")
    if document.get("issuer") != issuer:
        raise ProviderUnavailable(
            f"{url} describes issuer {str(document.get('issuer'))[:200]!r}, not {issuer!r}"
        )
    return document


def provider() -> Provider:
    """The configured provider's endpoints: those given in the environment, the others from
    discovery (remembered for the life of the process once found)."""
    issuer = str(settings.OIDC_ISSUER)
    given: dict[str, str] = settings.OIDC_ENDPOINTS
    key = (issuer, tuple(given.get(name, "") for name in ENDPOINTS))
    found = _discovered.get(key)
    if found is not None:
        return found
    document: dict[str, Any] = {}
    if not all(given.get(name) for name in ENDPOINTS):
        document = discover(issuer)
    endpoints = {name: given.get(name) or document.get(name) for name in ENDPOINTS}
    missing = [name for name, value in endpoints.items() if not isinstance(value, str) or not value]
    if missing:
        raise ProviderUnavailable(f"{issuer}{DISCOVERY_PATH} does not give {', '.join(missing)}")
    end_session = settings.OIDC_END_SESSION_ENDPOINT or document.get("end_session_endpoint")
    found = Provider(
        issuer=issuer,
        end_session_endpoint=end_session if isinstance(end_session, str) else "",
        **{name: str(value) for name, value in endpoints.items()},
    )
    _discovered[key] = found
    return found


def provider_logout_url(id_token: object, back_to: str) -> str | None:
    """Where to send a browser whose OIDC session just ended here so that the provider's ends
    too (RP-initiated logout: the ID token as the hint, and the way back), or None: provider
    logout is off (OIDC_PROVIDER_LOGOUT), the session did not come from the provider, the
    provider names no end-session endpoint, or it cannot be reached now."""
    if not (enabled() and settings.OIDC_PROVIDER_LOGOUT and isinstance(id_token, str)):
        return None
    try:
        endpoint = provider().end_session_endpoint
    except ProviderUnavailable as exc:
        logger.warning("OIDC: no provider logout: %s", exc)
        return None
    if not endpoint:
        return None
    query = urlencode(
        {
            "id_token_hint": id_token,
            "post_logout_redirect_uri": back_to,
            "client_id": settings.OIDC_CLIENT_ID,
        }
    )
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"


def claim_groups(claims: dict[str, Any]) -> list[str]:
    """The groups claim (OIDC_GROUPS_CLAIM) as a list of names; absent means no group."""
    value = claims.get(settings.OIDC_GROUPS_CLAIM)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, str | int)]
    logger.warning(
        "OIDC_GROUPS_CLAIM %r is a %s, not a list: no group taken from it",
        settings.OIDC_GROUPS_CLAIM,
        type(value).__name__,
    )
    return []


class OidcBackend(OIDCAuthenticationBackend):
    """Answers the OIDC callback only (a call that carries its nonce); declines when OIDC is
    not configured. Endpoints and client settings are read when used, not at construction:
    Django constructs every backend at every login, the password form's included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = get_user_model()

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:  # noqa: N802 - the library's attribute names
        return provider().token_endpoint

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:  # noqa: N802
        return provider().userinfo_endpoint

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:  # noqa: N802
        return provider().jwks_uri

    @property
    def OIDC_RP_CLIENT_ID(self) -> str:  # noqa: N802
        return str(settings.OIDC_CLIENT_ID)

    @property
    def OIDC_RP_CLIENT_SECRET(self) -> str:  # noqa: N802
        return str(settings.OIDC_CLIENT_SECRET)

    @property
    def OIDC_RP_SIGN_ALGO(self) -> str:  # noqa: N802
        return str(settings.OIDC_SIGN_ALGO)

    OIDC_RP_IDP_SIGN_KEY = None

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if not enabled() or request is None or "nonce" not in kwargs:
            return None
        try:
            return super().authenticate(request, **kwargs)
        except (requests.RequestException, ProviderUnavailable) as exc:
            logger.warning("OIDC sign-in failed: %s", exc)
            return None
        except SuspiciousOperation as exc:
            logger.warning("OIDC sign-in refused: %s", exc)
            return None

    def verify_token(self, token: str, **kwargs: Any) -> Any:
        try:
            payload = super().verify_token(token, **kwargs)
        except jwt.InvalidTokenError as exc:
            # Expired, not yet valid, malformed: the library passes these on as they are.
            raise SuspiciousOperation(f"the ID token is not valid: {exc}") from None
        if "nonce" in kwargs:  # the ID token (a signed userinfo answer comes without one)
            audience = payload.get("aud")
            audiences = audience if isinstance(audience, list) else [audience]
            if payload.get("iss") != settings.OIDC_ISSUER:
                raise SuspiciousOperation("the ID token's issuer is not OIDC_ISSUER")
            if settings.OIDC_CLIENT_ID not in audiences:
                raise SuspiciousOperation("the ID token is not meant for OIDC_CLIENT_ID")
        return payload

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        from evaluations.models import SsoProvider
        from evaluations.services import oidc_account, sso_login

        userinfo = self.get_userinfo(access_token, id_token, payload)
        subject = payload.get("sub")
        if not subject or not isinstance(userinfo, dict) or userinfo.get("sub") != subject:
            raise SuspiciousOperation("the userinfo answer is not about the ID token's subject")
        claims = {**payload, **userinfo}
        email = str(claims.get("email") or "")
        if claims.get("email_verified") is False:
            email = ""
        username = str(claims.get("preferred_username") or email.split("@")[0] or subject)
        with transaction.atomic():
            user = oidc_account(
                issuer=str(settings.OIDC_ISSUER),
                subject=str(subject),
                username=username,
                email=email,
                first_name=str(claims.get("given_name") or ""),
                last_name=str(claims.get("family_name") or ""),
            )
            if user.is_active:  # an inactive account is refused by the callback, unchanged
                sso_login(
                    user=user,
                    provider=SsoProvider.OIDC,
                    issuer=str(settings.OIDC_ISSUER),
                    subject=str(subject),
                    groups=claim_groups(claims),
                )
        return user

    def get_user(self, user_id: Any) -> Any:
        user = super().get_user(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
