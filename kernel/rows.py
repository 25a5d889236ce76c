"""Row writes in one statement each: a unique constraint or a condition decides instead of a read first, and
the row's event (its timeline entry) goes into the same statement as a data-modifying CTE.

Generic over models: every app writes its rows with it.
Identifiers come from the models' own metadata; every value is a query parameter.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.db.models.base import ModelState
from django.db.models.fields.related import ForeignObjectRel
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.options import Options
from django.db.models.query_utils import DeferredAttribute
from django.db.models.signals import ModelSignal, post_init, pre_init
from django.dispatch.dispatcher import NO_RECEIVERS
from psycopg import _queries as psycopg_queries
from psycopg.types.json import Jsonb

# psycopg parses a statement's text for its placeholders once and keeps the result (an LRU of 128 texts) only for
# texts up to 4 KiB and 50 parameters; the statements written here (a placement, a new checkout, a checkout's
# update) are longer and were parsed again on every call, a few per cent of a purchase (issue 34). Their shapes
# are few (one per line count), so they are worth keeping too; the LRU still bounds the memory.
if getattr(psycopg_queries, "MAX_CACHED_STATEMENT_LENGTH", 65536) < 65536:
    psycopg_queries.MAX_CACHED_STATEMENT_LENGTH = 65536
if getattr(psycopg_queries, "MAX_CACHED_STATEMENT_PARAMS", 2000) < 2000:
    psycopg_queries.MAX_CACHED_STATEMENT_PARAMS = 2000


def _db() -> BaseDatabaseWrapper:
    """This thread's default connection itself: `connection` is a proxy that looks it up on every attribute."""
    return connections[DEFAULT_DB_ALIAS]


def _column(field: models.Field[Any, Any]) -> str:
    """A concrete field's quoted column name (quoted once per process: placements quote their pks per call)."""
    quoted = _QUOTED.get(field)
    if quoted is None:
        if field.column is None:
            raise ValueError(f"{field.name} has no column")
        quoted = _QUOTED[field] = connection.ops.quote_name(field.column)
    return quoted


_QUOTED: dict[models.Field[Any, Any], str] = {}


def _field(meta: Options[Any], name: str) -> models.Field[Any, Any]:
    """The concrete field `name` (a reverse relation has no column to write); looked up once per process."""
    key = (meta, name)
    field = _FIELDS.get(key)
    if field is None:
        found = meta.get_field(name)
        if not isinstance(found, models.Field):
            raise ValueError(f"{name} is not a column of {meta.label}")
        field = _FIELDS[key] = found
    return field


_FIELDS: dict[tuple[Options[Any], str], models.Field[Any, Any]] = {}

# Fields whose database value is the Python value itself when it has exactly this type (what their
# `get_db_prep_save` returns for it on PostgreSQL and SQLite): a purchase writes a few hundred such values, and
# the three calls per value through Django's preparation were a few per cent of it (issue 34). Any other value
# (None, an expression, a lazy string, a subclass) and any other field go through Django as before.
_PLAIN: dict[type[models.Field[Any, Any]], type] = {
    models.CharField: str,
    models.TextField: str,
    models.EmailField: str,
    models.SlugField: str,
    models.URLField: str,
    models.IntegerField: int,
    models.BigIntegerField: int,
    models.SmallIntegerField: int,
    models.PositiveIntegerField: int,
    models.PositiveBigIntegerField: int,
    models.PositiveSmallIntegerField: int,
    models.BooleanField: bool,
}


class _JsonColumn:
    """`plain` of a `JSONField` without an encoder on PostgreSQL: a dict or list goes as psycopg's `Jsonb` with
    `dumps_json` (what Django's `adapt_json_value` makes of it, with `json.dumps`)."""


class _AwareColumn:
    """`plain` of a `DateTimeField` on PostgreSQL: an aware `datetime` is its own database value (Django's
    `get_prep_value` returns it as it is, and the backend's `adapt_datetimefield_value` too); a naive one, or
    anything else, goes through Django (its warning and time zone included). A purchase writes about thirty
    timestamps (issue 34)."""


# orjson leaves to `default` what `json.dumps` would treat otherwise (a str/int/dict/list subclass, a dataclass, a
# datetime): `default` refuses, so `dumps_json` hands those to `json.dumps`, which serializes or refuses them as before.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def dumps_json(value: Any) -> bytes | str:
    """A JSON column's value as text for psycopg: orjson (compact; Postgres stores jsonb parsed, so the stored value
    is what `json.dumps`'s text gives), `json.dumps` for what orjson refuses (an integer past 64 bits, a non-str
    key, a type of the list above). Issue 34: a purchase writes about forty JSON values; `json.dumps` and Django's
    adaptation of each were about 2 % of its CPU."""
    try:
        return orjson.dumps(value, default=_refuse, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value)


# One column of a statement as its values are prepared: (attname, whether the instance's dict holds it, the
# type passed as it is or None, the wrapper psycopg needs for it or None, whether None passes as None, the
# field), decided once per shape (issue 34: a purchase prepares a few hundred values; per value, the field's
# type and size were looked up and the instance's descriptor called again).
type _Column = tuple[str, bool, type | None, Callable[[Any], Any] | None, bool, models.Field[Any, Any]]

# Descriptors that only read the instance's dict (what `getattr` would return when the value is there).
_DIRECT = (DeferredAttribute, ForeignKeyDeferredAttribute)


def _columns(fields: Sequence[models.Field[Any, Any]], db: BaseDatabaseWrapper) -> tuple[_Column, ...]:
    sized = getattr(db.ops, "integerfield_type_map", None)  # psycopg 3: an integer goes typed by its column's size
    columns = []
    for field in fields:
        plain = _PLAIN.get(type(field))
        wrap = None
        if plain is int and sized is not None:
            wrap = sized[field.get_internal_type()]
        elif plain is None and isinstance(field, models.ForeignKey) and type(field.get_db_prep_save(1, db)) is int:
            plain = int  # a key to an integer primary key: Django passes the int itself (checked in the tests)
        elif type(field) is models.JSONField and field.encoder is None and db.vendor == "postgresql":
            plain = _JsonColumn
        elif type(field) is models.DateTimeField and db.vendor == "postgresql":
            plain = _AwareColumn
        # a descriptor of its own (a file, …): read through `getattr` and prepared by Django
        direct = isinstance(getattr(field.model, field.attname, None), _DIRECT)
        try:
            none_plain = field.get_db_prep_save(None, db) is None
        except Exception:  # a field that refuses None: Django's own path says how
            none_plain = False
        columns.append((field.attname, direct, plain if direct else None, wrap, none_plain, field))
    return tuple(columns)


def _db_values(instance: models.Model, columns: Sequence[_Column], db: BaseDatabaseWrapper) -> list[Any]:
    """`field.get_db_prep_save(value, db)` of each column's value on `instance`, the plain ones as they are."""
    state = instance.__dict__
    values: list[Any] = []
    append = values.append
    for attname, direct, plain, wrap, none_plain, field in columns:
        value = state.get(attname, _ABSENT) if direct else _ABSENT
        if value is _ABSENT:
            value = getattr(instance, attname)  # deferred, or a descriptor of its own
        if type(value) is plain:
            append(value if wrap is None else wrap(value))
        elif value is None and none_plain:
            append(None)
        elif plain is _JsonColumn and type(value) in _JSON_CONTAINERS:
            append(Jsonb(value, dumps=dumps_json))
        elif plain is _AwareColumn and type(value) is datetime.datetime and value.utcoffset() is not None:
            append(value)
        else:
            append(field.get_db_prep_save(value, db))
    return values


_JSON_CONTAINERS = frozenset({dict, list})


# A timestamp save() would fill: (field, always, add). auto_now always; auto_now_add on insert when the caller
# set none (`always` False: only when the instance holds None).
type _Stamp = tuple[models.Field[Any, Any], bool, bool]


def _fill_timestamps(instance: models.Model, stamped: Iterable[_Stamp]) -> None:
    for field, always, add in stamped:
        if always or getattr(instance, field.attname) is None:
            field.pre_save(instance, add=add)


# Values a write can compare with `==` and that nobody changes in place: a JSON column's dict or list may be
# edited in place after loading, so it is never taken as unchanged.
_IMMUTABLE = (str, int, float, bool, type(None), datetime.datetime, datetime.date, datetime.time, Decimal, UUID)
_IMMUTABLE_TYPES = frozenset(_IMMUTABLE)  # the exact types, a set lookup before `isinstance` walks the tuple


def _attnames(meta: Options[Any]) -> tuple[str, ...]:
    attnames = _ATTNAMES.get(meta)
    if attnames is None:
        attnames = _ATTNAMES[meta] = tuple(field.attname for field in meta.concrete_fields)
    return attnames


_ATTNAMES: dict[Options[Any], tuple[str, ...]] = {}


_ABSENT = object()


class RemembersLoaded:
    """Model mixin: each instance read from the database remembers its immutable column values as read, so that
    `update_where(changed_only=True)` writes only the columns that changed since (issue 34: a checkout's full
    row is about sixty columns, and a status change touches four)."""

    _loaded: dict[str, Any]

    @classmethod
    def from_db(
        cls, db: str | None, field_names: Sequence[str], values: Sequence[Any], *, fetch_mode: Any = None
    ) -> Any:
        if len(field_names) != len(values) or not _reads_plainly(cls):  # type: ignore[arg-type]
            instance = super().from_db(db, field_names, values, fetch_mode=fetch_mode)  # type: ignore[misc]
            read = instance.__dict__
            loaded = {}
            for attname in _attnames(instance._meta):
                value = read.get(attname, _ABSENT)
                if type(value) in _IMMUTABLE_TYPES or isinstance(value, _IMMUTABLE):
                    loaded[attname] = value
            instance._loaded = loaded
            return instance
        # What Django's `from_db` makes (`cls(*values)`: each value set through a descriptor that only keeps it in
        # the instance's dict, the signals heard by nobody), without walking the row's sixty fields in Python twice
        # (issue 34: the checkout is read on every update and complete).
        instance = cls.__new__(cls)
        model_state = ModelState()
        model_state.adding, model_state.db = False, db
        if fetch_mode is not None:
            model_state.fetch_mode = fetch_mode
        state = instance.__dict__
        state["_state"] = model_state
        state.update(zip(field_names, values, strict=True))
        state["_loaded"] = {
            attname: value
            for attname, value in zip(field_names, values, strict=True)
            if type(value) in _IMMUTABLE_TYPES or isinstance(value, _IMMUTABLE)
        }
        return instance

    # Written or read again some other way: what was read is no longer known to be what the row holds, so the
    # next `changed_only` write writes every column it is given, as a full save would.
    def save(self, *args: Any, **kwargs: Any) -> None:
        self.__dict__.pop("_loaded", None)
        super().save(*args, **kwargs)  # type: ignore[misc]

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        self.__dict__.pop("_loaded", None)
        super().refresh_from_db(*args, **kwargs)  # type: ignore[misc]


def _reads_plainly(model: type[models.Model]) -> bool:
    """Whether `RemembersLoaded.from_db` may fill an instance's dict itself: Django's own `__init__`, every concrete
    field's attribute a descriptor that only keeps its value (checked once per model) and no receiver of the
    instance signals (checked on every call, as Django's `send` does)."""
    plain = _PLAIN_READS.get(model)
    if plain is None:
        plain = _PLAIN_READS[model] = (
            model.__init__ is models.Model.__init__
            and not model._meta.abstract
            and all(isinstance(getattr(model, field.attname, None), _DIRECT) for field in model._meta.concrete_fields)
        )
    return plain and not _heard(pre_init, model) and not _heard(post_init, model)


_PLAIN_READS: dict[type[models.Model], bool] = {}


# The SQL text of a statement depends only on the model, the columns and the database: built once per process
# (issue 34: quoting every column of a wide row on every write was a few per cent of a purchase's CPU).
_SHAPES: dict[tuple[object, ...], Any] = {}
_MAX_SHAPES = 2000


def _stamped(fields: Sequence[models.Field[Any, Any]], *, adding: bool) -> tuple[_Stamp, ...]:
    stamped = []
    for field in fields:
        if getattr(field, "auto_now", False):
            stamped.append((field, True, adding))
        elif adding and getattr(field, "auto_now_add", False):
            stamped.append((field, False, True))
    return tuple(stamped)


@dataclass(frozen=True, slots=True)
class _Insert:
    """A model's INSERT as built once per process: `INSERT INTO t (cols)`, its fields in column order, how their
    values are prepared, the timestamps to fill and `(%s, …)` for one row."""

    head: str
    fields: tuple[models.Field[Any, Any], ...]
    columns: tuple[_Column, ...]
    stamped: tuple[_Stamp, ...]
    placeholders: str


def _insert_shape(meta: Options[Any], db: BaseDatabaseWrapper) -> _Insert:
    key = ("insert", meta.label, db.vendor)
    shape = _SHAPES.get(key)
    if shape is None:
        fields = tuple(field for field in meta.concrete_fields if not field.primary_key)
        columns = ", ".join(_column(field) for field in fields)
        shape = _SHAPES[key] = _Insert(
            head=f"INSERT INTO {db.ops.quote_name(meta.db_table)} ({columns})",
            fields=fields,
            columns=_columns(fields, db),
            stamped=_stamped(fields, adding=True),
            placeholders=", ".join(["%s"] * len(fields)),
        )
    return shape


def _insert_values(instance: models.Model, shape: _Insert, db: BaseDatabaseWrapper) -> list[Any]:
    _fill_timestamps(instance, shape.stamped)
    return _db_values(instance, shape.columns, db)


def _insert_sql(instance: models.Model, db: BaseDatabaseWrapper, source: str | None = None) -> tuple[str, list[Any]]:
    """`INSERT INTO t (cols) VALUES (…)`, or `… SELECT … FROM source` (one row per row of that CTE)."""
    shape = _insert_shape(instance._meta, db)
    placeholders = shape.placeholders
    rows = f"SELECT {placeholders} FROM {source}" if source else f"VALUES ({placeholders})"  # noqa: S608
    return f"{shape.head} {rows}", _insert_values(instance, shape, db)


def _cursor(db: BaseDatabaseWrapper) -> CursorWrapper:
    """A cursor of `db`'s current connection for this module's statements, made once per connection and reused:
    Django's `cursor()` checks and wraps a new driver cursor each time (about forty Python calls, for each of a
    purchase's seven row writes; issue 34). Made anew, through `cursor()`, whenever the connection is another one
    (closed, reconnected, or another from the pool), the queries are logged or not as they were (a test capturing
    them), or the request's health check is still to be done; each statement still goes through Django's wrapper
    (its execute wrappers, its logging, its error translation)."""
    kept = db.__dict__.get(_KEPT_CURSOR)
    if (
        kept is not None
        and kept[0] is db.connection
        and kept[1] == db.queries_logged
        and (getattr(db, "health_check_done", False) or not getattr(db, "health_check_enabled", True))
    ):
        cursor: CursorWrapper = kept[2]
        return cursor
    cursor = db.cursor()  # opens the connection if needed, after the health check
    db.__dict__[_KEPT_CURSOR] = (db.connection, db.queries_logged, cursor)  # the connection held: never another's id
    return cursor


_KEPT_CURSOR = "_kernel_rows_cursor"


def kept_cursor(db: BaseDatabaseWrapper | None = None) -> CursorWrapper:
    """`_cursor` of `db` (the default database's connection when None), for a statement of the caller's own on a
    hot path (not closed after it: the next statement reuses it)."""
    return _cursor(_db() if db is None else db)


def _run(db: BaseDatabaseWrapper, sql: str, params: list[Any]) -> Any:
    cursor = _cursor(db)
    cursor.execute(sql, params)
    row = cursor.fetchone()
    return None if row is None else row[0]


def _one_statement(db: BaseDatabaseWrapper) -> bool:
    # SQLite (the embedded `make run`) has no data-modifying CTE: there the parts run one after another, in
    # the caller's transaction.
    return db.vendor == "postgresql"


def _write(
    db: BaseDatabaseWrapper,
    main_sql: str,
    params: list[Any],
    *,
    event: models.Model | None = None,
    guard: tuple[str, list[Any]] | None = None,
    then: Then | None = None,
    locked: tuple[str, list[Any]] | None = None,
) -> Any:
    """Run `main_sql` (ending in RETURNING pk) after `guard` and with `event` and `then`, one data-modifying CTE
    each: `event` is inserted only when the main statement wrote its row; `main_sql` reads the guard's rows as
    `guard`. Returns the pk written, or None; `then.value` is what `then` returned (PostgreSQL only)."""
    if not _one_statement(db):
        if guard is not None and _run(db, *guard) is None:
            return None
        pk = _run(db, main_sql, params)
        if pk is not None and event is not None:
            event.save()
        return pk
    if guard is None and event is None and then is None:
        return _run(db, main_sql, params)
    parts, values = [], []
    if locked is not None:
        parts.append(f"locked AS ({locked[0]})")
        values += locked[1]
    if guard is not None:
        parts.append(f"guard AS ({guard[0]})")
        values += guard[1]
    parts.append(f"written AS ({main_sql})")
    values += params
    if event is not None:
        event_sql, event_params = _insert_sql(event, db, source="written")
        parts.append(f"logged AS ({event_sql})")
        values += event_params
    if then is None:
        return _run(db, f"WITH {', '.join(parts)} SELECT * FROM written", values)  # noqa: S608
    parts.append(f"then_ AS ({then.sql})")
    values += then.params
    cursor = _cursor(db)
    cursor.execute(f"WITH {', '.join(parts)} SELECT (SELECT * FROM written), (SELECT * FROM then_)", values)  # noqa: S608
    pk, then.value = cursor.fetchone()
    return pk


class Then:
    """A write that rides in `insert_once`'s statement and runs only when its row was inserted: `sql` is a
    data-modifying statement selecting from the CTE `written` (the inserted row, e.g. `INSERT … SELECT … WHERE
    EXISTS (SELECT 1 FROM written)`) and returning one value, `value` after the statement (None when it did not
    run: the row was not inserted, or a database without data-modifying CTEs, where the caller does it itself)."""

    def __init__(self, sql: str, params: Sequence[Any]) -> None:
        self.sql, self.params = sql, list(params)
        self.value: Any = None


def insert_once(
    instance: models.Model,
    conflict: Sequence[str],
    *,
    event: models.Model | None = None,
    guard: tuple[str, list[Any]] | None = None,
    then: Then | None = None,
) -> bool:
    """`INSERT … ON CONFLICT (conflict) DO NOTHING RETURNING pk`: one round trip and no savepoint.

    True when the row was inserted (`instance.pk` is set, as after `save()`); False when a row with the same
    `conflict` columns exists already (then nothing was written, `event` neither). `guard`: a query (e.g.
    `unchanged`) that must yield a row for anything to be written, run in the same statement (False: nothing
    was written). `then`: a write of another row made in the same statement only when this one was inserted."""
    meta, db = instance._meta, _db()
    sql, params = _insert_sql(instance, db, source="guard" if guard is not None and _one_statement(db) else None)
    key = ("conflict", meta.label, db.vendor, tuple(conflict))
    tail = _SHAPES.get(key)
    if tail is None:
        target = ", ".join(_column(_field(meta, name)) for name in conflict)
        tail = _SHAPES[key] = f" ON CONFLICT ({target}) DO NOTHING RETURNING {_column(meta.pk)}"
    pk = _write(db, sql + tail, params, event=event, guard=guard, then=then if _one_statement(db) else None)
    if pk is None:
        return False
    instance.pk = pk
    instance._state.adding = False
    instance._state.db = db.alias
    return True


def unchanged(instance: models.Model, names: Sequence[str]) -> tuple[str, list[Any]]:
    """A guard (`insert_once`, `update_where`): the row of `instance` locked (`FOR UPDATE`, where the database has
    it) and yielded only while its `names` columns still hold the instance's values, as read. Under a concurrent
    change the lock waits for it, then compares the committed row (PostgreSQL re-reads a locked row): a write
    guarded by it is made only if what the caller read is still what the row holds."""
    meta, db = instance._meta, _db()
    key = ("unchanged", meta.label, db.vendor, tuple(names))
    shape = _SHAPES.get(key)
    if shape is None:
        fields = [_field(meta, name) for name in names]
        conditions = " AND ".join(f"{_column(field)} = %s" for field in fields)
        lock = " FOR UPDATE" if db.features.has_select_for_update else ""
        text = f"SELECT 1 FROM {db.ops.quote_name(meta.db_table)} WHERE {_column(meta.pk)} = %s AND {conditions}{lock}"  # noqa: S608
        shape = _SHAPES[key] = (text, fields)
    text, fields = shape
    params = [meta.pk.get_db_prep_value(instance.pk, db)]
    params += [field.get_db_prep_value(getattr(instance, field.attname), db) for field in fields]
    return text, params


def update_where(
    instance: models.Model,
    fields: Iterable[str],
    *,
    where: Mapping[str, Any] | None = None,
    event: models.Model | None = None,
    guard: tuple[str, list[Any]] | None = None,
    changed_only: bool = False,
    version: str | None = None,
) -> bool:
    """`UPDATE … SET fields WHERE pk = … [AND column = value …] RETURNING pk`, with `event` inserted in the
    same statement when the row matched. The values are the instance's own; auto_now fields are written
    too. False when no row matched (nothing written: the row moved on).

    `guard`: a conditional write of another row (an `UPDATE … WHERE … RETURNING …`, e.g. taking stock) that
    must succeed first: the row is updated only when the guard wrote its row, all in one statement, so
    False means neither was written. The caller holds the row's lock (no `where` with a guard: a guard that
    wrote while the row did not match would be a write without its consequence).

    `changed_only`: of `fields`, only those whose value differs from the one read (`RemembersLoaded`; the
    caller holds the row's lock since it read it, or `version` proves the row unchanged since it was read).

    `version`: the row's `xmin` as read (as text, PostgreSQL only): the row is written only while it is still that
    version of the row, i.e. no transaction wrote it since it was read (a concurrent writer's UPDATE waited for
    makes the row a new version: PostgreSQL compares the committed row). An optimistic check in place of a lock
    held from the read to the write; False when the row moved on. With a `guard` too, the statement first locks the
    row while it is still that version (the CTE `locked`; the lock order of a caller that locks it first) and the
    guard writes only when it did (its condition includes `VERSION_LOCKED`): both, or neither."""
    if guard is not None and where:
        raise ValueError("update_where: a guard needs the row locked, not a where condition")
    if version is not None and not _one_statement(_db()):
        raise ValueError("update_where: a row version is PostgreSQL's xmin")
    if guard is not None and version is not None and VERSION_LOCKED not in guard[0]:
        raise ValueError("update_where: with a version, the guard writes only if VERSION_LOCKED")
    names = tuple(fields)
    db = _db()
    loaded = getattr(instance, "_loaded", None) if changed_only else None
    if loaded is not None:
        names = _changed(instance, names, loaded)
    sql, params, chosen = _update_statement(
        instance, names, where or {}, db, guarded=guard is not None and _one_statement(db), version=version
    )
    locked = _version_lock(instance, version, db) if guard is not None and version is not None else None
    written = _write(db, sql, params, event=event, guard=guard, locked=locked) is not None
    if written and loaded is not None:  # what the row holds now (a new dict: a copy of the instance shares it)
        remembered = dict(loaded)
        for field in chosen:
            value = getattr(instance, field.attname)
            if isinstance(value, _IMMUTABLE):
                remembered[field.attname] = value
            else:
                remembered.pop(field.attname, None)
        instance.__dict__["_loaded"] = remembered
    return written


# The condition a guard of `update_where(version=…)` writes under: the row was locked while still that version.
VERSION_LOCKED = "EXISTS (SELECT 1 FROM locked)"


def _version_lock(instance: models.Model, version: str, db: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
    """`SELECT 1 … FOR UPDATE` of `instance`'s row while it is still `version` (PostgreSQL re-reads a row it waited
    for, so a version written meanwhile matches nothing)."""
    meta = instance._meta
    table = db.ops.quote_name(meta.db_table)
    sql = f"SELECT 1 FROM {table} WHERE {_column(meta.pk)} = %s AND xmin = %s::xid FOR UPDATE"  # noqa: S608
    return sql, [meta.pk.get_db_prep_value(instance.pk, db), version]


def _changed(instance: models.Model, names: tuple[str, ...], loaded: Mapping[str, Any]) -> tuple[str, ...]:
    """Of `names`, those whose value differs from the one read (a value not remembered counts as changed)."""
    meta = instance._meta
    key = ("attnames", meta.label, names)
    pairs: tuple[tuple[str, str], ...] | None = _SHAPES.get(key)
    if pairs is None:
        pairs = tuple((name, _field(meta, name).attname) for name in names)
        if len(_SHAPES) < _MAX_SHAPES:
            _SHAPES[key] = pairs
    state = instance.__dict__
    changed = []
    for name, attname in pairs:
        was = loaded.get(attname, _ABSENT)
        if was is _ABSENT:
            changed.append(name)
            continue
        now = state.get(attname, _ABSENT)
        if type(was) is not type(now) or was != now:
            changed.append(name)
    return tuple(changed)


def _update_statement(
    instance: models.Model,
    names: tuple[str, ...],
    where: Mapping[str, Any],
    db: BaseDatabaseWrapper,
    *,
    guarded: bool,
    version: str | None = None,
) -> tuple[str, list[Any], tuple[models.Field[Any, Any], ...]]:
    """`UPDATE … RETURNING pk` of `update_where`: its SQL (text built once per shape), values and columns."""
    meta = instance._meta
    versioned = version is not None
    key = ("update", meta.label, db.vendor, names, tuple(where), guarded, versioned)
    shape = _SHAPES.get(key)
    if shape is None:
        columns = [_field(meta, name) for name in names]
        stamps = [field for field in meta.concrete_fields if getattr(field, "auto_now", False)]
        columns += [field for field in stamps if field not in columns]
        conditions = [f"{_column(meta.pk)} = %s"] + [f"{_column(_field(meta, name))} = %s" for name in where]
        if versioned:
            conditions.append("xmin = %s::xid")
        if guarded:
            conditions.append("EXISTS (SELECT 1 FROM guard)")
        text = (
            f"UPDATE {db.ops.quote_name(meta.db_table)}"  # noqa: S608
            f" SET {', '.join(f'{_column(field)} = %s' for field in columns)}"
            f" WHERE {' AND '.join(conditions)} RETURNING {_column(meta.pk)}"
        )
        shape = (
            text,
            tuple(columns),
            _columns(columns, db),
            _stamped(columns, adding=False),
            [_field(meta, n) for n in where],
        )
        if len(_SHAPES) < _MAX_SHAPES:  # `changed_only` makes a shape per set of changed columns: a few in practice
            _SHAPES[key] = shape
    sql: str
    chosen: tuple[models.Field[Any, Any], ...]
    sql, chosen, prepared, stamped, matched = shape
    _fill_timestamps(instance, stamped)
    params = _db_values(instance, prepared, db)
    params.append(meta.pk.get_db_prep_value(instance.pk, db))
    params += [field.get_db_prep_value(value, db) for field, value in zip(matched, where.values(), strict=True)]
    if versioned:
        params.append(version)
    return sql, params, chosen


@dataclass(frozen=True)
class Update:
    """An `update_where(instance, fields, where=…, event=…)` to run as the condition of `update_then_insert`."""

    instance: models.Model
    fields: tuple[str, ...]
    where: Mapping[str, Any]
    event: models.Model | None = None


def update_then_insert(update: Update, head: models.Model, *groups: Sequence[models.Model]) -> bool:
    """`update_where` and, only when it wrote its row, `insert_together(head, *groups)`: one statement on
    PostgreSQL (the head's INSERT reads the updated row's CTE, each row of the groups the head's, one CTE per
    row). False when the row did not match: then nothing at all was written. For a placement: the checkout
    completed while it still waits for this payment, and its order with it."""
    db = _db()
    if not _one_statement(db):
        if not update_where(update.instance, update.fields, where=update.where, event=update.event):
            return False
        insert_together(head, *groups)
        return True
    sql, values, _ = _update_statement(update.instance, update.fields, update.where, db, guarded=False)
    parts = [f"written AS ({sql})"]
    if update.event is not None:
        event_sql, event_params = _insert_sql(update.event, db, source="written")
        parts.append(f"logged AS ({event_sql})")
        values += event_params
    head_sql, head_params = _insert_sql(head, db, source="written")
    head_pk = _column(head._meta.pk)
    parts.append(f"head AS ({head_sql} RETURNING {head_pk})")
    values += head_params
    rows = [row for group in groups for row in group]
    for index, row in enumerate(rows):
        shape = _insert_shape(row._meta, db)
        selected, kept = _row_shape(shape, row, head, f"head.{head_pk}", db)
        returning = _column(row._meta.pk)
        parts.append(f"r{index} AS ({shape.head} SELECT {selected} FROM head RETURNING {returning})")  # noqa: S608
        row_values = _insert_values(row, shape, db)
        values += row_values if kept is None else [row_values[i] for i in kept]
    pks = "".join(f", (SELECT {_column(row._meta.pk)} FROM r{index})" for index, row in enumerate(rows))  # noqa: S608
    cursor = _cursor(db)
    cursor.execute(f"WITH {', '.join(parts)} SELECT (SELECT {head_pk} FROM head){pks}", values)  # noqa: S608
    found = cursor.fetchone()
    if found is None or found[0] is None:
        return False
    _saved(db, [(head, found[0]), *zip(rows, found[1:], strict=True)], head, groups)
    return True


def _saved(
    db: BaseDatabaseWrapper,
    written: Iterable[tuple[models.Model, Any]],
    head: models.Model,
    groups: Sequence[Sequence[models.Model]],
) -> None:
    """Every instance written gets its pk, as after `save()`; the groups' foreign keys read `head.pk`."""
    for instance, pk in written:
        instance.pk = pk
        instance._state.adding = False
        instance._state.db = db.alias
    for group in groups:
        if not group:
            continue
        for _, field in _links(group[0]._meta, head):
            for instance in group:
                if field.get_cached_value(instance, None) is head:
                    setattr(instance, field.attname, head.pk)


def insert_together(head: models.Model, *groups: Sequence[models.Model]) -> None:
    """INSERT `head` and the rows of `groups` (each group: rows of one model) in one statement: data-modifying
    CTEs, each group's foreign key to `head` filled from the head's RETURNING (a row that refers to `head` by its
    relation, e.g. `OrderLine(order=order)`). Every instance gets its pk, as after `save()` / `bulk_create`.

    The rows are new by construction (no conflict handling): for a placement's order, lines and events."""
    groups = tuple(group for group in groups if group)
    db = _db()
    if not _one_statement(db):
        with transaction.atomic():  # one after another, all or none (a caller may run it outside a transaction)
            head.save()
            for group in groups:
                type(group[0])._default_manager.bulk_create(list(group))
        return
    head_sql, head_params = _insert_sql(head, db)
    head_pk = _column(head._meta.pk)
    parts, values = [f"head AS ({head_sql} RETURNING {head_pk})"], list(head_params)
    for index, group in enumerate(groups):
        sql, params = _insert_rows(group, head, db)
        parts.append(f"g{index} AS ({sql} RETURNING {_column(group[0]._meta.pk)})")
        values += params
    arrays = "".join(
        f", ARRAY(SELECT {_column(group[0]._meta.pk)} FROM g{index})"  # noqa: S608 — identifiers from metadata
        for index, group in enumerate(groups)
    )
    cursor = _cursor(db)
    cursor.execute(f"WITH {', '.join(parts)} SELECT (SELECT {head_pk} FROM head){arrays}", values)  # noqa: S608
    row = cursor.fetchone()
    pairs = ((r, pk) for group, pks in zip(groups, row[1:], strict=True) for r, pk in zip(group, pks, strict=True))
    _saved(db, [(head, row[0]), *pairs], head, groups)


def _links(meta: Options[Any], head: models.Model) -> tuple[tuple[int, models.ForeignKey[Any, Any]], ...]:
    """The foreign keys of `meta`'s rows to `head`'s model, with their index among the inserted fields."""
    key = ("links", meta.label, head._meta.label)
    links = _SHAPES.get(key)
    if links is None:
        fields = [field for field in meta.concrete_fields if not field.primary_key]
        links = _SHAPES[key] = tuple(
            (index, field)
            for index, field in enumerate(fields)
            if isinstance(field, models.ForeignKey) and field.related_model is type(head)
        )
    return links


def _row_shape(
    shape: _Insert, row: models.Model, head: models.Model, head_pk: str, db: BaseDatabaseWrapper
) -> tuple[str, tuple[int, ...] | None]:
    """A row's placeholders, `head_pk` (SQL) for each relation to `head` (the very instance, unsaved), and the
    indices of the values that remain parameters (None: all of them). Built once per shape of links."""
    meta = row._meta
    linked = tuple(index for index, field in _links(meta, head) if field.get_cached_value(row, None) is head)
    key = ("row", meta.label, db.vendor, linked, head_pk)
    found = _SHAPES.get(key)
    if found is None:
        text = ", ".join(head_pk if index in linked else "%s" for index in range(len(shape.fields)))
        kept = tuple(index for index in range(len(shape.fields)) if index not in linked) if linked else None
        found = _SHAPES[key] = (text, kept)
    return found


def _insert_rows(rows: Sequence[models.Model], head: models.Model, db: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
    """`INSERT INTO t (cols) VALUES (…), (…)` where a row's relation to `head` (unsaved) reads the head CTE."""
    shape = _insert_shape(rows[0]._meta, db)
    head_pk = f"(SELECT {_column(head._meta.pk)} FROM head)"  # noqa: S608 — identifiers from metadata
    tuples, values = [], []
    for row in rows:
        selected, kept = _row_shape(shape, row, head, head_pk, db)
        tuples.append(f"({selected})")
        row_values = _insert_values(row, shape, db)
        values += row_values if kept is None else [row_values[i] for i in kept]
    return f"{shape.head} VALUES {', '.join(tuples)}", values


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


# --- new rows -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _New:
    """How `new_row` builds an instance of a model: the defaults that are plain values (one dict, copied in at
    once), the fields whose default is a callable (attname, relation name or None, Django's `get_default`), the
    attnames a value may be given by, and the relations (given as an instance, set through their descriptor)."""

    plain: dict[str, Any]
    called: tuple[tuple[str, str | None, Callable[[], Any]], ...]
    attnames: frozenset[str]
    relations: frozenset[str]


_NEWS: dict[type[models.Model], _New | None] = {}


def _new_plan(model: type[models.Model]) -> _New | None:
    """None when the model needs Django's own `__init__`: one of its own, a field with a database default or a
    descriptor that does more than keep the value (a file), or a value Django would refuse."""
    if model.__init__ is not models.Model.__init__ or model._meta.abstract:
        return None
    plain: dict[str, Any] = {}
    called: list[tuple[str, str | None, Callable[[], Any]]] = []
    relations = set()
    for field in model._meta.fields:  # what Model.__init__ walks
        if field.column is None or field.generated:
            continue
        if field.has_db_default() or not isinstance(getattr(model, field.attname, None), _DIRECT):
            return None
        relation = field.name if isinstance(field.remote_field, ForeignObjectRel) else None
        if relation is not None:
            relations.add(relation)
        if field.has_default() and callable(field.default):
            called.append((field.attname, relation, field.get_default))
        else:
            plain[field.attname] = field.get_default()  # None, "" or the one default object, as Django gives it
    return _New(plain, tuple(called), frozenset(plain) | {attname for attname, _, _ in called}, frozenset(relations))


def _heard(signal: ModelSignal, model: type[models.Model]) -> bool:
    """Whether `signal` may have a receiver for `model` (what its `send` checks first; a sender it has not sent for
    yet is unknown, and counts as heard: Django's `__init__` then sends it, and the next call knows)."""
    return bool(signal.receivers) and signal.sender_receivers_cache.get(model) is not NO_RECEIVERS


def new_row[M: models.Model](model: type[M], **values: Any) -> M:
    """`model(**values)` for a row about to be written: the same instance (defaults, callable defaults called only
    for fields not given, a relation given as an instance set through its descriptor), built without walking
    every field of the model in Python (issue 34: a purchase builds a score of rows, a checkout sixty columns
    wide, and Django's `__init__` was about 6 % of its CPU). Anything else (a model with init signals, a property
    or an unknown name among `values`, a field given by both its name and its attname) goes through Django."""
    plan = _NEWS.get(model, _ABSENT)
    if plan is _ABSENT:
        plan = _NEWS[model] = _new_plan(model)
    if plan is None or _heard(pre_init, model) or _heard(post_init, model):
        return model(**values)
    assert isinstance(plan, _New)
    relations, attnames = plan.relations, plan.attnames
    given = []
    for name in values:
        if name in relations:
            given.append(name)
        elif name not in attnames:
            return model(**values)
    instance = model.__new__(model)
    state = instance.__dict__
    state["_state"] = ModelState()
    state.update(plan.plain)
    for attname, relation, default in plan.called:
        if attname not in values and (relation is None or relation not in values):
            state[attname] = default()
    for name, value in values.items():
        if name not in relations:
            state[name] = value
    for name in given:
        if _field(model._meta, name).attname in values:  # both the relation and its id: Django's own rules
            return model(**values)
        setattr(instance, name, values[name])
    return instance
