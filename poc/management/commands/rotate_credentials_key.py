"""Re-encrypt every cluster's credentials under the first key of WORKBENCH_CREDENTIALS_KEYS.

Put the new key first, keep the old one after it, run this, then drop the old key. Each row is
re-encrypted in its own transaction; a row that cannot be decrypted is named and left as it was.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from poc import credentials
from poc.models import Cluster


class Command(BaseCommand):
    help = "Re-encrypt stored cluster credentials under the current (first) key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--new-key", action="store_true", help="only print a fresh ID:KEY")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["new_key"]:
            self.stdout.write(credentials.new_key_text(f"k{len(_ids()) + 1}"))
            return
        try:
            current = credentials.current_key_id()
        except credentials.CredentialsUnavailable as exc:
            raise CommandError(str(exc)) from None
        moved, kept, failed = 0, 0, []
        for pk in Cluster.objects.exclude(secrets="").values_list("pk", flat=True):
            with transaction.atomic():
                row = Cluster.objects.select_for_update().get(pk=pk)
                if credentials.key_id_of(row.secrets) == current:
                    kept += 1
                    continue
                try:
                    value = row.read_secrets()
                except credentials.CredentialsUnavailable as exc:
                    failed.append(f"cluster {row.pk} ({row.name}): {exc}")
                    continue
                row.secrets = credentials.encrypt(
                    value, table=Cluster.TABLE, pk=row.pk, field="secrets"
                )
                row.save(update_fields=["secrets"])
                moved += 1
        self.stdout.write(
            f"re-encrypted {moved} cluster(s) under key {current!r}; {kept} already were"
        )
        if failed:
            raise CommandError("could not re-encrypt:\n  " + "\n  ".join(failed))


def _ids() -> list[str]:
    try:
        return [key_id for key_id, _key in credentials.keys()]  # noqa: SIM118 - not a dict
    except credentials.CredentialsUnavailable:
        return []
