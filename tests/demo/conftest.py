"""The demo project built by `manage.py demo`, and its sheet story carried to the end the way
the worker would.

Building the demo takes seconds and carrying its story on (rendering and sealing PDFs) takes
more, so the tests that only read it share one copy per test process (`demo`, `finished`): it
is built once inside a transaction that is rolled back when the package's tests are done, each
test runs in a savepoint of its own (rolled back after it, as pytest-django does for any test),
and the finished story is a savepoint above the built demo, rolled back when a test asks for
the demo as `manage.py demo` leaves it. Such tests take no `db` (and no `django_db` mark): the
shared copy gives them the database. Tests that change the demo in ways a savepoint does not
undo (its stored files, another run of the command) build their own, outside this package
(tests/reports/test_demo_rerun.py), so that no test of theirs runs while the shared copy is
open.
"""

import uuid
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, transaction
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


class SharedDemo:
    """One demo project in an open transaction: built, and on demand finished in a savepoint
    above it."""

    def __init__(self, media: Path) -> None:
        self.media = media
        self.built = transaction.atomic()
        self.story = transaction.atomic()  # the finished story, when it is entered
        self.finished = False
        self.project = Project()

    def open(self) -> None:
        self.built.__enter__()
        call_command("demo", stdout=StringIO())
        self.project = Project.objects.get(slug="demo")
        self.depth = len(connection.atomic_blocks)

    def state(self, *, finished: bool) -> None:
        if len(connection.atomic_blocks) != self.depth + self.finished:
            raise RuntimeError(
                "a test that reads the shared demo takes no `db` fixture or `django_db` mark; "
                "one that needs them builds a demo of its own outside tests/demo"
            )
        if finished and not self.finished:
            self.story.__enter__()
            finish_sheets(self.project)
        elif self.finished and not finished:
            transaction.set_rollback(True)
            self.story.__exit__(None, None, None)
        self.finished = finished

    def close(self) -> None:
        self.state(finished=False)
        transaction.set_rollback(True)
        self.built.__exit__(None, None, None)


@pytest.fixture(scope="package")
def shared_demo(
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
        django_db_blocker.unblock(),
    ):
        shared = SharedDemo(media)
        shared.open()
        try:
            yield shared
        finally:
            shared.close()


def _read(shared: SharedDemo, settings: Any, blocker: Any, *, finished: bool) -> Iterator[Project]:
    settings.MEDIA_ROOT = str(shared.media)  # where the shared demo's files are
    with blocker.unblock():
        shared.state(finished=finished)
        with transaction.atomic():
            yield Project.objects.get(pk=shared.project.pk)
            transaction.set_rollback(True)  # what the test changed goes with it


@pytest.fixture
def demo(shared_demo: SharedDemo, settings: Any, django_db_blocker: Any) -> Iterator[Project]:
    """The demo project as `manage.py demo` leaves it, shared (see the module's docstring)."""
    yield from _read(shared_demo, settings, django_db_blocker, finished=False)


@pytest.fixture
def finished(shared_demo: SharedDemo, settings: Any, django_db_blocker: Any) -> Iterator[Project]:
    """The demo project once the worker has carried its sheet story to the end, shared."""
    yield from _read(shared_demo, settings, django_db_blocker, finished=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The shared demo's readers in two runs, as built and then finished, so that a test
    process carries the story on once."""
    here = Path(__file__).parent
    mine = [i for i, item in enumerate(items) if here in item.path.parents]
    ordered = sorted((items[i] for i in mine), key=lambda item: "finished" in item.fixturenames)
    for i, item in zip(mine, ordered, strict=True):
        items[i] = item
