from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluations.catalog import CatalogError, load_solutions, load_templates
from evaluations.services import catalog_seed, template_catalog_seed


class Command(BaseCommand):
    help = "Load or update the solution catalog (idempotent: running it twice changes nothing)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            entries = load_solutions()
            sets = load_templates()
        except CatalogError as exc:
            raise CommandError(str(exc)) from exc
        for label, report in (
            ("solutions", catalog_seed(entries=entries)),
            ("templates", template_catalog_seed(sets=sets)),
        ):
            self.stdout.write(
                f"{label}: {report.created} created, {report.updated} updated, "
                f"{report.unchanged} unchanged"
            )
