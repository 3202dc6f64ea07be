from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProcurementConfig(AppConfig):
    name = "reports.procurement"
    label = "procurement"
    verbose_name = _("Procurement")
