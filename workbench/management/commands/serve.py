import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from workbench.processes import Child, Supervisor

# What a first run needs, in this one process (`--prepare`): each is idempotent.
PREPARE: tuple[tuple[str, dict[str, Any]], ...] = (
    ("migrate", {"interactive": False}),
    ("seal_audit_chain", {}),
    ("seed_catalog", {}),
    ("demo", {}),
    ("signing_cert", {}),
)


class Command(BaseCommand):
    help = (
        "Run the web server and a Celery worker (with the beat) together until Ctrl+C or "
        "SIGTERM (development). A second signal kills them at once; a process that dies takes "
        "the others down and the command exits non-zero."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument(
            "--prepare",
            action="store_true",
            help="first migrate, load the catalog and the demo project, and make the development "
            "signing certificate (what `make run` does), in this process",
        )
        parser.add_argument(
            "--reload",
            action="store_true",
            help="restart the web server when code changes (Django's reloader)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["prepare"]:
            for name, extra in PREPARE:
                call_command(name, stdout=self.stdout, stderr=self.stderr, **extra)
        address = f"{options['host']}:{options['port']}"
        python = sys.executable
        web = [python, "manage.py", "runserver", address, "--skip-checks"]
        if not options["reload"]:
            web.append("--noreload")
        worker = [
            python,
            "-m",
            "celery",
            "-A",
            "workbench",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "--queues=default,reports,probes",
            # Beat inside the worker: cluster schedules and lost probe runs, every minute.
            "--beat",
            f"--schedule={Path(settings.VAR_DIR) / 'celerybeat-schedule'}",
        ]
        self.stdout.write(
            self.style.SUCCESS(f"Workbench: http://{address}/")
            + "  (Ctrl+C stops the web server and the worker)"
        )
        supervisor = Supervisor(
            [Child("web server", web), Child("worker", worker)],
            say=lambda line: self.stderr.write(line),
        )
        if supervisor.run():
            raise CommandError("stopped because a process exited", returncode=1)
