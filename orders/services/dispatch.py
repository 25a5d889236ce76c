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
from orders.selectors import (
    order_column_count,
    order_columns,
    order_for_side_effects,
    order_from_row,
    order_relation_columns,
    order_with_rows,
)
from orders.services.notes import order_placed_email_send
from orders.services.outbox import LABEL_PURCHASE, ORDER_CHANGED, PLACED, REFUND_REQUESTED
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
    placed = payload.get("event") == PLACED
    # A placement's claim read its lines and adjustments too (_claim).
    order = order_for_side_effects(payload.get("order_id", ""), with_lines=placed) if read is _UNREAD else read
    if placed:
        order_placed_email_send(order_id=payload["order_id"], order=order)  # type: ignore[arg-type]  # e-mail first
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
# any other kind or a row without such an order; for a placement, its lines and adjustments too (what
# order_with_relations reads; issue 34: two statements less per placed order), as rows of their own below the
# claimed row (part 1 and 2), each part padded with typed NULLs for the others' columns and in its Meta ordering.
_CLAIM_WITH_ORDER_SQL = (
    "WITH claimed AS ({claim}), found AS (SELECT claimed.kind, claimed.key, claimed.payload, {columns} FROM claimed"
    " LEFT JOIN {orders} ON claimed.kind = %s AND {orders}.{public_id} = (claimed.payload ->> 'order_id'))"
    " SELECT 0, found.*, {nulls} FROM found{relations} ORDER BY 1{ordering}"
)
# One relation's part: its rows when the claimed row is a placement whose order was found.
_RELATION_SQL = (
    " UNION ALL SELECT {part}, {before}, {columns}{after} FROM {table} WHERE {table}.{order_id} ="
    " (SELECT found.{pk} FROM found WHERE found.payload ->> 'event' = %s)"
)
_claim_sql: dict[str, str] = {}  # vendor → the claim's text (built once per process)


def _claim_text() -> str:
    text = _claim_sql.get(connection.vendor)
    if text is None:
        quote = connection.ops.quote_name
        text = _CLAIM_SQL.format(table=quote(OutboxMessage._meta.db_table))
        if connection.vendor == "postgresql":
            parts = order_relation_columns()
            nulls = ", ".join("NULL" for _ in range(3 + order_column_count()))  # typed by the first part
            relations, ordering, offset = [], [], 2 + 3 + order_column_count()  # ORDER BY positions start at 1
            for index, part in enumerate(parts, start=1):
                before = [nulls, *(other.nulls for other in parts[: index - 1])]
                after = "".join(f", {other.nulls}" for other in parts[index:])
                relations.append(
                    _RELATION_SQL.format(
                        part=index, before=", ".join(before), columns=part.columns, after=after, table=part.table,
                        order_id=quote(part.order_column), pk=quote(str(Order._meta.pk.column)),
                    )
                )  # fmt: skip
                ordering += [f", {offset + at}{' DESC' if descending else ''}" for at, descending in part.ordering]
                offset += part.width
            text = _CLAIM_WITH_ORDER_SQL.format(
                claim=text, columns=order_columns(), orders=quote(Order._meta.db_table),
                public_id=quote(Order._meta.get_field("public_id").column),
                nulls=", ".join(part.nulls for part in parts), relations="".join(relations), ordering="".join(ordering),
            )  # fmt: skip
        _claim_sql[connection.vendor] = text
    return text


def _claim(message_id: int, now: datetime) -> tuple[str, str, dict[str, Any], Order | object | None] | None:
    """(kind, key, payload, the order's row or _UNREAD) of a pending row nobody holds, now leased to this run;
    None otherwise. On PostgreSQL a placement's order comes with its lines and adjustments (order_with_relations)."""
    adapt = connection.ops.adapt_datetimefield_value
    params: list[Any] = [adapt(now + CLAIM_LEASE), message_id, OutboxMessage.Status.PENDING, adapt(now)]
    joined = connection.vendor == "postgresql"
    parts = order_relation_columns() if joined else ()
    if joined:
        params += [ORDER_CHANGED, *([PLACED] * len(parts))]
    with connection.cursor() as cursor:
        cursor.execute(_claim_text(), params)
        rows = cursor.fetchall() if joined else cursor.fetchmany(1)
    if not rows:
        return None
    row = rows[0]
    if not joined:
        kind, key, raw = row
    else:
        kind, key, raw = row[1:4]
    payload = raw if isinstance(raw, dict) else json.loads(raw)  # jsonb comes as text through Django
    read: Order | object | None = _UNREAD
    if joined and kind == ORDER_CHANGED:
        order_id = payload.get("order_id")
        width = order_column_count()
        read = order_from_row(row[4 : 4 + width]) if isinstance(order_id, str) and order_id else None
        if read is not None and payload.get("event") == PLACED:
            # each part's values: after the claimed row's and the parts before it
            found: dict[str, list[Any]] = {}
            start = 4 + width
            for index, part in enumerate(parts, start=1):
                found[part.name] = [values[start : start + part.width] for values in rows if values[0] == index]
                start += part.width
            read = order_with_rows(read, found)
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
