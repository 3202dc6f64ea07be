from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluations.models import Project
from evaluations.selectors import audit_chain_break


class Command(BaseCommand):
    help = (
        "Check every project's history chain: names the first entry that was edited or deleted "
        "in the database, per project; exits non-zero when any chain is broken."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("slugs", nargs="*", help="only these projects (default: all)")

    def handle(self, *args: Any, **options: Any) -> None:
        projects = Project.objects.order_by("slug")
        if options["slugs"]:
            projects = projects.filter(slug__in=options["slugs"])
            unknown = set(options["slugs"]) - set(projects.values_list("slug", flat=True))
            if unknown:
                raise CommandError(f"no such project: {', '.join(sorted(unknown))}")
        broken = 0
        for project in projects:
            found = audit_chain_break(project)
            if found is None:
                self.stdout.write(f"{project.slug}: intact")
                continue
            broken += 1
            where = f"entry {found.seq}" if found.seq is not None else "an entry"
            if found.pk is not None:
                where += f" (id {found.pk})"
            self.stdout.write(f"{project.slug}: BROKEN at {where}: {found.problem}")
        if broken:
            raise CommandError(f"{broken} project history chain(s) broken")
