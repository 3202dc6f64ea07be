import re
from io import BytesIO
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from pypdf import PdfReader
from pypdf.errors import PdfReadError

from evaluations.models import Project
from evaluations.selectors import AuditAnchor, audit_chain_break
from reports.models import Sheet
from reports.selectors import audited_projects, sealed_sheets_with_anchor


def printed_on_signoff_page(sheet: Sheet) -> bool | None:
    """Whether the sealed file's last page (the sign-off page) prints the anchor stored for it;
    None when the file cannot be read. The file is covered by its signature, the stored row is
    not: a row changed to match a rewritten history shows here."""
    try:
        with sheet.sealed_pdf.open("rb") as handle:
            reader = PdfReader(BytesIO(handle.read()))
        text = reader.pages[-1].extract_text() or ""
    except (OSError, ValueError, PdfReadError):
        return None
    return sheet.audit_hash in re.sub(r"\s+", "", text)


class Command(BaseCommand):
    help = (
        "Check every project's history chain: names the first entry that was edited, inserted "
        "or deleted in the database (or is keyed by a key not configured), and holds the chain "
        "to the history's head printed in each sealed sheet; exits non-zero when any chain is "
        "broken or not yet sealed under a key."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("slugs", nargs="*", help="only these projects (default: all)")
        parser.add_argument(
            "--skip-files",
            action="store_true",
            help="do not read the sealed PDF files (only the anchors stored beside them)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        projects = audited_projects(options["slugs"])
        unknown = set(options["slugs"]) - {project.slug for project in projects}
        if unknown:
            raise CommandError(f"no such project: {', '.join(sorted(unknown))}")
        broken = 0
        for project in projects:
            problem = self._check(project, read_files=not options["skip_files"])
            if problem is None:
                self.stdout.write(f"{project.slug}: intact")
                continue
            broken += 1
            self.stdout.write(f"{project.slug}: {problem}")
        if broken:
            raise CommandError(f"{broken} project history chain(s) broken or not sealed")

    def _check(self, project: Project, *, read_files: bool) -> str | None:
        sealed = sealed_sheets_with_anchor(project)
        if read_files:
            for sheet in sealed:
                if printed_on_signoff_page(sheet) is False:
                    return (
                        f"BROKEN at sheet r{sheet.revision}: the history anchor stored for it is "
                        "not the one printed in its signed file"
                    )
        anchors = [
            AuditAnchor(seq=s.audit_seq or 0, hash=s.audit_hash, where=f"sheet r{s.revision}")
            for s in sealed
        ]
        found = audit_chain_break(project, anchors)
        if found is None:
            return None
        where = f"entry {found.seq}" if found.seq is not None else "an entry"
        if found.pk is not None:
            where += f" (id {found.pk})"
        label = "NOT SEALED from" if found.unsealed else "BROKEN at"
        return f"{label} {where}: {found.problem}"
