"""The demo's sheets: the first revision is frozen by `manage.py demo` and rendered by the
worker, which then has every role approve it (and seals it), records the teams' later work,
freezes a second revision and has some roles approve it."""

import pytest

from evaluations.models import Project
from reports.demo import DEMO_SHEETS_TASK, demo_sheets_advance
from reports.models import Sheet, SheetStatus
from workbench.celery import app

pytestmark = pytest.mark.django_db


def test_the_demo_freezes_a_revision_for_the_worker(demo: Project) -> None:
    (sheet,) = Sheet.objects.filter(project=demo)
    assert sheet.revision == 1 and sheet.status == SheetStatus.PENDING
    assert sheet.gaps and sheet.gaps_reason  # frozen with its known gaps, and why
    assert demo_sheets_advance(demo.pk) is False  # it waits for the rendering
    assert not sheet.signoffs.exists()
    app.loader.import_default_modules()
    assert DEMO_SHEETS_TASK in app.tasks
