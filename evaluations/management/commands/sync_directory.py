from importlib import import_module
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluations.sso.extra import ldap_enabled


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
        if not ldap_enabled():
            raise CommandError("LDAP is not configured (LDAP_SERVER_URI)")
        # The LDAP extra's packages are loaded only now (the start-up checks have said whether
        # they are installed).
        directory = import_module("evaluations.sso.ldap")
        report = directory.directory_sync(
            allow_mass_deactivation=options["allow_mass_deactivation"]
        )
        if report.problem:
            raise CommandError(report.problem)
        gone = ", ".join(sorted(report.deactivated)) or "none"
        self.stdout.write(
            f"{report.checked} account(s) compared; deactivated: {gone}; "
            f"{report.roles_changed} team role(s) granted, changed or removed"
        )
