"""Fast bulk inserts for hot write paths.

On PostgreSQL, rows go in as one `INSERT ... SELECT * FROM unnest(array, array, ...)`
statement built from columns, skipping the per-row model instances and per-value preparation
that dominate ORM bulk_create at thousands of rows. Elsewhere (SQLite in development) the ORM
does the work. Values must already be valid: callers validate before they insert.
"""

from collections.abc import Sequence
from typing import Any

from django.db import connection, models

PG_TYPES = {
    "AutoField": "integer",
    "BigAutoField": "bigint",
    "IntegerField": "integer",
    "BigIntegerField": "bigint",
    "PositiveIntegerField": "integer",
    "PositiveBigIntegerField": "bigint",
    "PositiveSmallIntegerField": "smallint",
    "SmallIntegerField": "smallint",
    "CharField": "text",
    "TextField": "text",
    "SlugField": "text",
    "URLField": "text",
    "FileField": "text",
    "DecimalField": "numeric",
    "DateTimeField": "timestamptz",
    "BooleanField": "boolean",
}


def _field(model: type[models.Model], name: str) -> models.Field:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field), f"{name} is not a concrete field"
    return field


def _column(model: type[models.Model], name: str) -> str:
    return connection.ops.quote_name(str(_field(model, name).column))


def _pg_type(field: models.Field) -> str:
    if isinstance(field, models.ForeignKey):
        field = field.target_field
    return PG_TYPES[field.get_internal_type()]


def bulk_insert(
    model: type[models.Model],
    columns: dict[str, Sequence[Any]],
    *,
    constants: dict[str, Any] | None = None,
    returning_ids: bool = False,
    conflict_fields: Sequence[str] = (),
    update_fields: Sequence[str] = (),
) -> list[int]:
    """Insert rows given column-wise ({field name: values}); returns the new ids if asked.

    `constants` are values shared by every row, sent once rather than once per row. With
    `conflict_fields`, an existing row with the same values there is updated instead
    (`update_fields` take the new values).
    """
    constants = constants or {}
    names = list(columns)
    count = len(columns[names[0]]) if names else 0
    if count == 0:
        return []
    meta = model._meta
    fields = [_field(model, name) for name in names]
    shared = [_field(model, name) for name in constants]
    if connection.vendor != "postgresql":
        # Values are raw column values (ids for foreign keys): assign them by attribute name.
        shared_values = {f.attname: v for f, v in zip(shared, constants.values(), strict=True)}
        attnames = [f.attname for f in fields]
        objects = [
            model(
                **shared_values, **{a: columns[n][i] for a, n in zip(attnames, names, strict=True)}
            )
            for i in range(count)
        ]
        kwargs: dict[str, Any] = {}
        if conflict_fields:
            kwargs = {
                "update_conflicts": True,
                "unique_fields": list(conflict_fields),
                "update_fields": list(update_fields),
            }
        model._default_manager.bulk_create(objects, **kwargs)
        return [obj.pk for obj in objects] if returning_ids else []
    column_sql = ", ".join(_column(model, f.name) for f in [*shared, *fields])
    scalars = "".join(f"%s::{_pg_type(f)}, " for f in shared)
    arrays = ", ".join(f"%s::{_pg_type(f)}[]" for f in fields)
    sql = (
        f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({column_sql}) "
        f"SELECT {scalars}u.* FROM unnest({arrays}) AS u"
    )
    if conflict_fields:
        targets = ", ".join(_column(model, n) for n in conflict_fields)
        updates = ", ".join(
            f"{_column(model, n)} = EXCLUDED.{_column(model, n)}" for n in update_fields
        )
        sql += f" ON CONFLICT ({targets}) DO UPDATE SET {updates}"
    if returning_ids:
        sql += f" RETURNING {connection.ops.quote_name(str(meta.pk.column))}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*constants.values(), *(list(columns[n]) for n in names)])
        return [row[0] for row in cursor.fetchall()] if returning_ids else []
