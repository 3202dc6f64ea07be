from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluations.sso.ldap import directory_sync


class Command(BaseCommand):
    help = (
        "Compare every account that signed in through LDAP with the directory now: deactivate "
        "those no longer in it and make the others' roles follow their groups (the beat does "
        "this every LDAP_SYNC_MINUTES)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--allow-mass-deactivation",
            action="store_true",
            help="deactivate even when more than half of the accounts are gone from the directory",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        report = directory_sync(allow_mass_deactivation=options["allow_mass_deactivation"])
        if report.problem:
            raise CommandError(report.problem)
        gone = ", ".join(sorted(report.deactivated)) or "none"
        self.stdout.write(
            f"{report.checked} account(s) compared; deactivated: {gone}; "
            f"{report.roles_changed} team role(s) granted, changed or removed"
        )
