from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PocConfig(AppConfig):
    name = "poc"
    verbose_name = _("Proof of concept")

    def ready(self) -> None:
        from poc import checks  # noqa: F401 - registers the credentials key check
        from poc.api import schema  # noqa: F401 - registers the OpenAPI auth extension

        _register_metrics()


def _register_metrics() -> None:
    from collections.abc import Callable

    from django.db.models import Count, Model

    from poc.models import ProbeRun, ProbeStatus, Result, Source
    from workbench.metrics import register_counts

    def by(model: type[Model], field: str) -> Callable[[], list[tuple[str, float]]]:
        def read() -> list[tuple[str, float]]:
            rows = model._default_manager.values_list(field).annotate(n=Count("pk")).order_by()
            return [(str(value), float(n)) for value, n in rows]

        return read

    register_counts(
        "workbench_probe_runs",
        "Probe runs, by state.",
        "state",
        by(ProbeRun, "status"),
        every=ProbeStatus.values,
    )
    register_counts(
        "workbench_results_recorded",
        "PoC results recorded, by source (ci: posted by pipelines; probe: from probe facts).",
        "source",
        by(Result, "source"),
        every=Source.values,
    )
