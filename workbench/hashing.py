"""SHA-256 of content read in chunks."""

import hashlib
from collections.abc import Iterable


def sha256_chunks(chunks: Iterable[bytes]) -> tuple[str, int]:
    """The hex SHA-256 and the size in bytes of content given as chunks."""
    digest, size = hashlib.sha256(), 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size
