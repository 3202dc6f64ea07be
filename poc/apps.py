from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PocConfig(AppConfig):
    name = "poc"
    verbose_name = _("Proof of concept")

    def ready(self) -> None:
        from poc import checks  # noqa: F401 - registers the credentials key check

        _register_metrics()


def _register_metrics() -> None:
    from poc.models import ProbeStatus, Source
    from poc.selectors import probe_run_counts, result_counts
    from workbench.metrics import register_counts

    register_counts(
        "workbench_probe_runs",
        "Probe runs, by state.",
        "state",
        probe_run_counts,
        every=ProbeStatus.values,
    )
    register_counts(
        "workbench_results_recorded",
        "PoC results recorded, by source (ci: posted by pipelines; probe: from probe facts).",
        "source",
        result_counts,
        every=Source.values,
    )
