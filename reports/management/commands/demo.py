from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from evaluations.models import Solution, TemplateSet
from evaluations.services import DEMO_PASSWORD, demo_seed
from poc.demo import demo_results
from reports.procurement.demo import demo_costs, demo_terms


class Command(BaseCommand):
    help = "Create the demo project and one demo user per team role (development only)."

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.PRODUCTION:
            raise CommandError(
                "Refusing to create demo accounts with DJANGO_ENV=production: "
                "production has no default accounts."
            )
        if not Solution.objects.exists() or not TemplateSet.objects.exists():
            call_command("seed_catalog", stdout=self.stdout)
        project, usernames = demo_seed()
        demo_results(project)
        demo_terms(project)
        demo_costs(project)
        self.stdout.write(f"demo project: {project.name} (/projects/{project.slug}/)")
        self.stdout.write(f"demo logins (password {DEMO_PASSWORD}): " + ", ".join(usernames))
