"""Giving freed memory back to the operating system during long work in one process.

A worker that stores hundreds of nodes one after the other frees what each node needed, but
glibc's allocator keeps freed pages in its arenas, so the resident size creeps up with the
number of nodes although no object outlives its node. `malloc_trim(0)` returns those pages.
Elsewhere (no glibc: musl, macOS) this does nothing.
"""

import ctypes
import ctypes.util
import functools
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


@functools.cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        function = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function  # type: ignore[no-any-return]


def release_free_memory() -> bool:
    """Return freed heap pages to the system; True when the allocator could do it."""
    trim = _trim()
    if trim is None:
        return False
    try:
        trim(0)
    except OSError:  # pragma: no cover - a libc that refuses is not worth a failed run
        log.debug("malloc_trim failed", exc_info=True)
        return False
    return True
