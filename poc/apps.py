from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PocConfig(AppConfig):
    name = "poc"
    verbose_name = _("Proof of concept")

    def ready(self) -> None:
        from poc import checks  # noqa: F401 - registers the credentials key check
        from poc.api import schema  # noqa: F401 - registers the OpenAPI auth extension
