"""Outbox dispatch: run one pending row's side effect exactly once (rows are written by outbox.outbox_add)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from orders.models import Order, OutboxMessage
from orders.selectors import order_columns, order_for_side_effects, order_from_row, order_with_relations
from orders.services.notes import order_placed_email_send
from orders.services.outbox import LABEL_PURCHASE, ORDER_CHANGED, REFUND_REQUESTED
from orders.signals import label_purchase_requested, order_changed, refund_requested

logger = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=5)


_UNREAD = object()  # the order was not read with the outbox row's claim

# A handler gets the row's key and payload and what the claim read with it: the order of an `order_changed` row on
# PostgreSQL (its row, or None when there is no such order), `_UNREAD` otherwise.
Handler = Callable[[str, dict[str, Any], Order | object | None], None]


# `send`, not `send_robust`: a receiver's failure must leave the row pending.
def _send_refund_requested(key: str, payload: dict[str, Any], read: Order | object | None) -> None:
    refund_requested.send(sender=Order, **payload)


def _send_order_changed(key: str, payload: dict[str, Any], read: Order | object | None) -> None:
    # Read once for every side effect of the event (issue 34: each receiver re-read it); a placement's e-mail
    # and NF-e also need its lines and adjustments. `read`: the order's row as the claim read it.
    placed = payload.get("event") == "placed"
    if read is _UNREAD:
        order = order_for_side_effects(payload.get("order_id", ""), with_lines=placed)
    else:
        order = order_with_relations(read) if placed and isinstance(read, Order) else read  # type: ignore[assignment]
    if placed:
        order_placed_email_send(order_id=payload["order_id"], order=order)  # the buyer's e-mail, then the receivers
    order_changed.send(sender=Order, outbox_key=key, order=order, **payload)


def _send_label_purchase(key: str, payload: dict[str, Any], read: Order | object | None) -> None:
    label_purchase_requested.send(sender=Order, outbox_key=key, **payload)


HANDLERS: dict[str, Handler] = {
    REFUND_REQUESTED: _send_refund_requested,
    ORDER_CHANGED: _send_order_changed,
    LABEL_PURCHASE: _send_label_purchase,
}


# The claim and the read of the row in one statement (UPDATE … RETURNING), as the ORM's update() returns only a count.
_CLAIM_SQL = (
    "UPDATE {table} SET claimed_until = %s, attempts = attempts + 1"
    " WHERE id = %s AND status = %s AND (claimed_until IS NULL OR claimed_until < %s)"
    " RETURNING kind, key, payload"
)
# On PostgreSQL an order_changed row's order is read in the claim's statement too (issue 34: one round trip less
# per order event): its columns as the order's own read takes them (orders.selectors.order_columns), NULL for
# any other kind or a row without such an order.
_CLAIM_WITH_ORDER_SQL = (
    "WITH claimed AS ({claim}) SELECT claimed.kind, claimed.key, claimed.payload, {columns} FROM claimed"
    " LEFT JOIN {orders} ON claimed.kind = %s AND {orders}.{public_id} = (claimed.payload ->> 'order_id')"
)
_claim_sql: dict[str, str] = {}  # vendor → the claim's text (built once per process)


def _claim_text() -> str:
    text = _claim_sql.get(connection.vendor)
    if text is None:
        quote = connection.ops.quote_name
        text = _CLAIM_SQL.format(table=quote(OutboxMessage._meta.db_table))
        if connection.vendor == "postgresql":
            text = _CLAIM_WITH_ORDER_SQL.format(
                claim=text, columns=order_columns(), orders=quote(Order._meta.db_table),
                public_id=quote(Order._meta.get_field("public_id").column),
            )  # fmt: skip
        _claim_sql[connection.vendor] = text
    return text


def _claim(message_id: int, now: datetime) -> tuple[str, str, dict[str, Any], Order | object | None] | None:
    """(kind, key, payload, the order's row or _UNREAD) of a pending row nobody holds, now leased to this run;
    None otherwise."""
    adapt = connection.ops.adapt_datetimefield_value
    params: list[Any] = [adapt(now + CLAIM_LEASE), message_id, OutboxMessage.Status.PENDING, adapt(now)]
    joined = connection.vendor == "postgresql"
    if joined:
        params.append(ORDER_CHANGED)
    with connection.cursor() as cursor:
        cursor.execute(_claim_text(), params)
        row = cursor.fetchone()
    if row is None:
        return None
    kind, key, raw = row[:3]
    payload = raw if isinstance(raw, dict) else json.loads(raw)  # jsonb comes as text through Django
    read: Order | object | None = _UNREAD
    if joined and kind == ORDER_CHANGED:
        order_id = payload.get("order_id")
        read = order_from_row(row[3:]) if isinstance(order_id, str) and order_id else None
    return kind, key, payload, read


# Marking the row done, hand-written like the claim: the same shape once per outbox row (issue 34: compiling the ORM
# UPDATE cost more than running it).
_DONE_SQL = "UPDATE {table} SET status = %s, processed_at = %s, last_error = '', claimed_until = NULL WHERE id = %s"


def _done(message_id: int, now: datetime) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            _DONE_SQL.format(table=connection.ops.quote_name(OutboxMessage._meta.db_table)),
            [OutboxMessage.Status.DONE, connection.ops.adapt_datetimefield_value(now), message_id],
        )


def outbox_process(*, message_id: int) -> str:
    """Run one pending row's side effect; "done", "skipped" (done, or being run elsewhere) or "failed".

    The row is claimed with a lease in its own short transaction, the handler runs outside any
    transaction of ours (it may enqueue to the broker or reach the network), then the row is marked
    done. A crash in between leaves the claim to expire and the sweep runs the row again; handlers
    are idempotent on the row's key (refund_request on `refund_id`, order webhooks on `source_key`).
    """
    claimed = _claim(message_id, timezone.now())
    if claimed is None:
        return "skipped"
    kind, key, payload, read = claimed
    try:
        HANDLERS[kind](key, payload, read)
    except Exception as exc:  # any failure leaves the row pending for the sweep; it is recorded on the row
        logger.warning("outbox message %s failed; the sweep will retry it", message_id, exc_info=True)
        OutboxMessage.objects.filter(pk=message_id).update(
            claimed_until=None, last_error=f"{exc.__class__.__name__}: {exc}"[:500]
        )
        return "failed"
    _done(message_id, timezone.now())
    return "done"


def outbox_pending_ids(*, older_than: timedelta, limit: int) -> list[int]:
    """Pending rows past their normal after-commit path, oldest first."""
    cutoff = timezone.now() - older_than
    return list(
        OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING, created_at__lt=cutoff)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:limit]
    )
