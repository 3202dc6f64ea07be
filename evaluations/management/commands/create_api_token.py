from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluations.models import Project, TokenScope
from evaluations.services import api_token_create
from evaluations.services.tokens import MAX_EXPIRY_DAYS


class Command(BaseCommand):
    help = "Create a project-scoped API token and print it, alone, on stdout (shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--scopes",
            default="read,results:write",
            help="comma-separated: read, results:write, probes:write, costs:write, clusters:run",
        )
        parser.add_argument(
            "--for",
            dest="owner",
            help="the member (user name) the token is made for: it is revoked when they leave",
        )
        parser.add_argument("--expires-days", type=int, default=90, help="1-365 (default 90)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}")
        scopes = [s.strip() for s in options["scopes"].split(",") if s.strip()]
        unknown = [s for s in scopes if s not in TokenScope.values]
        if unknown or not scopes:
            raise CommandError(f"scopes must be among {', '.join(TokenScope.values)}")
        days = options["expires_days"]
        if not 1 <= days <= MAX_EXPIRY_DAYS:
            raise CommandError(f"--expires-days must be between 1 and {MAX_EXPIRY_DAYS}")
        owner = None
        if options["owner"]:
            owner = User.objects.filter(
                username=options["owner"], memberships__project=project
            ).first()
            if owner is None:
                raise CommandError(f"{options['owner']!r} is not a member of {project.slug}")
        try:
            _token, raw = api_token_create(
                project=project, name=options["name"], scopes=scopes, actor=owner, expires_days=days
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(raw)
