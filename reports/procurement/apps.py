from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProcurementConfig(AppConfig):
    name = "reports.procurement"
    label = "procurement"
    verbose_name = _("Procurement")

    def ready(self) -> None:
        from poc.probes.recording import run_stored
        from reports.procurement.services.compatibility import chases_answered_by_run

        run_stored.connect(chases_answered_by_run, dispatch_uid="procurement.chases_answered")
