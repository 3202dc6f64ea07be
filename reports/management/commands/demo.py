from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from evaluations.models import Solution, TemplateSet
from evaluations.services import DEMO_PASSWORD
from reports.demo import demo_build


class Command(BaseCommand):
    help = (
        "Create the demo project, a review near its end, and one demo user per team role "
        "(development only). Running it again keeps what people changed in the demo project."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--rebuild",
            action="store_true",
            help="delete the demo project (and nothing else) and build it again",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.PRODUCTION:
            raise CommandError(
                "Refusing to create demo accounts with DJANGO_ENV=production: "
                "production has no default accounts."
            )
        if not Solution.objects.exists() or not TemplateSet.objects.exists():
            call_command("seed_catalog", stdout=self.stdout)
        project, usernames = demo_build(rebuild=options["rebuild"])
        self.stdout.write(f"demo project: {project.name} (/projects/{project.slug}/)")
        self.stdout.write(f"demo logins (password {DEMO_PASSWORD}): " + ", ".join(usernames))
