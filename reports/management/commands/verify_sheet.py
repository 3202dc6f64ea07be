import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.signing import SigningUnavailable, signing_identity
from reports.verify import verify_pdf


class Command(BaseCommand):
    help = "Verify a sealed procurement sheet PDF; exit status 1 when it is not valid."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        try:
            trusted = signing_identity().certificate_pem
        except (SigningUnavailable, ValueError, OSError):
            trusted = None
        report = verify_pdf(data, trusted_pem=trusted)
        self.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        if not report.valid:
            raise CommandError("invalid: " + "; ".join(report.problems or ["not valid"]))
