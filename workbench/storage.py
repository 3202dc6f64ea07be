"""Files written to storage alongside database rows."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.core.files.storage import default_storage


@contextmanager
def files_removed_on_failure() -> Iterator[list[str]]:
    """Collects the storage names of files written inside the block; if the block fails (a
    transaction inside it rolled back), they are deleted again, so a failed write leaves no
    orphan file behind."""
    created: list[str] = []
    try:
        yield created
    except BaseException:
        for name in created:
            default_storage.delete(name)
        raise


@dataclass(frozen=True)
class StoredFile:
    """A file already in storage (content-addressed) to cite as evidence of a result."""

    name: str
    file: str
    sha256: str
    size: int
    content_type: str = "text/plain"
