from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReportsConfig(AppConfig):
    name = "reports"
    verbose_name = _("Procurement sheets")

    def ready(self) -> None:
        from reports import (
            checks,  # noqa: F401 - registers the signing certificate check
            schema,  # noqa: F401 - registers the verify endpoint's auth scheme
        )
