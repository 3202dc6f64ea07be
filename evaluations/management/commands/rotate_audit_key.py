"""Rotate the key of the project history's chain.

Put a new `ID:KEY` first in WORKBENCH_AUDIT_KEYS (`--new-key` prints one) and keep the old ones
after it: new entries are keyed with the first, and each older entry is verified with the key
its id names, so a key stays listed for as long as the entries it keyed must verify (an HMAC
cannot be moved to another key without trusting what it covers). Without options this lists
how many entries each key id keyed and whether that key is configured.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluations.audit import SETTING, AuditKeysUnavailable, audit_keys
from evaluations.selectors import audit_key_use
from workbench.keyring import new_key_text


class Command(BaseCommand):
    help = "Print a fresh history key, or list the key ids the history chain uses."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--new-key", action="store_true", help="only print a fresh ID:KEY")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            configured = [key_id for key_id, _key in audit_keys()]
        except AuditKeysUnavailable as exc:
            if not options["new_key"]:
                raise CommandError(str(exc)) from None
            configured = []
        if options["new_key"]:
            number = len(configured) + 1
            while f"k{number}" in configured:
                number += 1
            self.stdout.write(new_key_text(f"k{number}"))
            return
        used = audit_key_use()
        self.stdout.write(f"new entries are keyed with {configured[0]!r}")
        missing = []
        for key_id, count in sorted(used.items()):
            if not key_id:
                self.stdout.write(f"  {count} entries from before the chain was keyed")
                continue
            state = "configured" if key_id in configured else "NOT CONFIGURED"
            self.stdout.write(f"  {count} entries keyed with {key_id!r}: {state}")
            if key_id not in configured:
                missing.append(key_id)
        if missing:
            raise CommandError(
                f"{SETTING} lacks {', '.join(map(repr, missing))}: those entries cannot be "
                "verified until the key is listed again"
            )
