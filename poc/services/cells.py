"""One writer at a time per results cell, also for a cell that has no row yet.

A cell's row is locked with SELECT ... FOR UPDATE, but a cell without a row (its first result)
has nothing to lock, so two writers both saw "empty": one then failed on the unique cell, or
both wrote a first result and the count and the `previous` chain came out wrong. On PostgreSQL
each cell is also locked with a transaction-scoped advisory lock on (candidate, action), taken
in one sorted order so that two posts touching the same cells cannot deadlock. SQLite writes
one transaction at a time anyway.
"""

from collections.abc import Iterable

from django.db import connection

# Advisory lock keys are one bigint: this namespace in the high bits keeps them apart from any
# other use of advisory locks in the same database.
NAMESPACE = 0x5743 << 48  # "WC"


def cell_lock_key(candidate_id: int, action_id: int) -> int:
    return NAMESPACE | ((candidate_id & 0xFFFFFF) << 24) | (action_id & 0xFFFFFF)


def lock_cells(cells: Iterable[tuple[int, int]]) -> None:
    """Hold each (candidate id, action id) cell until the current transaction ends."""
    if connection.vendor != "postgresql":
        return
    keys = sorted({cell_lock_key(c, a) for c, a in cells})
    if not keys:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock(k)) "
            "FROM (SELECT k FROM unnest(%s::bigint[]) AS k ORDER BY k) AS sorted",
            [keys],
        )
