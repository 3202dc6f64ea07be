from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluations.audit import AuditKeysUnavailable, current_key
from evaluations.models import Project
from evaluations.services import ChainBroken, audit_chain_seal


class Command(BaseCommand):
    help = (
        "Seal, under the current history key, every project history that ends in entries "
        "written before the chain was keyed: one keyed entry ('audit.sealed') covers them. "
        "Chains that do not verify are named and left as they are. Safe to run again."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            key_id, _key = current_key()
        except AuditKeysUnavailable as exc:
            raise CommandError(str(exc)) from None
        sealed = broken = 0
        for project in Project.objects.order_by("slug").iterator():
            try:
                event = audit_chain_seal(project=project)
            except ChainBroken as exc:
                broken += 1
                self.stdout.write(
                    f"{project.slug}: not sealed, the chain is broken at entry "
                    f"{exc.found.seq}: {exc.found.problem}"
                )
                continue
            if event is not None:
                sealed += 1
                self.stdout.write(
                    f"{project.slug}: entries {event.subject} sealed as entry {event.seq}"
                )
        self.stdout.write(f"{sealed} chain(s) sealed under key id {key_id!r}")
        if broken:
            raise CommandError(f"{broken} chain(s) broken: run verify_audit")
