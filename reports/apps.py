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

        _register_metrics()


def _register_metrics() -> None:
    from reports.models import SheetStatus
    from reports.selectors import notice_counts, sheet_counts
    from workbench.metrics import register_counts

    register_counts(
        "workbench_sheets",
        "Procurement sheet revisions, by state.",
        "state",
        sheet_counts,
        every=SheetStatus.values,
    )
    register_counts("workbench_notices_unsent", "E-mail notices not sent.", "state", notice_counts)
