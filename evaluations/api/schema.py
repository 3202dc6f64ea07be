"""OpenAPI description of the bearer-token scheme (loaded by EvaluationsConfig.ready)."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "evaluations.api.authentication.BearerTokenAuthentication"
    name = "projectToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A project-scoped token (wbt_...), created by a project admin.",
        }


class RawBodySessionScheme(OpenApiAuthenticationExtension):
    """The session on the JUnit endpoint: the cookie, with the CSRF token in its header."""

    target_class = "evaluations.api.authentication.RawBodySessionAuthentication"
    name = "sessionWithCsrfHeader"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        from django.conf import settings

        return {"type": "apiKey", "in": "cookie", "name": settings.SESSION_COOKIE_NAME}
