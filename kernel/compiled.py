"""Querysets compiled once per process: a fixed-shape read whose SQL compile cost more CPU than running it.

Each shape is built once with stand-in values (`stand_in(i)`: strings no real value holds, or for integer
parameters `stand_in(i, int)`), compiled, and later calls bind the real values in the stand-ins' places and
run the same SQL. A shape that reads one model's own columns (no select_related, annotation or extra select)
is read straight from the cursor: the compiler's converters and `Model.from_db`, what the queryset's row
reader does for it, without its per-call plumbing (issue 34: a read of orders or fiscal documents). Any
other shape (select_related, annotations, extra selects: the checkout's lock) is read from the cursor too, as
Django's own row reader (`ModelIterable`) reads it (the same model instances as `list(queryset)`), with what that
reader computes from the compiled statement on every call (the related populators, the row's columns) computed
once (issue 34); a shape that reader treats specially (peers tracked by the fetch mode, known related objects),
and any shape off PostgreSQL, goes through `ModelIterable` itself.

A stand-in must pass the field's own preparation unchanged (a string for a text column, `stand_in(i, int)`
for an integer one) and may be bound in several parameters (the checkout lock binds its id three times).
Every shape is built twice, with two sets of stand-ins: the parameters where the two differ, each by its own
stand-in, are the slots; anything else (a stand-in missing, inlined in the SQL, changed by the field's
preparation, or equal to a constant of the query) is refused when the shape is first compiled.

Used by the worker's reads (orders, fiscal, invoicing, issue 34), Get Order's read and the checkout's lock
(shop/checkout/core.py).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Hashable
from types import SimpleNamespace
from typing import Any

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, get_related_populators

from kernel.rows import kept_cursor

# Integer stand-ins: in range for every integer column, positive or not (Django refuses out-of-range lookups at
# compile time), and far from any identifier this shop reaches; the second build proves no constant equals one.
_INT_STAND_IN = 2_000_000_000
_SECOND = 1 << 20  # the second build's stand-ins: this far from the first's


def stand_in(index: int, kind: type[str] | type[int] = str) -> Any:
    """The stand-in of parameter `index` (NUL never reaches a real identifier: PostgreSQL text refuses it)."""
    if kind is int:
        return _INT_STAND_IN + index
    return f"\x00compiled parameter {index}\x00"


def _stand_ins(arity: int, kind: type[str] | type[int], second: bool) -> list[Any]:
    if not second:
        return [stand_in(index, kind) for index in range(arity)]
    if kind is int:
        return [_INT_STAND_IN + _SECOND + index for index in range(arity)]
    return [f"\x00compiled parameter {index} (second)\x00" for index in range(arity)]


def _slots(
    first: tuple[str, tuple[Any, ...]], second: tuple[str, tuple[Any, ...]], arity: int, kind: type
) -> tuple[tuple[int, int, Any], ...]:
    """(position in the parameters, stand-in index, wrapper type or None) of every parameter bound to a value;
    ValueError when the two builds differ anywhere else, or a stand-in is bound nowhere."""
    (sql, params), (sql_2, params_2) = first, second
    ones, twos = _stand_ins(arity, kind, False), _stand_ins(arity, kind, True)
    if sql != sql_2 or len(params) != len(params_2):
        raise ValueError("a stand-in changed the statement (inlined in the SQL, or a lookup that varies with it)")
    slots = []
    for position, (value, value_2) in enumerate(zip(params, params_2, strict=True)):
        if isinstance(value, kind) and not isinstance(value, bool) and value in ones:
            index = ones.index(value)
            if type(value_2) is type(value) and value_2 == twos[index]:
                # A value the backend wraps (psycopg's Int8 for a big integer column) is bound wrapped the same.
                slots.append((position, index, None if type(value) is kind else type(value)))
                continue
            raise ValueError("a stand-in equals a constant of the query, or stands for two values")
        if type(value) is not type(value_2) or value != value_2:  # a constant of the query is the same in both
            raise ValueError("a parameter varies with the stand-ins but is none of them (changed by the field?)")
    if {slot[1] for slot in slots} != set(range(arity)):
        raise ValueError("each stand-in must be a parameter of the query, at least once")
    return tuple(slots)


class Compiled:
    def __init__(self, build: Callable[..., QuerySet[Any]], arity: int, kind: type[str] | type[int] = str) -> None:
        self.queryset = queryset = build(*_stand_ins(arity, kind, False))
        self.compiler = compiler = queryset.query.get_compiler(using=queryset.db)
        self.sql, params = compiler.as_sql()  # fills the compiler's select, klass_info, annotation map
        self.params = tuple(params)
        second = build(*_stand_ins(arity, kind, True))
        sql_2, params_2 = second.query.get_compiler(using=second.db).as_sql()
        self.slots = _slots((self.sql, self.params), (sql_2, tuple(params_2)), arity, kind)
        # The row converters depend only on the selected columns; on PostgreSQL none is the connection's own.
        fields = [column[0] for column in compiler.select[0 : compiler.col_count]]
        self.composite = compiler.has_composite_fields(fields)
        postgres = compiler.connection.vendor == "postgresql"
        self.converters = compiler.get_converters(fields) if postgres else None
        self.plain = self._plain_reader(fields) if postgres and not self.composite else None
        self.joined = self._joined_reader() if postgres and not self.composite and self.plain is None else None

    def _plain_reader(self, fields: list[Any]) -> Any:
        """For a shape of one model's own columns: its attnames, converters and `from_db` (None otherwise)."""
        compiler, queryset = self.compiler, self.queryset
        info = compiler.klass_info
        if (
            info is None
            or info.get("related_klass_infos")
            or compiler.annotation_col_map
            or list(info["select_fields"]) != list(range(compiler.col_count))
            or queryset._fetch_mode.track_peers  # type: ignore[attr-defined]
        ):
            return None
        model, converters = info["model"], self.converters or {}
        attnames = [field.target.attname for field in fields]
        from_db = functools.partial(model.from_db, fetch_mode=queryset._fetch_mode)  # type: ignore[attr-defined]
        return attnames, [(index, *pair) for index, pair in converters.items()], from_db

    def _joined_reader(self) -> Any:
        """For any other shape of model instances (select_related, annotations, extra selects): what Django's row
        reader (`ModelIterable`) computes from the compiled statement before reading its rows (the row's columns,
        the related models' populators, the annotations' columns), computed once here instead of on every call;
        None where that reader does more than this one (peers tracked by the fetch mode, known related objects).
        The populators keep nothing of a row between calls (their peers list is used only when tracked)."""
        compiler, queryset = self.compiler, self.queryset
        info, fetch_mode = compiler.klass_info, queryset._fetch_mode  # type: ignore[attr-defined]
        if info is None or fetch_mode.track_peers or queryset._known_related_objects:  # type: ignore[attr-defined]
            return None
        select, select_fields = compiler.select, info["select_fields"]
        start, end = select_fields[0], select_fields[-1] + 1
        return (
            start,
            end,
            [column[0].target.attname for column in select[start:end]],
            functools.partial(info["model"].from_db, fetch_mode=fetch_mode),
            get_related_populators(info, select, queryset.db, fetch_mode),
            tuple(compiler.annotation_col_map.items()),
            [(index, *pair) for index, pair in (self.converters or {}).items()],
        )

    def _joined_instance(self, joined: Any, row: Any, connection: Any) -> Any:
        """One row of a joined shape, as `ModelIterable` makes it: converters, `from_db`, the related instances
        (each cached on both sides), the annotations and extra selects as attributes."""
        start, end, init_list, from_db, populators, annotations, converters = joined
        if converters:
            row = list(row)
            for index, functions, expression in converters:
                for convert in functions:
                    row[index] = convert(row[index], expression, connection)
        instance = from_db(self.queryset.db, init_list, row[start:end])
        for populator in populators:
            populator.populate(row, instance)
        for name, position in annotations:
            setattr(instance, name, row[position])
        return instance

    def select_list(self) -> str:
        """The columns this shape reads (`"table"."column", …`), for a statement of the caller's own that reads the
        same row (e.g. joined to the row it writes) and hands its values to `instance`. Plain shapes only."""
        head, _, _ = self.sql.partition(" FROM ")
        if self.plain is None or not head.startswith("SELECT ") or head.startswith("SELECT DISTINCT"):
            raise ValueError("select_list: only a plain shape of one model's columns")
        return head.removeprefix("SELECT ")

    def instance(self, values: Any) -> Any:
        """The model instance `rows` makes of one row of `select_list`'s values (same converters, `from_db`); None
        when every value is NULL (an outer join that found no row)."""
        if self.plain is None:
            raise ValueError("instance: only a plain shape of one model's columns")
        if all(value is None for value in values):
            return None
        return self._plain_instance(self.plain, values, connections[self.queryset.db])

    def _plain_instance(self, plain: Any, row: Any, connection: Any) -> Any:
        """One row of a plain shape (`self.plain`) through the compiler's converters and the model's `from_db`."""
        attnames, converters, from_db = plain
        if converters:
            row = list(row)
            for index, functions, expression in converters:
                for convert in functions:
                    row[index] = convert(row[index], expression, connection)
        return from_db(self.queryset.db, attnames, row)

    def values(self, *values: Any) -> list[tuple[Any, ...]] | None:
        """The rows of a plain shape as the cursor gives them (no converter run, no model built), in `select_list`'s
        column order (`column`), for a caller that reads a few columns and may build the model (`instance`) only
        when it needs one; None for another shape (the caller reads `rows`)."""
        if self.plain is None:
            return None
        cursor = kept_cursor(connections[self.queryset.db])
        cursor.execute(self.sql, self.bound(values))
        return cursor.fetchall()

    @functools.cached_property
    def columns(self) -> dict[str, int]:
        """Where each field sits in a row of `values` (plain shapes only), by attname."""
        return {attname: index for index, attname in enumerate(self.plain[0])} if self.plain is not None else {}

    def column(self, attname: str) -> int:
        """Where the field `attname` sits in a row of `values` (plain shapes only)."""
        return self.columns[attname]

    def bound(self, values: tuple[Any, ...]) -> list[Any]:
        params = list(self.params)
        for position, index, wrap in self.slots:
            params[position] = values[index] if wrap is None else wrap(values[index])
        return params

    def rows(self, *values: Any) -> list[Any]:
        """The queryset's rows (model instances) with `values` in place of the stand-ins."""
        bound = self.bound(values)
        connection = connections[self.queryset.db]
        if self.plain is not None or self.joined is not None:
            # kernel.rows' cursor of this connection, kept across statements (made anew for another connection,
            # a change of query logging, a health check still due): Django's `cursor()` made and wrapped a new
            # one per read, about forty calls, for the checkout's read on every update and complete (issue 34)
            cursor = kept_cursor(connection)
            cursor.execute(self.sql, bound)
            found = cursor.fetchall()
            if self.plain is not None:
                return [self._plain_instance(self.plain, row, connection) for row in found]
            return [self._joined_instance(self.joined, row, connection) for row in found]
        compiler = copy.copy(self.compiler)  # one per call: the connection is this thread's
        compiler.connection = connection
        compiler.as_sql = lambda *args, **kwargs: (self.sql, bound)
        if self.converters is not None:
            converters, composite = self.converters, self.composite
            compiler.get_converters = lambda expressions: converters
            compiler.has_composite_fields = lambda expressions: composite
        query = SimpleNamespace(get_compiler=lambda using=None, **_: compiler)
        source = SimpleNamespace(
            db=self.queryset.db,
            query=query,
            model=self.queryset.model,
            _fetch_mode=self.queryset._fetch_mode,  # type: ignore[attr-defined]
            _known_related_objects={},
        )
        return list(ModelIterable(source))  # type: ignore[arg-type]


_COMPILED: dict[Hashable, Compiled] = {}


def compiled[M: Model](
    shape: Hashable, build: Callable[..., QuerySet[M]], arity: int = 1, kind: type[str] | type[int] = str
) -> Compiled:
    """The compiled form of `build(stand_in(0, kind), …)` (a queryset of model instances), kept under `shape`."""
    kept = _COMPILED.get(shape)
    if kept is None:
        kept = _COMPILED[shape] = Compiled(build, arity, kind)
    return kept
