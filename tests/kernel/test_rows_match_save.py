"""kernel.rows writes what the ORM's own save writes (issue 34): the values it hands psycopg skip Django's
preparation where it decided once per column that the result is the value itself, so this is checked two ways.

- Every column of every model of the project: for values of each type the apps use (and None), the value
  kernel.rows passes is Django's `get_db_prep_save` of it, same type and value.
- Every row a REST purchase (create → update → complete by card) writes: the row inserted by kernel.rows and the
  row inserted by `Model.save()` from the same values are the same row (timestamps with their time zone,
  centavos, JSON, nulls, choices); an update of every column, with the nullable ones set to None, too. Each
  write runs in a savepoint rolled back after it is read, the original row deleted first (Django's foreign
  keys are checked at commit), so unique columns keep their values.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.apps import apps
from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from kernel.rows import _AwareColumn, _columns, _db_values, dumps_json, insert_together, update_where
from orders.models import AppendOnlyModel
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bench.test_flow_profile import _flow, flow_client

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

SAO_PAULO = ZoneInfo("America/Sao_Paulo")
# Values of each Python type the apps put in columns: a prepared value must be Django's for each of them.
SAMPLES: tuple[object, ...] = (
    None,
    "Café",
    "",
    0,
    4290,
    -1,
    2**40,
    True,
    False,
    Decimal("42.90"),
    datetime.datetime(2026, 12, 6, 9, 30, 15, 123456, tzinfo=datetime.UTC),
    datetime.datetime(2026, 12, 6, 6, 30, tzinfo=SAO_PAULO),
    datetime.datetime(2026, 12, 6, 6, 30),  # naive: Django warns and makes it aware, on both sides
    datetime.date(2026, 12, 6),
    {"amount": 4290, "itens": ["a", None], "ok": True},
    [1, "dois"],
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    b"\x00\x01",
)


def _project_models() -> list[type[models.Model]]:
    root = Path(settings.BASE_DIR).resolve()
    return [
        model
        for config in apps.get_app_configs()
        if Path(config.path).resolve().is_relative_to(root) and ".venv" not in Path(config.path).parts
        for model in config.get_models()
        if not model._meta.proxy
    ]


def _same(fast: Any, orm: Any) -> bool:
    if type(fast) is not type(orm):
        return False
    if hasattr(orm, "obj"):  # a psycopg wrapper (Jsonb, Binary): its value and encoder
        fast_dumps, orm_dumps = getattr(fast, "dumps", None), getattr(orm, "dumps", None)
        if fast_dumps is dumps_json and isinstance(orm, Jsonb):  # the same document once Postgres parses it
            return bool(fast.obj == orm.obj and json.loads(fast_dumps(fast.obj)) == json.loads(orm_dumps(orm.obj)))
        return bool(fast.obj == orm.obj and fast_dumps == orm_dumps)
    return bool(fast == orm)


class _Kind(enum.StrEnum):
    PIX = "pix"


@dataclasses.dataclass
class _Point:
    x: int


class _Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {"amount": 4290, "itens": ["Café", None, True, 1.5], "aninhado": {"a": [{}]}},
        [2**70, -(2**63)],  # past 64 bits: orjson refuses, json.dumps writes it
        {1: "um", "2": "dois"},  # a key that is not a str
        {"tipo": _Kind.PIX, "texto": _Text("subclasse")},
        {"controle": "\u0000\n\t\u2028", "emoji": "🎉"},
    ],
)
def test_a_json_column_is_the_document_json_dumps_gives(value: Any) -> None:
    """kernel.rows dumps a JSON column with orjson (issue 34): Postgres stores jsonb parsed, so what counts is that
    the text parses to what `json.dumps`'s text parses to, for what orjson treats otherwise too."""
    assert json.loads(dumps_json(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize(
    "value",
    [datetime.datetime(2026, 12, 6, tzinfo=datetime.UTC), datetime.date(2026, 12, 6), _Point(1), object()],
)
def test_a_json_column_refuses_what_json_dumps_refuses(value: Any) -> None:
    with pytest.raises(TypeError):
        json.dumps({"v": value})
    with pytest.raises(TypeError):
        dumps_json({"v": value})


# a date in a DateTimeField is a naive datetime to Django: it warns, and both sides must still agree
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_every_column_gets_the_value_django_prepares() -> None:
    db = connection
    checked = 0
    for model in _project_models():
        fields = [field for field in model._meta.concrete_fields if not field.primary_key]
        columns = _columns(fields, db)
        for (attname, *_), field in zip(columns, fields, strict=True):
            for sample in SAMPLES:
                instance = model()
                try:
                    setattr(instance, attname, sample)
                    orm = field.get_db_prep_save(getattr(instance, attname), db)
                except Exception as refused:  # Django refuses it (a date from "Café"): so do we, the same way
                    with pytest.raises(type(refused)):
                        _db_values(instance, [columns[fields.index(field)]], db)
                    continue
                fast = _db_values(instance, [columns[fields.index(field)]], db)[0]
                assert _same(fast, orm), (model._meta.label, field.name, sample, fast, orm)
                checked += 1
    assert checked > 5000  # every column of the project, not a few


def test_an_aware_timestamp_goes_to_psycopg_without_django_preparing_it() -> None:
    """issue 34: a purchase writes about thirty timestamps; on PostgreSQL an aware one is its own database value
    (what `get_db_prep_save` returns), so it is taken as it is, and a naive one still goes through Django."""
    field = next(f for f in _project_models()[0]._meta.concrete_fields if type(f) is models.DateTimeField)
    (column,) = _columns([field], connection)
    assert column[2] is _AwareColumn
    instance = field.model()
    aware = datetime.datetime(2026, 12, 6, 6, 30, tzinfo=SAO_PAULO)
    setattr(instance, field.attname, aware)
    assert _db_values(instance, [column], connection)[0] is aware
    naive = aware.replace(tzinfo=None)
    setattr(instance, field.attname, naive)
    with pytest.warns(RuntimeWarning, match="naive datetime"):
        prepared = _db_values(instance, [column], connection)[0]
    assert prepared == timezone.make_aware(naive, timezone.get_default_timezone())


def _stored(model: type[models.Model], pk: Any) -> dict[str, Any]:
    return model._default_manager.filter(pk=pk).values().get()


def _inserted(original: models.Model, *, fast: bool) -> dict[str, Any]:
    """The row a copy of `original` is inserted as (kernel.rows, or `save()`), read and then rolled back, with
    the original row deleted first."""
    model, row = type(original), _copy(original)
    sid = transaction.savepoint_create()
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {connection.ops.quote_name(model._meta.db_table)}"  # noqa: S608 — model metadata
                f" WHERE {connection.ops.quote_name(str(model._meta.pk.column))} = %s",
                [original.pk],
            )
        if fast:
            insert_together(row)
        else:
            row.save(force_insert=True)
        return _stored(model, row.pk)
    finally:
        transaction.savepoint_rollback(sid)


def _updated(model: type[models.Model], pk: Any, *, empty: bool, fast: bool) -> dict[str, Any]:
    """The row after an update of every column (kernel.rows, or `save()`), read and then rolled back."""
    names = [field.name for field in model._meta.concrete_fields if not field.primary_key]
    sid = transaction.savepoint_create()
    try:
        row = model._default_manager.get(pk=pk)
        if empty:
            for field in row._meta.concrete_fields:
                if field.null and not field.primary_key:
                    setattr(row, field.attname, None)
        with transaction.atomic():
            if fast:
                assert update_where(row, names)
            else:
                row.save(update_fields=names)
        return _stored(model, pk)
    finally:
        transaction.savepoint_rollback(sid)


def _copy(original: models.Model) -> models.Model:
    fields = [field for field in original._meta.concrete_fields if not field.primary_key]
    return type(original)(**{field.attname: copy.deepcopy(getattr(original, field.attname)) for field in fields})


def _compared(model: type[models.Model], fast: dict[str, Any], orm: dict[str, Any], *, adding: bool) -> None:
    """The two rows agree on every column but the pk and the timestamps save() fills with the time of the write
    (kernel.rows keeps an auto_now_add value the caller set, as the copy has)."""
    filled = {
        field.attname
        for field in model._meta.concrete_fields
        if field.primary_key or getattr(field, "auto_now", False) or (adding and getattr(field, "auto_now_add", False))
    }
    for name in fast.keys() - filled:
        assert type(fast[name]) is type(orm[name]) and fast[name] == orm[name], (model._meta.label, name)


def test_rows_of_a_purchase_are_the_rows_the_orm_would_write(fake_platform: FakePlatform, bcp_settings: Any) -> None:  # noqa: F811
    project = _project_models()
    before = {model: set(model._default_manager.values_list("pk", flat=True)) for model in project}
    _flow(flow_client(fake_platform, stock=10))  # create → update → complete by card
    written = {
        model: sorted(set(model._default_manager.values_list("pk", flat=True)) - before[model]) for model in project
    }
    written = {model: pks for model, pks in written.items() if pks}
    labels = {model._meta.label for model in written}
    # the purchase's own rows: checkout, lines, events, order, its lines and timeline, card payment, idempotency
    assert {
        "shop.Checkout",
        "shop.CheckoutLine",
        "shop.CheckoutEvent",
        "orders.Order",
        "orders.OrderLine",
        "orders.OrderEvent",
        "orders.OutboxMessage",
        "payments.CardPayment",
        "payments.PaymentEvent",
        "bcp_app.IdempotencyRecord",
    } <= labels
    print("rows compared:", sorted(labels))
    for model, pks in written.items():
        for pk in pks[:3]:
            original = model._default_manager.get(pk=pk)
            fast = _inserted(original, fast=True)
            _compared(model, fast, _inserted(original, fast=False), adding=True)
            _compared(model, fast, _stored(model, pk), adding=False)  # and what the purchase itself wrote
            if issubclass(model, AppendOnlyModel):  # inserted once: save() refuses an update, kernel.rows is not asked
                continue
            # an update of every column, the nullable ones emptied (as read where a check constraint refuses that)
            for empty in (True, False):
                try:
                    orm = _updated(model, pk, empty=empty, fast=False)
                except IntegrityError:
                    continue
                _compared(model, _updated(model, pk, empty=empty, fast=True), orm, adding=False)
                break
            else:
                pytest.fail(f"{model._meta.label}: no update to compare")
