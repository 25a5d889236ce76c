"""Querysets compiled once per process: a fixed-shape read whose SQL compile cost more CPU than running it.

Each shape is built once with stand-in values (`stand_in(i)`: strings no real value holds), compiled, and later
calls bind the real values in the stand-ins' places and run the same SQL through Django's own row reader
(`ModelIterable`: the same model instances, select_related and deferred fields as `list(queryset)`). Only
string parameters can be stood in for (a stand-in must pass the field's own preparation unchanged).

The same technique as the checkout's lock (shop/checkout/core.py), for any model (issue 34: the worker's reads).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from types import SimpleNamespace
from typing import Any

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable


def stand_in(index: int) -> str:
    """The stand-in of parameter `index` (NUL never reaches a real identifier: PostgreSQL text refuses it)."""
    return f"\x00compiled parameter {index}\x00"


class Compiled:
    def __init__(self, queryset: QuerySet[Any], arity: int) -> None:
        self.queryset = queryset
        self.compiler = queryset.query.get_compiler(using=queryset.db)
        self.sql, params = self.compiler.as_sql()  # fills the compiler's select, klass_info, annotation map
        self.params = tuple(params)
        self.slots = {stand_in(index): index for index in range(arity)}
        bound = [value for value in self.params if isinstance(value, str) and value in self.slots]
        if sorted(self.slots[value] for value in bound) != list(range(arity)) or any(
            value in self.sql for value in self.slots
        ):
            raise ValueError("each stand-in must be a parameter of the query, once")
        # The row converters depend only on the selected columns; on PostgreSQL none is the connection's own.
        fields = [column[0] for column in self.compiler.select[0 : self.compiler.col_count]]
        self.composite = self.compiler.has_composite_fields(fields)
        self.converters = (
            self.compiler.get_converters(fields) if self.compiler.connection.vendor == "postgresql" else None
        )

    def rows(self, *values: str) -> list[Any]:
        """The queryset's rows (model instances) with `values` in place of the stand-ins."""
        slots = self.slots
        bound = tuple(
            values[slots[value]] if isinstance(value, str) and value in slots else value for value in self.params
        )
        compiler = copy.copy(self.compiler)  # one per call: the connection is this thread's
        compiler.connection = connections[self.queryset.db]
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


def compiled[M: Model](shape: Hashable, build: Callable[..., QuerySet[M]], arity: int = 1) -> Compiled:
    """The compiled form of `build(stand_in(0), …)` (a queryset of model instances), kept under `shape`."""
    kept = _COMPILED.get(shape)
    if kept is None:
        kept = _COMPILED[shape] = Compiled(build(*(stand_in(index) for index in range(arity))), arity)
    return kept
