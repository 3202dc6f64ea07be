from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.services.archive import ArchiveError, import_project


class Command(BaseCommand):
    help = (
        "Restore a project from an archive written by export_project. All or nothing; people "
        "are matched by user name (created without a password when missing)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive")
        parser.add_argument("--slug", help="restore under this slug instead of the archived one")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["archive"], "rb") as source:
                report = import_project(source, slug=options["slug"])
        except OSError as exc:
            raise CommandError(f"cannot read {options['archive']}: {exc}") from exc
        except ArchiveError as exc:
            raise CommandError(f"nothing was imported: {exc}") from exc
        rows = sum(report.counts.values())
        self.stdout.write(f"{report.project.slug}: {rows} rows and {report.files} files restored")
        if report.users_created:
            self.stdout.write(
                "people created without a password: " + ", ".join(report.users_created)
            )
        if report.tokens_skipped:
            self.stdout.write(
                f"{report.tokens_skipped} API tokens left to the project they came from"
            )
        self.stdout.write("cluster credentials are not in archives: give them again")
