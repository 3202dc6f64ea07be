import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluations.models import Project
from reports.services.archive import ArchiveError, export_project


class Command(BaseCommand):
    help = (
        "Write a project (its rows, stored files and history chain) to one zip archive that "
        "import_project restores, here or on another instance."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("out", help="the archive to write (a .zip path)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"no such project: {options['slug']}")
        out = Path(options["out"])
        if out.exists():
            raise CommandError(f"{out} exists already: choose another file name")
        # Written next to its place and renamed: a failed export leaves no half archive.
        handle, partial = tempfile.mkstemp(prefix=".export-", suffix=".zip", dir=out.parent or ".")
        os.close(handle)
        try:
            counts = export_project(project, partial)
            os.replace(partial, out)
        except (ArchiveError, OSError) as exc:
            Path(partial).unlink(missing_ok=True)
            raise CommandError(str(exc)) from exc
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
        rows = sum(counts.values())
        self.stdout.write(f"{project.slug}: {rows} rows written to {out}")
