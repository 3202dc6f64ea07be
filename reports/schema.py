"""OpenAPI description of the verify endpoint's session scheme (loaded by ReportsConfig.ready)."""

from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class VerifyingSessionScheme(OpenApiAuthenticationExtension):
    target_class = "reports.api.views.VerifyingSessionAuthentication"
    name = "verifySession"  # the session cookie, without a CSRF token

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "cookie", "name": settings.SESSION_COOKIE_NAME}
