"""Long runs give freed heap memory back to the system (glibc keeps it otherwise)."""

import sys

import pytest

from workbench.memory import release_free_memory


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and glibc")
def test_freed_heap_memory_goes_back_to_the_system() -> None:
    release_free_memory()
    blocks = [bytes(2048) + bytes([i % 256]) for i in range(50_000)]  # ~100 MB from malloc
    pinned = bytes(4096)  # allocated after them: the heap's top stays in use
    grown = _rss_mb()
    del blocks
    kept = _rss_mb()
    assert kept > grown - 20, "the allocator gave the pages back by itself: nothing to test"
    assert release_free_memory() is True
    assert _rss_mb() < kept - 60
    assert pinned
