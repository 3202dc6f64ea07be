from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluations.catalog import CatalogError, load_solutions
from evaluations.services import catalog_seed


class Command(BaseCommand):
    help = "Load or update the solution catalog (idempotent: running it twice changes nothing)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            entries = load_solutions()
        except CatalogError as exc:
            raise CommandError(str(exc)) from exc
        report = catalog_seed(entries=entries)
        self.stdout.write(
            f"solutions: {report.created} created, {report.updated} updated, "
            f"{report.unchanged} unchanged"
        )
