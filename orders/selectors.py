"""Reads of orders with a fixed number of queries (one per relation, whatever the sizes)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import (
    Case,
    CharField,
    DateTimeField,
    Exists,
    F,
    Model,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Concat, Substr, Trim
from django.utils import translation
from django.utils.translation import gettext as _

from kernel.compiled import Compiled, compiled
from kernel.money import PT_BR
from orders.arrival import expectation_arrival, window_words_pt
from orders.choices import ALL_SENT_STATUSES
from orders.labels import condition_label, units_text
from orders.models import (
    Adjustment,
    AdjustmentStatus,
    AdjustmentType,
    FulfillmentEvent,
    FulfillmentEventType,
    FulfillmentExpectation,
    Order,
    OrderEvent,
    OrderLine,
    OrderStatus,
    ReturnRequest,
)
from orders.outbox_models import ORDER_CHANGED, OutboxMessage
from orders.summary import ExpectationProgress, current_tracking, expectation_items_now, expectation_progress

TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{20,64}$")

# How the back-office API (orders/api.py) stores who wrote: `api:<username>`, told apart from a change in the admin.
API_ACTOR_PREFIX = "api:"


def api_actor(username: str) -> str:
    return f"{API_ACTOR_PREFIX}{username}"


def _with_relations(queryset: QuerySet[Order], adjustments: QuerySet[Adjustment] | None = None) -> QuerySet[Order]:
    return queryset.prefetch_related(
        Prefetch("lines", queryset=OrderLine.objects.order_by("position", "id")),
        Prefetch("expectations", queryset=FulfillmentExpectation.objects.order_by("position", "id")),
        Prefetch("fulfillment_events", queryset=FulfillmentEvent.objects.order_by("occurred_at", "id")),
        Prefetch(
            "adjustments",
            queryset=Adjustment.objects.order_by("occurred_at", "id") if adjustments is None else adjustments,
        ),
    )


def adjustments_with_drops() -> QuerySet[Adjustment]:
    """Adjustments, oldest first, each with `dropped`: a refund the PSP refused that staff chose not to redo
    (`adjustment_failed_refund_drop`'s timeline event names it). Read in the adjustments' own statement, so the pages
    that tell a dropped refund from one still to be redone (the buyer's page, the admin's "Reembolsos") cost no more."""
    drop = (
        OrderEvent.objects.filter(order_id=OuterRef("order_id"), kind="refund_dropped")
        .annotate(named=KT("data__adjustment_id"))
        .filter(named=OuterRef("public_id"))
    )
    return Adjustment.objects.annotate(dropped=Exists(drop)).order_by("occurred_at", "id")


def order_for_bcp(order_id: str) -> Order | None:
    """Everything the BCP order (§7) needs: 5 queries (order, lines, expectations, events, adjustments)."""
    if not isinstance(order_id, str) or not order_id:
        return None
    return _with_relations(Order.objects.filter(public_id=order_id)).first()


def order_by_checkout(checkout_id: str) -> Order | None:
    if not isinstance(checkout_id, str) or not checkout_id:
        return None
    return _with_relations(Order.objects.filter(checkout_id=checkout_id)).first()


def order_for_permalink(token: str) -> Order | None:
    """The buyer's page: the order of an unguessable token (no other lookup is possible there)."""
    if not isinstance(token, str) or not TOKEN_RE.match(token):
        return None
    return _with_relations(Order.objects.filter(permalink_token=token), adjustments_with_drops()).first()


def order_id_for_permalink(token: str) -> str | None:
    """The public id of the order whose buyer's page is at `token` (one column of one row), None when none is."""
    if not isinstance(token, str) or not TOKEN_RE.match(token):
        return None
    return Order.objects.filter(permalink_token=token).values_list("public_id", flat=True).first()


def order_for_admin(order_id: str) -> Order | None:
    """Order with relations and its full timeline (internal notes included): staff only."""
    queryset = _with_relations(Order.objects.filter(public_id=order_id)).prefetch_related(
        Prefetch("timeline", queryset=OrderEvent.objects.order_by("created_at", "id"))
    )
    return queryset.first()


def with_actor_labels(events: QuerySet[OrderEvent]) -> QuerySet[OrderEvent]:
    """Each event with `actor_label`, how the timeline names who did it: the staff member's full name (first and
    last name) when their user has one, else the stored actor as it is (a username, "comprador", "transportadora",
    …). A change made through the back-office API (stored `api:<username>`) names the same person followed by
    " (API)": "Nara Fonseca (API)", or "erp (API)" for an account with no name. The stored actor stays the username
    (it does not change when a person edits their name); one subquery, no query per row."""
    user_model = get_user_model()
    full_name = Trim(Concat("first_name", Value(" "), "last_name", output_field=CharField()))
    through_api = Q(actor__startswith=API_ACTOR_PREFIX)
    username = Case(
        When(through_api, then=Substr("actor", len(API_ACTOR_PREFIX) + 1)),
        default=F("actor"),
        output_field=CharField(),
    )
    named = (
        user_model._default_manager.filter(**{user_model.USERNAME_FIELD: OuterRef("actor_username")})
        .annotate(full_name=full_name)
        .exclude(full_name="")
        .values("full_name")[:1]
    )
    person = Coalesce(Subquery(named), F("actor_username"), output_field=CharField())
    return events.annotate(actor_username=username).annotate(
        actor_label=Case(
            When(through_api, then=Concat(person, Value(" (API)"), output_field=CharField())),
            default=person,
            output_field=CharField(),
        )
    )


# A query of digits and these marks is a number (order, CPF/CNPJ, phone): "#1001", "529.982.247-25", "(11) 98765-4321".
NUMBER_QUERY = re.compile(r"[\d\s.()/#+-]+")
# Fewer digits than a phone without its area code ("98765-4321") is an order number, not a piece of a phone.
PHONE_MIN_DIGITS = 8


def _name_matches(words: list[str]) -> Q:
    """Every word in the buyer's first or last name, accents and case aside ("joão silva", "Joao" find "João da
    Silva Santos"): PostgreSQL's unaccent(), SQLite's our own (`kernel.text.sqlite_unaccent`)."""
    condition = Q()
    for word in words:
        condition &= Q(buyer_first_name__unaccent__icontains=word) | Q(buyer_last_name__unaccent__icontains=word)
    return condition


def order_search(*, query: str = "") -> QuerySet[Order]:
    """Staff search: number, buyer's name, e-mail, CPF/CNPJ, phone, SKU, tracking code, or the order's checkout id,
    payment reference or txid (the payments admin links a charge to its order by these)."""
    queryset = Order.objects.all()
    query = (query or "").strip()
    if not query:
        return queryset
    condition = (
        Q(buyer_email__iexact=query)
        | Q(buyer_email__icontains=query)
        | Q(lines__sku__iexact=query)
        | Q(fulfillment_events__tracking_number__iexact=query.replace(" ", ""))
        | Q(public_id=query)
        | Q(checkout_id=query)
        | Q(payment_reference=query)
        | Q(payment_txid=query)
    )
    digits = re.sub(r"\D", "", query)
    if digits and NUMBER_QUERY.fullmatch(query):
        # Only a query that is a number: the "1" of a SKU such as CAF-1KG matched every phone with a 1.
        condition |= Q(buyer_tax_id=digits)
        if len(digits) >= PHONE_MIN_DIGITS:
            condition |= Q(buyer_phone__contains=digits)
        if digits == query.lstrip("#") and len(digits) < 18:
            condition |= Q(number=int(digits))
    elif not digits and "@" not in query:
        condition |= _name_matches(query.split())
    matching = Order.objects.filter(condition).values("pk")
    return queryset.filter(pk__in=matching)


# --- BCP §7 shape (plain dicts; bcp_app presenters wrap them with `ucp`) --------------------------------


def rfc3339(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def postal_address(destination: dict[str, str]) -> dict[str, str]:
    """Stored Brazilian address columns → BCP PostalAddress (number in street_address, bairro in extended)."""
    street = destination.get("street", "")
    number = destination.get("number", "")
    parts = (destination.get("complement", ""), destination.get("neighborhood", ""))
    extended = " - ".join(part for part in parts if part)
    address = {
        "street_address": f"{street}, {number}" if street and number else street,
        "extended_address": extended,
        "address_locality": destination.get("city", ""),
        "address_region": destination.get("state", ""),
        "address_country": destination.get("country", "") or "BR",
        "postal_code": destination.get("postal_code", ""),
        "first_name": destination.get("first_name", ""),
        "last_name": destination.get("last_name", ""),
    }
    return {key: value for key, value in address.items() if value}


def line_payload(line: OrderLine) -> dict[str, Any]:
    item: dict[str, Any] = {"id": line.sku, "title": line.title, "price": line.unit_price}
    if line.image_url:
        item["image_url"] = line.image_url
    quantity: dict[str, int] = {"total": line.quantity_total, "fulfilled": line.quantity_fulfilled}
    if line.quantity_original != line.quantity_total:
        quantity = {"original": line.quantity_original, **quantity}
    amount = line.unit_price * line.quantity_total
    return {
        "id": line.public_id,
        "item": item,
        "quantity": quantity,
        "totals": [{"type": "subtotal", "amount": amount}, {"type": "total", "amount": amount}],
        "status": line.status,
    }


def expectation_payload(
    expectation: FulfillmentExpectation, items: list[dict[str, Any]], *, description: str
) -> dict[str, Any]:
    """`items`: what is still in it (`expectation_items_now`), not the plan as placed; `description`: what it says
    (`expectation_description`: the stored promise, or where its units are once some left the shop)."""
    payload: dict[str, Any] = {
        "id": expectation.public_id,
        "line_items": [{"id": item["id"], "quantity": item["quantity"]} for item in items],
        "method_type": expectation.method_type,
        "destination": postal_address(expectation.destination),
    }
    if description:
        payload["description"] = description
    if expectation.fulfillable_on:
        payload["fulfillable_on"] = expectation.fulfillable_on
    return payload


def expectation_description(
    expectation: FulfillmentExpectation,
    progress: ExpectationProgress,
    titles: dict[str, str],
    *,
    window: tuple[date, date] | None = None,
) -> str:
    """The expectation's description once units of it left the shop; the stored promise while none did.

    Seed 000 keeps a delivered expectation with the units it promised and says "Entregue" in its description:
    shipped units stay in `line_items` (a quantity "still to send" would leave a delivered expectation empty, and
    BCP-ORD-07 wants quantities ≥ 1), so the description tells where they are. pt-BR, as every BCP text here.
    `window`: the days the parcel should arrive (orders.arrival; BCP's expectation has no member for it, so the
    description says it: "Enviado; previsão de entrega entre 09/12 e 11/12")."""
    planned = sum(progress.planned.values())
    waiting = sum(progress.to_send.values())
    delivered = sum(progress.delivered.values())
    sent = planned - waiting
    pickup = expectation.method_type == "pickup"
    forecast = f"previsão de entrega {window_words_pt(window)}" if window and not pickup else ""
    if sent <= 0:
        return f"Chega {window_words_pt(window)}" if forecast and window else expectation.description
    if not waiting:
        if delivered >= planned:
            return "Retirado" if pickup else "Entregue"
        text = f"Enviado; {delivered} de {planned} unidades entregues" if delivered else "Enviado"
        return f"{text}; {forecast}" if forecast else text
    rest = units_text((units, titles.get(line_id, line_id)) for line_id, units in progress.to_send.items())
    text = (
        f"{sent} de {planned} unidades retiradas; falta retirar {rest}"
        if pickup
        else f"{sent} de {planned} unidades enviadas{f' ({forecast})' if forecast else ''}; falta enviar {rest}"
    )
    return f"{text} ({expectation.description})" if expectation.description else text


def event_payload(event: FulfillmentEvent) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": event.public_id,
        "occurred_at": rfc3339(event.occurred_at),
        "type": event.type,
        "line_items": [{"id": item["id"], "quantity": item["quantity"]} for item in event.line_items],
    }
    for key in ("tracking_number", "tracking_url", "carrier", "description"):
        if getattr(event, key):
            payload[key] = getattr(event, key)
    return payload


def adjustment_payload(adjustment: Adjustment) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": adjustment.public_id,
        "type": adjustment.type,
        "occurred_at": rfc3339(adjustment.occurred_at),
        "status": adjustment.status,
    }
    if adjustment.line_items:
        payload["line_items"] = adjustment.line_items
    if adjustment.totals:
        payload["totals"] = adjustment.totals
    description = adjustment.description
    if adjustment.condition:
        # BCP §7: an adjustment's one human text is `description` (no member for the items' state): a return's
        # condition is said there as before it was data ("Não serviu (estado: Avariado)"), in pt-BR as the rest of
        # the snapshot every transport and webhook sends
        with translation.override(PT_BR):
            said = f"estado: {condition_label(adjustment.condition)}"
        description = f"{description} ({said})" if description else said
    if description:
        payload["description"] = description
    return payload


def failed_refunds_to_pay_outside(order: Order) -> list[Adjustment]:
    """The order's own refunds the PSP refused (not a return's: its request has its own steps) that staff have
    neither asked again, recorded as paid outside nor dropped yet: what "Tentar de novo o reembolso", "Marcar como
    pago por fora" and "Descartar reembolso recusado" may settle, once each."""
    failed = list(
        Adjustment.objects.filter(order=order, type=AdjustmentType.REFUND, status=AdjustmentStatus.FAILED).order_by(
            "occurred_at", "id"
        )
    )
    if not failed:
        return []  # the usual order: one statement
    taken = {
        str(public_id)
        for public_id in OrderEvent.objects.filter(order=order)
        .filter(
            Q(kind="return_refund_failed")
            | Q(kind="refund_completed", data__has_key="pays")
            | Q(kind="refund_requested", data__has_key="retries")
            | Q(kind="refund_dropped")  # staff chose not to redo it (adjustment_failed_refund_drop)
        )
        .annotate(named=Coalesce(KT("data__pays"), KT("data__retries"), KT("data__adjustment_id")))
        .values_list("named", flat=True)
        if public_id
    }
    return [adjustment for adjustment in failed if adjustment.public_id not in taken]


def order_change_pending(order_id: str, event: str) -> bool:
    """Whether a committed change `event` of the order still waits for its outbox task (its receivers — the NF-e
    de devolução of a return, say — have not run yet). One query."""
    return (
        OutboxMessage.objects.filter(
            kind=ORDER_CHANGED, status=OutboxMessage.Status.PENDING, payload__order_id=order_id
        )
        .filter(Q(payload__event=event) | Q(payload__events__contains=[event]))
        .exists()
    )


def order_presented(order_id: str) -> Order | None:
    """The order for Get Order: one query when its presented JSON is stored (else with its relations)."""
    if not isinstance(order_id, str) or not order_id:
        return None
    order = _order_by_public_id(order_id)
    if order is None or order.bcp_json:
        return order
    return order_for_bcp(order_id)


class OrderRow:
    """An order's row as Get Order reads it (`order_row`): the columns its remembered body depends on, at hand without
    building the model (issue 34: the converters and `Model.from_db` of every column were most of the read's CPU,
    for a body usually remembered), and the model itself (`order`) built from the same values only when asked."""

    __slots__ = ("_columns", "_order", "_read", "_values")

    def __init__(
        self,
        values: tuple[Any, ...] | None,
        order: Order | None = None,
        columns: Mapping[str, int] | None = None,
        read: Compiled | None = None,
    ) -> None:
        self._values = values  # the plain read's raw row, else None and `order` is the model already built
        self._order = order
        self._read = read  # the read `values` came from (the whole row's unless given)
        # where each field sits in `values` (the read's, looked up once per row: a Get Order reads five fields)
        if columns is None:
            columns = (read or _order_read()).columns if values is not None else {}
        self._columns = columns

    def _value(self, attname: str) -> Any:
        if self._values is None:
            return getattr(self._order, attname)
        return self._values[self._columns[attname]]

    @property
    def public_id(self) -> str:
        return str(self._value("public_id"))

    @property
    def platform_id(self) -> str | None:
        return self._value("platform_id")  # type: ignore[no-any-return]

    @property
    def bcp_json(self) -> str:
        return str(self._value("bcp_json"))

    @property
    def language(self) -> str:
        return str(self._value("language"))

    @property
    def permalink_url(self) -> str:
        return Order.permalink_url_of(str(self._value("permalink_token")))

    @property
    def policies_text(self) -> str | None:
        """The policy snapshot as the database writes its JSON (jsonb: one text per content), None when the row came
        as a model (a database without the plain read)."""
        return self._values[self._columns["policies"]] if self._values is not None else None

    def order(self) -> Order | None:
        """The model `order_presented` gives for this row (with its relations when no presentation is stored). Of a
        row read with `whole=False`, a model of `PRESENTED_FIELDS` alone (any other field is read on access, a
        statement each) when its presentation is stored: all that a stored presentation's body is made of."""
        if self._order is None:
            self._order = (self._read or _order_read()).instance(self._values)
        if self._order is None or self._order.bcp_json:
            return self._order
        return order_for_bcp(self._order.public_id)


# What the Get Order body of an order with a stored presentation is made of (its stored JSON, permalink, language and
# policy snapshot), with who may read it: `order_row(whole=False)` reads these columns alone.
PRESENTED_FIELDS = ("public_id", "platform_id", "language", "policies", "permalink_token", "bcp_json")


def order_row(order_id: str, *, whole: bool = True) -> OrderRow | None:
    """Get Order's read: one query, as `order_presented`'s, with the model built only when `OrderRow.order` asks.
    `whole=False`: only the columns of `PRESENTED_FIELDS` (issue 34: the other 33 of the order's 39 columns were
    formed by Postgres and decoded by psycopg, four of them timestamps through Python, for a body that reads none).
    """
    if not isinstance(order_id, str) or not order_id:
        return None
    read = _order_read() if whole else _presented_read()
    values = read.values(order_id)
    if values is None:  # no plain read (not PostgreSQL): the model, as before
        rows = _order_read().rows(order_id)
        return OrderRow(None, rows[0]) if rows else None
    return OrderRow(values[0], columns=read.columns, read=read) if values else None


def order_for_side_effects(order_id: str, *, with_lines: bool = True) -> Order | None:
    """The order one outbox row's side effects share (buyer e-mail, NF-e request, webhook), read once after
    commit and passed down instead of each re-reading it: the row (precompiled), and with `with_lines` its
    lines, adjustments and expectations as prefetched relations. 1 or 4 queries."""
    order = _order_by_public_id(order_id) if isinstance(order_id, str) and order_id else None
    if order is not None and with_lines:
        order_with_relations(order)
    return order


def order_with_relations(order: Order) -> Order:
    """`order` (a row just read) with its lines, adjustments and expectations as prefetched relations. 3 queries."""
    return _with_rows(order, {name: _rows_of_order(model, order) for name, model in _SIDE_EFFECT_RELATIONS})


def _with_rows(order: Order, found: dict[str, list[Any]]) -> Order:
    """What prefetch_related would leave (ordered lists, each row's `order` set), from rows read already."""
    cache: dict[str, Any] = {}
    for name, model in _SIDE_EFFECT_RELATIONS:
        rows = found.get(name, [])
        field = model._meta.get_field("order")
        for row in rows:
            field.set_cached_value(row, order)  # type: ignore[union-attr]
        queryset = getattr(order, name).all()
        queryset._result_cache = rows
        queryset._prefetch_done = True
        cache[name] = queryset
    order._prefetched_objects_cache = cache  # type: ignore[attr-defined]
    return order


# The relations a placed order's side effects read with it (buyer e-mail, NF-e request), in this order; the
# expectations date the e-mail's arrival estimate from the payment (the shop's prazo de postagem).
_SIDE_EFFECT_RELATIONS: tuple[tuple[str, type[Model]], ...] = (
    ("lines", OrderLine),
    ("adjustments", Adjustment),
    ("expectations", FulfillmentExpectation),
)


@dataclass(frozen=True)
class RelationColumns:
    """One relation of `order_with_relations` as a part of a caller's statement (the outbox claim reads them with
    the order): its table, its columns as its own read takes them, NULLs of the same types standing for them in
    the statement's other parts, and its Meta ordering as (position in `columns`, descending)."""

    name: str
    table: str
    order_column: str  # the column naming the order
    columns: str
    nulls: str
    width: int
    ordering: tuple[tuple[int, bool], ...]


_RELATION_COLUMNS: dict[str, tuple[RelationColumns, ...]] = {}  # database vendor → the parts (made once per process)


def order_relation_columns() -> tuple[RelationColumns, ...]:
    """The lines' and the adjustments' parts, for a statement that reads an order with its relations; the values
    of each part's rows go to `order_with_rows`."""
    vendor = _relation_read(OrderLine).compiler.connection.vendor
    kept = _RELATION_COLUMNS.get(vendor)
    if kept is None:
        kept = _RELATION_COLUMNS[vendor] = _relation_columns()
    return kept


def _relation_columns() -> tuple[RelationColumns, ...]:
    parts = []
    for name, model in _SIDE_EFFECT_RELATIONS:
        read = _relation_read(model)
        connection = read.compiler.connection
        targets = [column[0].target for column in read.compiler.select[: read.compiler.col_count]]
        ordering = []
        for item in model._meta.ordering or ():
            if not isinstance(item, str) or item.lstrip("-") in ("", "?") or "__" in item:
                raise ValueError(f"{model.__name__}.Meta.ordering: only plain field names ({item!r})")
            field = model._meta.get_field(item.lstrip("-"))
            ordering.append((read.column(field.attname), item.startswith("-")))  # type: ignore[union-attr]
        parts.append(
            RelationColumns(
                name=name,
                table=connection.ops.quote_name(model._meta.db_table),
                order_column=str(model._meta.get_field("order").column),  # type: ignore[union-attr]
                columns=read.select_list(),
                # typed: in a UNION, two untyped NULLs of the same column would be resolved as text
                nulls=", ".join(f"NULL::{target.db_type(connection)}" for target in targets),
                width=len(targets),
                ordering=tuple(ordering),
            )
        )
    return tuple(parts)


def order_with_rows(order: Order, found: dict[str, list[Any]]) -> Order:
    """`order` with its relations made from the values of `order_relation_columns`' parts (by name), as
    `order_with_relations` reads them (the same instances, the same order)."""
    made = {}
    for name, model in _SIDE_EFFECT_RELATIONS:
        read = _relation_read(model)
        made[name] = [read.instance(values) for values in found.get(name, [])]
    return _with_rows(order, made)


def order_column_count() -> int:
    """How many values `order_columns` reads."""
    return len(_order_read().compiler.select[: _order_read().compiler.col_count])


def order_columns() -> str:
    """The columns `order_from_row` reads an order from (`"orders_order"."id", …`), for a statement that reads
    the order's row with a write of its own (the outbox claim)."""
    return _order_read().select_list()


def order_from_row(values: Any) -> Order | None:
    """The order `order_columns`' values hold, as the order's own read makes it; None when they are all NULL."""
    order: Order | None = _order_read().instance(values)
    return order


def _relation_read(model: type[Model]) -> Compiled:
    """`model.objects.filter(order_id=…)` in its Meta ordering, compiled once per process (as the order's own)."""
    return compiled(("orders.rows_of_order", model), lambda pk: model._default_manager.filter(order_id=pk), kind=int)


def _rows_of_order(model: type[Model], order: Order) -> list[Any]:
    return _relation_read(model).rows(order.pk)


def _order_by_public_id(order_id: str) -> Order | None:
    """`Order.objects.filter(public_id=…)[:1]` compiled once per process: compiling the queryset was the largest
    part of a Get Order's CPU (issue 11); the statement is the same for every id, so only the parameter changes."""
    rows = _order_read().rows(order_id)
    return rows[0] if rows else None


def _order_read() -> Compiled:
    return compiled("orders.by_public_id", lambda ref: Order.objects.filter(public_id=ref).order_by()[:1])


def _presented_read() -> Compiled:
    """`_order_read` of `PRESENTED_FIELDS` (and the primary key) alone."""
    return compiled(
        "orders.presented_by_public_id",
        lambda ref: Order.objects.filter(public_id=ref).order_by().only(*PRESENTED_FIELDS)[:1],
    )


def order_bcp_payload(order: Order) -> dict[str, Any]:
    """The BCP §7 order without the `ucp` envelope: the stored presentation, else rendered (order_for_bcp)."""
    if not order.bcp_json:
        return order_bcp_render(order)
    payload: dict[str, Any] = {}
    for key, value in json.loads(order.bcp_json).items():
        payload[key] = value
        if key == "checkout_id":
            payload["permalink_url"] = order.permalink_url
    return payload


def order_bcp_json(order: Order) -> str:
    """What `Order.bcp_json` holds: the rendering without `permalink_url` (it follows BCP_PUBLIC_URL)."""
    return order_bcp_json_of(
        order,
        lines=order.lines.all(),
        expectations=order.expectations.all(),
        events=order.fulfillment_events.all(),
        adjustments=order.adjustments.all(),
    )


def order_bcp_json_of(
    order: Order,
    *,
    lines: Iterable[OrderLine],
    expectations: Iterable[FulfillmentExpectation],
    events: Iterable[FulfillmentEvent] = (),
    adjustments: Iterable[Adjustment] = (),
) -> str:
    """`order_bcp_json` from rows in hand: placement renders it before the order's INSERT (no pk yet)."""
    payload = _render(order, lines, expectations, events, adjustments)
    payload.pop("permalink_url")
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def order_bcp_render(order: Order) -> dict[str, Any]:
    """The BCP §7 order rendered from the rows. Uses only prefetched relations (see order_for_bcp)."""
    return _render(
        order, order.lines.all(), order.expectations.all(), order.fulfillment_events.all(), order.adjustments.all()
    )


def _render(
    order: Order,
    lines: Iterable[OrderLine],
    expectations: Iterable[FulfillmentExpectation],
    events: Iterable[FulfillmentEvent],
    adjustments: Iterable[Adjustment],
) -> dict[str, Any]:
    planned, adjusted, rows = list(expectations), list(adjustments), list(lines)
    # BCP §7 (BCP-ORD-07): an expectation promises what is still to come, each line at least 1 unit: the units a
    # cancellation took off leave it (as on the admin's order page), and an expectation left empty is dropped.
    # Shipped units stay (seed 000): the description says what left (`expectation_description`).
    left = expectation_items_now(planned, adjusted)
    kept = [(exp, left[exp.public_id][0]) for exp in planned]
    progress = expectation_progress(planned, adjusted, rows, now=left)
    titles = {line.public_id: line.title for line in rows}
    shipped = list(events)
    windows = {exp.public_id: expectation_arrival(exp, order, progress[exp.public_id], shipped) for exp, _items in kept}
    return {
        "id": order.public_id,
        "label": f"#{order.number}",
        "checkout_id": order.checkout_id,
        "permalink_url": order.permalink_url,
        "currency": order.currency,
        "line_items": [line_payload(line) for line in rows],
        "fulfillment": {
            "expectations": [
                expectation_payload(
                    exp,
                    items,
                    description=expectation_description(
                        exp, progress[exp.public_id], titles, window=windows[exp.public_id]
                    ),
                )
                for exp, items in kept
                if items
            ],
            "events": [event_payload(event) for event in shipped],
        },
        "adjustments": [adjustment_payload(adj) for adj in adjusted],
        "totals": list(order.totals),
        **_snapshot_time(order),
        **_dispute_messages(order),
    }


def _snapshot_time(order: Order) -> dict[str, str]:
    """`updated_at`, when this snapshot was made (`bcp_json_at`, set with the change under the order's lock; an order
    stored before it: its last save), in microseconds. BCP §8 gives webhooks no order of their own (a retry gets a
    new `Webhook-Timestamp`), so a platform that gets two in flight keeps the later `updated_at` (an extra member:
    BCP schemas are open, §1)."""
    when = order.bcp_json_at or order.updated_at
    if when is None:
        return {}
    return {"updated_at": when.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")}


# MED 2.0 (orders.services.disputes): agents see a disputed Pix on the order as a warning (a freeform BCP code).
_DISPUTE_WARNINGS = {
    "open": "O Pix deste pedido foi contestado pelo pagador (MED): o envio está retido até a loja responder.",
    "contested": "A loja contestou a disputa do Pix (MED) com evidências; o pedido segue enquanto o PSP analisa.",
}


_DISPUTE_OPEN_SENT = (
    "O Pix deste pedido foi contestado pelo pagador (MED); o pedido já saiu da loja e a loja responde com o rastreio "
    "e a nota fiscal."
)


def _dispute_messages(order: Order) -> dict[str, Any]:
    text = _DISPUTE_WARNINGS.get(order.payment_dispute)
    if order.payment_dispute == "open" and order.status in ALL_SENT_STATUSES:  # QA walk: "envio retido" of a sent one
        text = _DISPUTE_OPEN_SENT
    if text is None:
        return {}
    return {"messages": [{"type": "warning", "code": "payment_disputed", "content": text}]}


# --- cancel and return by the buyer or an agent (issue 35; BCP extension br.dev.bcp.shopping.order_actions) -----

CDC_WITHDRAWAL_DAYS = 7  # CDC art. 49: 7 days to withdraw from a purchase made outside the shop's premises
OPEN_RETURN_STATUSES = ("requested", "approved")


def return_window_days(order: Order) -> int:
    """The returns window the order was placed under (its policy snapshot), never under the CDC's 7 days."""
    for entry in order.policies or []:
        if isinstance(entry, dict) and entry.get("kind") == "returns":
            days = entry.get("return_window_days")
            if isinstance(days, int) and not isinstance(days, bool):
                return max(CDC_WITHDRAWAL_DAYS, days)
    return CDC_WITHDRAWAL_DAYS


@dataclass(frozen=True)
class OrderActions:
    """What the buyer or the order's platform may still do with the order, and why not."""

    cancel_available: bool
    cancel_refusal: str  # the OrderError code that a cancel would get ("" when available)
    return_available: bool
    return_refusal: str
    window_days: int
    delivered_at: datetime | None  # the window runs from the last delivery; none recorded: not started yet
    return_deadline: datetime | None
    returnable: dict[str, int]  # line id → units that may still be asked back


def order_actions(
    order: Order,
    *,
    lines: Iterable[OrderLine],
    events: Iterable[FulfillmentEvent],
    requests: Iterable[Any],
    now: datetime,
) -> OrderActions:
    """Pure: the order's actions from rows already read (the page, the presenter and the services share it)."""
    lines = list(lines)
    delivered = max((e.occurred_at for e in events if e.type == "delivered"), default=None)
    days = return_window_days(order)
    deadline = delivered + timedelta(days=days) if delivered is not None else None
    asked: dict[str, int] = {}
    for request in requests:
        if request.status in OPEN_RETURN_STATUSES:
            for item in request.line_items:
                asked[item["id"]] = asked.get(item["id"], 0) + int(item["quantity"])
    # Only what the buyer received can come back (README): shipped units still on the road are not returnable.
    returnable = {line.public_id: max(0, line.quantity_delivered - asked.get(line.public_id, 0)) for line in lines}
    canceled = order.status == "canceled"
    # What has not left the shop may be cancelled, also when part of the order already shipped (that part stays:
    # once received, it comes back as a return); refused once everything still in the order has been sent.
    nothing_left = not any(line.quantity_total > 0 for line in lines)
    all_out = all(line.quantity_fulfilled >= line.quantity_total for line in lines)
    cancel_refusal = (
        "order_canceled"
        if canceled
        else "nothing_to_cancel"
        if nothing_left
        else "already_shipped"
        if all_out
        else "payment_disputed"
        if order.payment_dispute == "open"
        else ""
    )
    if canceled:
        return_refusal = "order_canceled"
    elif not any(returnable.values()):
        return_refusal = "nothing_to_return"
    elif deadline is not None and now > deadline:
        return_refusal = "return_window_closed"
    else:
        return_refusal = ""
    return OrderActions(
        cancel_available=not cancel_refusal, cancel_refusal=cancel_refusal,
        return_available=not return_refusal, return_refusal=return_refusal, window_days=days,
        delivered_at=delivered, return_deadline=deadline, returnable=returnable,
    )  # fmt: skip


def return_requests_of(order: Order) -> list[ReturnRequest]:
    return list(ReturnRequest.objects.filter(order=order).order_by("created_at", "id"))


def return_request_payload(request: ReturnRequest) -> dict[str, Any]:
    """A return request as the order_actions extension shows it (bcp_app/jsonschemas/shopping/order_actions.json)."""
    payload: dict[str, Any] = {
        "id": request.public_id,
        "status": request.status,
        "reason_code": request.reason_code,
        "line_items": [{"id": item["id"], "quantity": item["quantity"]} for item in request.line_items],
        "requested_by": request.requested_by,
        "created_at": rfc3339(request.created_at),
        "updated_at": rfc3339(request.updated_at),
    }
    if request.reason:
        payload["reason"] = request.reason
    if request.staff_note:
        payload["merchant_note"] = request.staff_note
    if request.refund_amount:
        payload["refund_amount"] = request.refund_amount
    # which of the order's adjustments are this return's: an agent follows the refund's status there (pending until
    # the payment provider answers, then completed or failed), also with two returns of the same line
    if request.return_adjustment_id:
        payload["return_adjustment_id"] = request.return_adjustment_id
    if request.refund_adjustment_id:
        payload["refund_adjustment_id"] = request.refund_adjustment_id
    return payload


def order_actions_payload(actions: OrderActions) -> dict[str, Any]:
    cancel: dict[str, Any] = {"available": actions.cancel_available}
    if actions.cancel_refusal:
        cancel["unavailable_reason"] = actions.cancel_refusal
    ret: dict[str, Any] = {"available": actions.return_available, "window_days": actions.window_days}
    if actions.return_refusal:
        ret["unavailable_reason"] = actions.return_refusal
    if actions.return_deadline is not None:
        ret["deadline"] = rfc3339(actions.return_deadline)
    ret["line_items"] = [{"id": line_id, "quantity": q} for line_id, q in actions.returnable.items() if q > 0]
    return {"cancel": cancel, "return": ret}


def order_actions_bcp(order: Order, *, now: datetime) -> dict[str, Any]:
    """`order_actions` and `return_requests` of the extension for an order read by `order_presented` /
    `order_for_bcp` (2 queries: its lines and delivered events are read again only when not prefetched)."""
    lines = order.lines.all()
    events = FulfillmentEvent.objects.filter(order=order, type="delivered").only("type", "occurred_at")
    requests = return_requests_of(order)
    actions = order_actions(order, lines=lines, events=events, requests=requests, now=now)
    return {
        "order_actions": order_actions_payload(actions),
        "return_requests": [return_request_payload(r) for r in requests],
    }


def orders_cancelled_with_nothing_kept() -> QuerySet[Order]:
    """The orders cancelled in full before the buyer got anything: status cancelled (every unit cancelled) and no
    registered return (units that reached the buyer and came back: the buyer had them; a parcel the carrier brought
    back before delivery is a return with no items, which does not count). What such an order used — a coupon
    limited per buyer, say — is the buyer's again, as if the order had never been placed."""
    kept = Adjustment.objects.filter(order=OuterRef("pk"), type=AdjustmentType.RETURN).exclude(line_items=[])
    credit = Adjustment.objects.filter(order=OuterRef("pk"), type=AdjustmentType.CREDIT)
    return Order.objects.filter(status=OrderStatus.CANCELED).exclude(Exists(kept)).exclude(Exists(credit))


def orders_with_payment_date(queryset: QuerySet[Order]) -> QuerySet[Order]:
    """Each order with `payment_confirmed_at`, when its payment was confirmed: the first "payment_confirmed" on
    the timeline (a boleto or a Pix com vencimento paid days after the order), else the placement of an order
    placed paid (a Pix settled before the order exists), else None. One subquery; annotated once."""
    if "payment_confirmed_at" in queryset.query.annotations:
        return queryset
    confirmed = (
        OrderEvent.objects.filter(order=OuterRef("pk"), kind="payment_confirmed")
        .order_by("created_at")
        .values("created_at")[:1]
    )
    placed_paid = Case(When(paid_amount__gt=0, then=F("placed_at")), output_field=DateTimeField())
    return queryset.annotate(payment_confirmed_at=Coalesce(Subquery(confirmed), placed_paid))


def orders_paid_between(queryset: QuerySet[Order], start: datetime, end: datetime) -> QuerySet[Order]:
    """The orders whose payment was confirmed in [start, end) (`orders_with_payment_date`): the finance export's
    "Data do pagamento"."""
    return orders_with_payment_date(queryset).filter(payment_confirmed_at__gte=start, payment_confirmed_at__lt=end)


@dataclass(frozen=True)
class MoneySummary:
    """The money of a set of orders, in centavos, as the finance export's columns add up."""

    label: str
    count: int = 0
    gross: int = 0  # total of the orders (items − discounts + freight + interest)
    discount: int = 0
    freight: int = 0
    interest: int = 0  # installment interest (`fee` totals)
    paid: int = 0
    refunded: int = 0
    refund_pending: int = 0
    net: int = 0  # paid − refunded


def _totals_part(totals: list[dict[str, Any]] | None, *kinds: str) -> int:
    return sum(int(entry.get("amount", 0)) for entry in totals or [] if entry.get("type") in kinds)


def orders_money_summary(queryset: QuerySet[Order], *, method_label: Any) -> list[MoneySummary]:
    """One row per payment method, then the whole: what the order list's filters select. Two queries."""
    orders = list(
        queryset.order_by().values_list(
            "pk", "payment_type", "totals", "total_amount", "paid_amount", "refunded_amount"
        )
    )
    pending_by_order: dict[int, int] = {}
    for order_id, amount in Adjustment.objects.filter(
        order__in=queryset.order_by().values("pk"), type=AdjustmentType.REFUND, status=AdjustmentStatus.PENDING
    ).values_list("order_id", "amount"):
        pending_by_order[order_id] = pending_by_order.get(order_id, 0) - amount
    sums: dict[str | None, dict[str, int]] = {}  # by payment type; None: all the orders
    for pk, method, totals, total, paid, refunded in orders:
        for key in (method, None):
            row = sums.setdefault(
                key,
                dict.fromkeys(
                    ("count", "gross", "discount", "freight", "interest", "paid", "refunded", "refund_pending"), 0
                ),
            )
            row["count"] += 1
            row["gross"] += total
            row["discount"] += -_totals_part(totals, "discount", "items_discount")
            row["freight"] += _totals_part(totals, "fulfillment")
            row["interest"] += _totals_part(totals, "fee")
            row["paid"] += paid
            row["refunded"] += refunded
            row["refund_pending"] += pending_by_order.get(pk, 0)
    rows = [
        MoneySummary(label=str(method_label(method)), net=values["paid"] - values["refunded"], **values)
        for method, values in sorted((m, v) for m, v in sums.items() if m is not None)
    ]
    if orders:
        whole = sums[None]
        rows.append(MoneySummary(label=_("Total"), net=whole["paid"] - whole["refunded"], **whole))
    return rows


def shipment_tracking_now(*, order_id: str, shipment_id: str) -> FulfillmentEvent | None:
    """The event holding the tracking code of the order's shipment `shipment_id` now: its latest correction, or the
    shipment itself (`summary.current_tracking`); None when the order has no such shipment. One query."""
    events = list(
        FulfillmentEvent.objects.filter(order__public_id=order_id).filter(
            Q(public_id=shipment_id, type=FulfillmentEventType.SHIPPED) | Q(corrects__public_id=shipment_id)
        )
    )
    shipment = next((event for event in events if event.public_id == shipment_id and not event.corrects_id), None)
    return current_tracking(shipment, events) if shipment is not None else None


def shipment_of_step(event: FulfillmentEvent) -> FulfillmentEvent | None:
    """The shipment a carrier step (out for delivery, failed attempt) is about: the one whose tracking code is the
    step's now (staff's latest correction of it counts), else the latest shipment of any of its lines. One query."""
    shipped = list(
        FulfillmentEvent.objects.filter(
            order_id=event.order_id,
            type__in=[FulfillmentEventType.SHIPPED, FulfillmentEventType.TRACKING_CORRECTED],
        ).order_by("occurred_at", "pk")
    )
    shipments = [e for e in shipped if e.type == FulfillmentEventType.SHIPPED]
    if event.tracking_number:
        same = [s for s in shipments if current_tracking(s, shipped).tracking_number == event.tracking_number]
        if same:
            return same[-1]
    lines = {str(item["id"]) for item in event.line_items}
    return next((s for s in reversed(shipments) if any(str(i["id"]) in lines for i in s.line_items)), None)


def orders_sharing_tracking(tracking_number: str, *, order: Order) -> list[int]:
    """Numbers of the other orders whose shipment carries `tracking_number` now (as stored: upper case, no
    spaces; a code later corrected away does not count), lowest first: staff entering a code already used are
    warned, as one parcel per order is the rule (a carrier reusing a code across a split shipment is the
    exception they can tell). Two statements: the candidates by the indexed code, then their corrections."""
    if not tracking_number:
        return []
    candidates = list(
        FulfillmentEvent.objects.filter(
            tracking_number=tracking_number,
            type__in=(FulfillmentEventType.SHIPPED, FulfillmentEventType.TRACKING_CORRECTED),
        )
        .exclude(order_id=order.pk)
        .select_related("order")[:50]
    )
    if not candidates:
        return []
    shipment_ids = {event.corrects_id or event.pk for event in candidates}
    corrections = list(FulfillmentEvent.objects.filter(corrects_id__in=shipment_ids))
    numbers: set[int] = set()
    for event in candidates:
        shipment_pk = event.corrects_id or event.pk
        latest = [c for c in corrections if c.corrects_id == shipment_pk]
        # the code the shipment carries now (summary.current_tracking's rule, without loading the shipment)
        now = max(latest, key=lambda e: (e.occurred_at, e.pk)) if latest else event
        if now.pk == event.pk:
            numbers.add(event.order.number)
    return sorted(numbers)
