"""The demo project built by `manage.py demo`, its stored files in a folder of the test's own,
and its sheet story carried to the end the way the worker would."""

from io import StringIO

import pytest
from django.core.management import call_command

from evaluations.models import Project
from reports import services as sheet_services
from reports.demo import demo_sheets_advance
from reports.models import Sheet, SheetStatus

# Stored files in a folder of the test's own and a signing certificate, as for sheets.
from tests.reports.conftest import _sheet_settings, signing_p12  # noqa: F401


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
