import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Run the web server and a Celery worker together until Ctrl+C (development)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--host", default="127.0.0.1")

    def handle(self, *args: Any, **options: Any) -> None:
        python = sys.executable
        worker = subprocess.Popen(
            [
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
        )
        web = subprocess.Popen(
            [python, "manage.py", "runserver", f"{options['host']}:{options['port']}"]
        )
        self.stdout.write(
            self.style.SUCCESS(f"Workbench: http://{options['host']}:{options['port']}/")
            + "  (Ctrl+C stops the web server and the worker)"
        )
        try:
            while web.poll() is None and worker.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            for process in (web, worker):
                if process.poll() is None:
                    process.terminate()
            for process in (web, worker):
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
