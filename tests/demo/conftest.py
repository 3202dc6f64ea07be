"""The demo project built by `manage.py demo`, its stored files in a folder of the test's own,
and its sheet story carried to the end the way the worker would."""

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from evaluations.models import Project
from reports import services as sheet_services
from reports.demo import demo_sheets_advance
from reports.models import Sheet, SheetStatus
from reports.signing import create_self_signed_p12

PASSPHRASE = "demo-test-passphrase"


@pytest.fixture(scope="session")
def signing_p12(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("signing") / "org.p12"
    create_self_signed_p12(path, PASSPHRASE, subject="Workbench Demo Test")
    return path


@pytest.fixture(autouse=True)
def _demo_settings(settings: Any, tmp_path: Path, signing_p12: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.SHEET_SIGNING_P12 = str(signing_p12)
    settings.SHEET_SIGNING_PASSPHRASE = PASSPHRASE


@pytest.fixture
def demo(db: None) -> Project:
    call_command("demo", stdout=StringIO())
    return Project.objects.get(slug="demo")


def finish_sheets(project: Project) -> None:
    """What the worker does after `manage.py demo`: render each waiting revision (the render
    task), take the demo's sheet story a step further (its task), seal what every role
    approved (the seal task), until nothing waits."""
    for _turn in range(10):
        done = demo_sheets_advance(project.pk)
        waiting = list(Sheet.objects.filter(project=project, status__in=WORK))
        for sheet in waiting:
            if sheet.status == SheetStatus.SEALING:
                sheet_services.sheet_seal(sheet_id=sheet.pk)
            else:
                sheet_services.sheet_render(sheet_id=sheet.pk)
        if done and not waiting:
            return
    raise AssertionError("the demo's sheet story did not finish")


WORK = (SheetStatus.PENDING, SheetStatus.SEALING)


@pytest.fixture
def finished(demo: Project) -> Project:
    finish_sheets(demo)
    return demo
