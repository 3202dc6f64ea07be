from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WorkbenchConfig(AppConfig):
    name = "workbench"
    verbose_name = _("Workbench")

    def ready(self) -> None:
        from workbench.logs import connect_request_signals

        connect_request_signals()
