from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PocConfig(AppConfig):
    name = "poc"
    verbose_name = _("Proof of concept")

    def ready(self) -> None:
        from poc.probes.recording import recorder_register
        from poc.services.probe_results import ResultsRecorder

        recorder_register(ResultsRecorder())  # probe verdicts become results (see recording)
        _register_metrics()


def _register_metrics() -> None:
    from poc.models import Source
    from poc.selectors import result_counts
    from workbench.metrics import register_counts

    register_counts(
        "workbench_results_recorded",
        "PoC results recorded, by source (ci: posted by pipelines; probe: from probe facts).",
        "source",
        result_counts,
        every=Source.values,
    )
