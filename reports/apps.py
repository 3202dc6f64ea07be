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
    from django.db.models import Count

    from reports.models import Notice, Sheet, SheetStatus
    from workbench.metrics import register_counts

    def sheets() -> list[tuple[str, float]]:
        rows = Sheet.objects.values_list("status").annotate(n=Count("pk")).order_by()
        return [(status, float(n)) for status, n in rows]

    def notices() -> list[tuple[str, float]]:
        pending = Notice.objects.filter(sent_at=None)
        return [
            ("waiting", float(pending.filter(attempts__lt=5).count())),
            ("given_up", float(pending.filter(attempts__gte=5).count())),
        ]

    register_counts(
        "workbench_sheets",
        "Procurement sheet revisions, by state.",
        "state",
        sheets,
        every=SheetStatus.values,
    )
    register_counts("workbench_notices_unsent", "E-mail notices not sent.", "state", notices)
