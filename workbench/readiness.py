"""Readiness: whether this process can serve its pages, checked part by part.

`/healthz/` says the process is alive; `/readyz/` says it can do its work: the database
answers, the broker takes connections, every static file the base page names is in the
manifest and on disk (production serves hashed names, so a missing `collectstatic` breaks every
page while the process looks healthy), and the configuration checks that other apps register
under the `readiness` tag pass (the signing certificate, the credentials keys).

Problems name the part and the reason, never a secret: the full error goes to the log.
"""

import logging
import re
from dataclasses import dataclass

from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core import checks
from django.db import connection
from django.http import HttpRequest
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

TAG = "readiness"
BROKER_TIMEOUT_S = 2.0
_STATIC_REFERENCE = re.compile(r"""(?:href|src)="([^"]+)\"""")


@dataclass(frozen=True)
class Part:
    name: str
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "ok": self.ok, "problem": self.problem}


def _failed(name: str, exc: BaseException) -> Part:
    logger.warning("readiness: %s failed", name, exc_info=exc)
    return Part(name, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")


def database() -> Part:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - any failure means not ready
        return _failed("database", exc)
    return Part("database")


def broker() -> Part:
    from workbench.celery import app

    try:
        with app.connection_for_write(connect_timeout=BROKER_TIMEOUT_S) as conn:
            conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001
        return _failed("broker", exc)
    return Part("broker")


def static_files(request: HttpRequest) -> Part:
    """Render the base page the way every page does and find each static file it names."""
    try:
        html = render_to_string("base.html", request=request)
    except Exception as exc:  # noqa: BLE001 - e.g. "Missing staticfiles manifest entry"
        return _failed("static_files", exc)
    prefix = str(settings.STATIC_URL)
    missing = [
        url
        for url in _STATIC_REFERENCE.findall(html)
        if url.startswith(prefix) and not _served(url[len(prefix) :])
    ]
    if missing:
        return Part("static_files", "not on disk: " + ", ".join(missing))
    return Part("static_files")


def _served(name: str) -> bool:
    """Production serves STATIC_ROOT (WhiteNoise); development serves the source folders."""
    if staticfiles_storage.exists(name):
        return True
    return not settings.PRODUCTION and finders.find(name) is not None


def _name(check: object) -> str:
    return str(getattr(check, "__name__", check))


def configuration() -> list[Part]:
    """Each check registered with the `readiness` tag, named by its other tag."""
    parts = []
    for check in sorted(checks.registry.registry.get_checks(), key=_name):
        tags = getattr(check, "tags", ())
        if TAG not in tags:
            continue
        name = next((t for t in tags if t != TAG), _name(check))
        try:
            errors = [e for e in check(app_configs=None, databases=None) if e.level >= checks.ERROR]
        except Exception as exc:  # noqa: BLE001
            parts.append(_failed(name, exc))
            continue
        parts.append(Part(name, "; ".join(f"{e.id}: {e.msg}" for e in errors)))
    return parts


def readiness(request: HttpRequest) -> list[Part]:
    return [database(), broker(), static_files(request), *configuration()]
