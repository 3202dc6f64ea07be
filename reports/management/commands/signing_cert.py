from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from reports.signing import create_self_signed_p12


class Command(BaseCommand):
    help = (
        "Create the self-signed development certificate for sealing sheets, if there is none. "
        "Production brings its own (SHEET_SIGNING_P12)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.PRODUCTION:
            raise CommandError(
                "Refusing to create a self-signed signing certificate with DJANGO_ENV=production: "
                "set SHEET_SIGNING_P12 and SHEET_SIGNING_PASSPHRASE to the organisation's own."
            )
        path = Path(settings.SHEET_SIGNING_P12)
        if path.is_file():
            self.stdout.write(f"signing certificate: {path} (kept)")
            return
        create_self_signed_p12(path, settings.SHEET_SIGNING_PASSPHRASE)
        self.stdout.write(f"signing certificate: {path} (new, self-signed, development only)")
