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
from orders.selectors import order_for_side_effects
from orders.services.notes import order_placed_email_send
from orders.services.outbox import LABEL_PURCHASE, ORDER_CHANGED, REFUND_REQUESTED
from orders.signals import label_purchase_requested, order_changed, refund_requested

logger = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=5)


# `send`, not `send_robust`: a receiver's failure must leave the row pending.
def _send_refund_requested(key: str, payload: dict[str, Any]) -> None:
    refund_requested.send(sender=Order, **payload)


def _send_order_changed(key: str, payload: dict[str, Any]) -> None:
    # Read once for every side effect of the event (issue 34: each receiver re-read it); a placement's e-mail
    # and NF-e also need its lines and adjustments.
    placed = payload.get("event") == "placed"
    order = order_for_side_effects(payload.get("order_id", ""), with_lines=placed)
    if placed:
        order_placed_email_send(order_id=payload["order_id"], order=order)  # the buyer's e-mail, then the receivers
    order_changed.send(sender=Order, outbox_key=key, order=order, **payload)


def _send_label_purchase(key: str, payload: dict[str, Any]) -> None:
    label_purchase_requested.send(sender=Order, outbox_key=key, **payload)


HANDLERS: dict[str, Callable[[str, dict[str, Any]], None]] = {
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


def _claim(message_id: int, now: datetime) -> tuple[str, str, dict[str, Any]] | None:
    """(kind, key, payload) of a pending row nobody holds, now leased to this run; None otherwise."""
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_SQL.format(table=connection.ops.quote_name(OutboxMessage._meta.db_table)),
            [adapt(now + CLAIM_LEASE), message_id, OutboxMessage.Status.PENDING, adapt(now)],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    kind, key, raw = row
    return kind, key, raw if isinstance(raw, dict) else json.loads(raw)  # jsonb comes as text through Django


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
    kind, key, payload = claimed
    try:
        HANDLERS[kind](key, payload)
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
