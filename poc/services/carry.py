"""Evidence a person recorded outlives the automated results that follow it.

A CI post or a probe run records a new result for a cell; the cell then shows that result and
the sheet freezes it. Without this, the file or link a person attached to the cell's earlier
result would drop out of the cell and out of every later sheet. So the new result repeats that
evidence, each copy pointing at the item it repeats (`Evidence.carried_from`, always the
original, however many results it has travelled through), with its uploader and time kept. A
post that says its result supersedes the earlier evidence still carries it, marked
`superseded`: kept on the record and listed, no longer counted as the cell's evidence.

Only evidence people recorded travels: an automated result's own files are its run's and stay
with it (nightly runs would otherwise pile them up on every cell).
"""

from collections import defaultdict

from django.db.models import Q

from poc.models import Evidence, Source
from workbench.bulk import bulk_insert

Cell = tuple[int, int]  # (candidate id, action id)


def evidence_carry(
    *,
    project_id: int,
    previous: dict[Cell, int],
    final: dict[Cell, int],
    supersede: set[Cell],
) -> dict[Cell, int]:
    """Repeat the person-recorded evidence of each cell's `previous` result on its `final`
    one (one query to read, one to write). Returns, per cell, how many repeated items still
    count as its evidence (those not superseded)."""
    cells_of: dict[int, list[Cell]] = defaultdict(list)
    for cell, result_id in previous.items():
        if cell in final:
            cells_of[result_id].append(cell)
    if not cells_of:
        return {}
    items = (
        Evidence.objects.filter(result_id__in=list(cells_of))
        .filter(Q(result__source=Source.MANUAL) | Q(carried_from__isnull=False))
        .order_by("uploaded_at", "pk")
        .values_list(
            "result_id",
            "pk",
            "carried_from_id",
            "kind",
            "file",
            "url",
            "name",
            "sha256",
            "size",
            "content_type",
            "uploaded_by_id",
            "uploaded_at",
            "superseded",
        )
    )
    names = (
        "result",
        "carried_from",
        "kind",
        "file",
        "url",
        "name",
        "sha256",
        "size",
        "content_type",
        "uploaded_by",
        "uploaded_at",
        "superseded",
    )
    columns: dict[str, list[object]] = {name: [] for name in names}
    counted: dict[Cell, int] = defaultdict(int)
    for result_id, pk, origin, *fields, uploaded_by, uploaded_at, superseded in items:
        for cell in cells_of[result_id]:
            gone = superseded or cell in supersede
            row = (final[cell], origin or pk, *fields, uploaded_by, uploaded_at, gone)
            for name, value in zip(names, row, strict=True):
                columns[name].append(value)
            if not gone:
                counted[cell] += 1
    if columns["result"]:
        bulk_insert(Evidence, {n: columns[n] for n in names}, constants={"project": project_id})
    return dict(counted)
