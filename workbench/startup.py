"""Production processes refuse to start on a configuration error.

`manage.py` commands run Django's system checks; the web server (WSGI/ASGI) and the Celery
worker do not. They call `refuse_to_start_on_errors` instead, so a production deployment with,
say, no signing certificate stops at once with the reason instead of failing on first use.
"""

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured


def refuse_to_start_on_errors(component: str) -> None:
    if not settings.PRODUCTION:
        return
    errors = [e for e in checks.run_checks() if e.level >= checks.ERROR and not e.is_silenced()]
    if errors:
        raise ImproperlyConfigured(
            f"{component} cannot start:\n" + "\n".join(f"  {e}" for e in errors)
        )
