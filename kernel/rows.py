"""Row writes in one statement each: a unique constraint or a condition decides instead of a read first, and
the row's event (its timeline entry) goes into the same statement as a data-modifying CTE.

Generic over models: every app writes its rows with it.
Identifiers come from the models' own metadata; every value is a query parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.db import connection, models
from django.db.models.options import Options


def _column(field: models.Field[Any, Any]) -> str:
    """A concrete field's quoted column name."""
    if field.column is None:
        raise ValueError(f"{field.name} has no column")
    return connection.ops.quote_name(field.column)


def _field(meta: Options[Any], name: str) -> models.Field[Any, Any]:
    """The concrete field `name` (a reverse relation has no column to write)."""
    field = meta.get_field(name)
    if not isinstance(field, models.Field):
        raise ValueError(f"{name} is not a column of {meta.label}")
    return field


def _fill_timestamps(instance: models.Model, fields: Iterable[models.Field], *, adding: bool) -> None:
    """The timestamps save() would fill: auto_now always, auto_now_add on insert when the caller set none."""
    for field in fields:
        if getattr(field, "auto_now", False) or (
            adding and getattr(field, "auto_now_add", False) and getattr(instance, field.attname) is None
        ):
            field.pre_save(instance, add=adding)


def _insert_sql(instance: models.Model, source: str | None = None) -> tuple[str, list[Any]]:
    """`INSERT INTO t (cols) VALUES (…)`, or `… SELECT … FROM source` (one row per row of that CTE)."""
    meta = instance._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    _fill_timestamps(instance, fields, adding=True)
    quote = connection.ops.quote_name
    columns = ", ".join(_column(field) for field in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    rows = f"SELECT {placeholders} FROM {source}" if source else f"VALUES ({placeholders})"  # noqa: S608
    values = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in fields]
    return f"INSERT INTO {quote(meta.db_table)} ({columns}) {rows}", values


def _run(sql: str, params: list[Any]) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return None if row is None else row[0]


def _one_statement() -> bool:
    # SQLite (the embedded `make run`) has no data-modifying CTE: there the parts run one after another, in
    # the caller's transaction.
    return connection.vendor == "postgresql"


def _write(
    main_sql: str, params: list[Any], *, event: models.Model | None = None, guard: tuple[str, list[Any]] | None = None
) -> Any:
    """Run `main_sql` (ending in RETURNING pk) after `guard` and with `event`, one data-modifying CTE each:
    `event` is inserted only when the main statement wrote its row; `main_sql` reads the guard's rows as
    `guard`. Returns the pk written, or None."""
    if not _one_statement():
        if guard is not None and _run(*guard) is None:
            return None
        pk = _run(main_sql, params)
        if pk is not None and event is not None:
            event.save()
        return pk
    if guard is None and event is None:
        return _run(main_sql, params)
    parts, values = [], []
    if guard is not None:
        parts.append(f"guard AS ({guard[0]})")
        values += guard[1]
    parts.append(f"written AS ({main_sql})")
    values += params
    if event is not None:
        event_sql, event_params = _insert_sql(event, source="written")
        parts.append(f"logged AS ({event_sql})")
        values += event_params
    return _run(f"WITH {', '.join(parts)} SELECT * FROM written", values)  # noqa: S608


def insert_once(instance: models.Model, conflict: Sequence[str], *, event: models.Model | None = None) -> bool:
    """`INSERT … ON CONFLICT (conflict) DO NOTHING RETURNING pk`: one round trip and no savepoint.

    True when the row was inserted (`instance.pk` is set, as after `save()`); False when a row with the same
    `conflict` columns exists already (then nothing was written, `event` neither)."""
    meta = instance._meta
    sql, params = _insert_sql(instance)
    target = ", ".join(_column(_field(meta, name)) for name in conflict)
    sql += f" ON CONFLICT ({target}) DO NOTHING RETURNING {_column(meta.pk)}"
    pk = _write(sql, params, event=event)
    if pk is None:
        return False
    instance.pk = pk
    instance._state.adding = False
    instance._state.db = connection.alias
    return True


def update_where(
    instance: models.Model,
    fields: Iterable[str],
    *,
    where: Mapping[str, Any] | None = None,
    event: models.Model | None = None,
    guard: tuple[str, list[Any]] | None = None,
) -> bool:
    """`UPDATE … SET fields WHERE pk = … [AND column = value …] RETURNING pk`, with `event` inserted in the
    same statement when the row matched. The values are the instance's own; auto_now fields are written
    too. False when no row matched (nothing written: the row moved on).

    `guard`: a conditional write of another row (an `UPDATE … WHERE … RETURNING …`, e.g. taking stock) that
    must succeed first: the row is updated only when the guard wrote its row, all in one statement, so
    False means neither was written. The caller holds the row's lock (no `where` with a guard: a guard that
    wrote while the row did not match would be a write without its consequence)."""
    if guard is not None and where:
        raise ValueError("update_where: a guard needs the row locked, not a where condition")
    meta = instance._meta
    quote = connection.ops.quote_name
    chosen = [_field(meta, name) for name in fields]
    chosen += [field for field in meta.concrete_fields if getattr(field, "auto_now", False) and field not in chosen]
    _fill_timestamps(instance, chosen, adding=False)
    assignments = ", ".join(f"{_column(field)} = %s" for field in chosen)
    params = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in chosen]
    conditions = [f"{_column(meta.pk)} = %s"]
    params.append(meta.pk.get_db_prep_value(instance.pk, connection))
    for name, value in (where or {}).items():
        field = _field(meta, name)
        conditions.append(f"{_column(field)} = %s")
        params.append(field.get_db_prep_value(value, connection))
    if guard is not None and _one_statement():
        conditions.append("EXISTS (SELECT 1 FROM guard)")
    sql = (
        f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {' AND '.join(conditions)}"  # noqa: S608
        f" RETURNING {_column(meta.pk)}"
    )
    return _write(sql, params, event=event, guard=guard) is not None


def insert_each_once[M: models.Model](
    rows: Iterable[M], conflict: Sequence[str], *, inserted: Callable[[M], None]
) -> tuple[int, int]:
    """`insert_once` for each row (an inbox's notices: each its own statement), calling `inserted` for the rows
    written; returns (stored, duplicates)."""
    stored = duplicates = 0
    for row in rows:
        if insert_once(row, conflict):
            stored += 1
            inserted(row)
        else:
            duplicates += 1
    return stored, duplicates
