from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from evaluations.services import user_deactivate


class Command(BaseCommand):
    help = (
        "Deactivate an account: it can no longer sign in, its sessions end and the API tokens it "
        "created are revoked at once (recorded in each project's history)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("username")
        parser.add_argument("--reason", default="deactivated with manage.py deactivate_user")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no such user: {options['username']}")
        withdrawn = user_deactivate(user=user, actor=None, reason=options["reason"])
        self.stdout.write(
            f"{user.username}: inactive; {withdrawn.sessions} session(s) ended, "
            f"{withdrawn.tokens} API token(s) revoked"
        )
