"""Re-encrypt every cluster's credentials under the first key of WORKBENCH_CREDENTIALS_KEYS.

Put the new key first, keep the old one after it, run this, then drop the old key. Each row is
re-encrypted in its own transaction; a row that cannot be decrypted is named and left as it was.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from poc.probes import credentials
from poc.probes.services import clusters as cluster_services


class Command(BaseCommand):
    help = "Re-encrypt stored cluster credentials under the current (first) key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--new-key", action="store_true", help="only print a fresh ID:KEY")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["new_key"]:
            self.stdout.write(credentials.new_key_text(f"k{len(_ids()) + 1}"))
            return
        try:
            report = cluster_services.cluster_credentials_rotate()
        except credentials.CredentialsUnavailable as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"re-encrypted {report.moved} cluster(s) under key {report.key_id!r}; "
            f"{report.kept} already were"
        )
        if report.failed:
            raise CommandError("could not re-encrypt:\n  " + "\n  ".join(report.failed))


def _ids() -> list[str]:
    try:
        return [key_id for key_id, _key in credentials.keys()]  # noqa: SIM118 - not a dict
    except credentials.CredentialsUnavailable:
        return []
