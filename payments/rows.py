"""Row writes that let a unique constraint decide instead of a "does it exist?" read."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, models


def insert_once(instance: models.Model, conflict: Sequence[str]) -> bool:
    """`INSERT … ON CONFLICT (conflict) DO NOTHING RETURNING pk`: one round trip and no savepoint.

    True when the row was inserted (`instance.pk` is set, as after `save()`); False when a row with the same
    `conflict` columns exists already (then nothing was written)."""
    meta = instance._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    quote = connection.ops.quote_name
    for field in fields:  # timestamps save() would fill (a value the caller set is kept)
        if (getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)) and (
            getattr(instance, field.attname) is None
        ):
            field.pre_save(instance, add=True)
    # Identifiers come from the model's own metadata; every value is a query parameter.
    columns = ", ".join(quote(field.column) for field in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    target = ", ".join(quote(meta.get_field(name).column) for name in conflict)
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders})"  # noqa: S608
        f" ON CONFLICT ({target}) DO NOTHING RETURNING {quote(meta.pk.column)}"
    )
    values = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        row = cursor.fetchone()
    if row is None:
        return False
    instance.pk = row[0]
    instance._state.adding = False
    instance._state.db = connection.alias
    return True
