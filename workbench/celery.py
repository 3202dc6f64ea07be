"""The Celery application; configuration comes from Django settings (CELERY_* names)."""

import os
from typing import Any

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")

app = Celery("workbench")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from workbench.logs import connect_celery_signals  # noqa: E402 - after the app exists

connect_celery_signals()


@worker_init.connect
def _refuse_to_start_on_errors(**kwargs: Any) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from workbench.startup import refuse_to_start_on_errors

    try:
        refuse_to_start_on_errors("The worker")
    except ImproperlyConfigured as exc:
        # Celery logs and carries on after an exception in a signal handler; an exit does not.
        raise SystemExit(str(exc)) from None
