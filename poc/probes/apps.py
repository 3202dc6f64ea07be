from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProbesConfig(AppConfig):
    name = "poc.probes"
    label = "probes"
    verbose_name = _("GPU evidence")

    def ready(self) -> None:
        from poc.probes import checks  # noqa: F401 - registers the credentials key check

        _register_metrics()


def _register_metrics() -> None:
    from poc.probes.models import ProbeStatus
    from poc.probes.selectors import probe_run_counts
    from workbench.metrics import register_counts

    register_counts(
        "workbench_probe_runs",
        "Probe runs, by state.",
        "state",
        probe_run_counts,
        every=ProbeStatus.values,
    )
