"""The demo project built by `manage.py demo`, and its sheet story carried to the end the way
the worker would.

Building the demo takes seconds and carrying its story on (rendering and sealing PDFs) takes
more, so the tests here, which only read it, share one copy per test process: it is built once
inside a transaction that is rolled back when the package's tests are done, and each test runs
in a savepoint of its own (pytest-django's, as for any test), rolled back after it. The tests
of the finished story are in finished/, whose package carries the story on in a savepoint above
the built demo, rolled back when its tests are done. Tests that change the demo in ways a
savepoint does not undo (its stored files, another run of the command) build their own,
outside this package (tests/reports/test_demo_rerun.py).
"""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test.utils import override_settings

from evaluations.models import Project
from reports import services as sheet_services
from reports.demo import demo_sheets_advance
from reports.models import Sheet, SheetStatus
from tests.conftest import settings_for_tests

# Stored files in a folder of the test's own and a signing certificate, as for sheets.
from tests.reports.conftest import PASSPHRASE, _sheet_settings, signing_p12  # noqa: F401

WORK = (SheetStatus.PENDING, SheetStatus.SEALING)


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


@dataclass
class SharedDemo:
    project: Project
    media: Path


@contextmanager
def rolled_back(blocker: Any) -> Iterator[None]:
    """An atomic block that undoes what was written in it, with the database open to the
    package's fixture (pytest-django opens it to tests only)."""
    with blocker.unblock():
        block = transaction.atomic()
        block.__enter__()
    try:
        yield
    finally:
        with blocker.unblock():
            transaction.set_rollback(True)
            block.__exit__(None, None, None)


@pytest.fixture(scope="package")
def demo_built(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    signing_p12: Path,  # noqa: F811
) -> Iterator[SharedDemo]:
    media = tmp_path_factory.mktemp("demo-media")
    for_tests = settings_for_tests(cache_prefix=f"demo-{uuid.uuid4().hex[:12]}")
    with (
        override_settings(
            **for_tests,
            MEDIA_ROOT=str(media),
            SHEET_SIGNING_P12=str(signing_p12),
            SHEET_SIGNING_PASSPHRASE=PASSPHRASE,
        ),
        rolled_back(django_db_blocker),
    ):
        with django_db_blocker.unblock():
            call_command("demo", stdout=StringIO())
            project = Project.objects.get(slug="demo")
        yield SharedDemo(project, media)


@pytest.fixture
def demo(demo_built: SharedDemo, db: None, settings: Any) -> Project:
    """The demo project as `manage.py demo` leaves it, shared (see the module's docstring)."""
    settings.MEDIA_ROOT = str(demo_built.media)  # where the shared demo's files are
    return Project.objects.get(pk=demo_built.project.pk)
