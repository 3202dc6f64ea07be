"""The demo once the worker has carried its sheet story to the end: the package's tests share
one, finished in a savepoint above the built demo (../conftest.py) and rolled back after
them."""

from collections.abc import Iterator
from typing import Any

import pytest

from evaluations.models import Project
from tests.demo.conftest import SharedDemo, finish_sheets, rolled_back


@pytest.fixture(scope="package")
def demo_finished(demo_built: SharedDemo, django_db_blocker: Any) -> Iterator[SharedDemo]:
    with rolled_back(django_db_blocker):
        with django_db_blocker.unblock():
            finish_sheets(demo_built.project)
        yield demo_built


@pytest.fixture
def finished(demo_finished: SharedDemo, db: None, settings: Any) -> Project:
    """The demo project once the worker has carried its sheet story to the end, shared."""
    settings.MEDIA_ROOT = str(demo_finished.media)
    return Project.objects.get(pk=demo_finished.project.pk)
