"""Outbox services: record a side effect inside the caller's transaction; process it exactly once.

Kinds: `refund_requested` (Pix devolução through payments) and `order_changed` (signed order webhooks
to the platform, through bcp_app; for a placed order also the buyer's "Pedido recebido" e-mail and, through
the shop's receiver, the NF-e request: the one task per placed order).

`outbox_add` runs inside the transaction of the change (the adjustment); after commit it enqueues
`orders.tasks.process_outbox_message`. If that enqueue is lost (broker down) or processing fails (a
database error in a receiver), the row stays `pending` and `orders.tasks.sweep_outbox` (beat) runs it
again. Processing dispatches the row's signal synchronously (outbox_process).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db.models import F, Q
from django.utils import timezone

from kernel.tasks import enqueue_on_commit
from orders.models import Order, OutboxMessage
from orders.services.notes import order_placed_email_send
from orders.signals import order_changed, refund_requested

logger = logging.getLogger(__name__)

REFUND_REQUESTED = "refund_requested"


ORDER_CHANGED = "order_changed"
CLAIM_LEASE = timedelta(minutes=5)


# `send`, not `send_robust`: a receiver's failure must leave the row pending.
def _send_refund_requested(key: str, payload: dict[str, Any]) -> None:
    refund_requested.send(sender=Order, **payload)


def _send_order_changed(key: str, payload: dict[str, Any]) -> None:
    if payload.get("event") == "placed":
        order_placed_email_send(order_id=payload["order_id"])  # the buyer's e-mail, then the receivers
    order_changed.send(sender=Order, outbox_key=key, **payload)


HANDLERS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    REFUND_REQUESTED: _send_refund_requested,
    ORDER_CHANGED: _send_order_changed,
}


def outbox_add(*, kind: str, key: str, payload: dict[str, Any], fresh: bool = False) -> OutboxMessage:
    """Inside the caller's transaction. The same key twice is the same side effect: one row.
    `fresh`: the key is new by construction (random), so the row is inserted without looking first."""
    if kind not in HANDLERS:
        raise ValueError(f"unknown outbox kind {kind!r}")
    if fresh:
        message = OutboxMessage.objects.create(key=key, kind=kind, payload=payload)
    else:
        message, _ = OutboxMessage.objects.get_or_create(key=key, defaults={"kind": kind, "payload": payload})
    enqueue_on_commit("orders.tasks.process_outbox_message", message.pk)  # broker down: the beat sweep runs it
    return message


def outbox_process(*, message_id: int) -> str:
    """Run one pending row's side effect; "done", "skipped" (done, or being run elsewhere) or "failed".

    The row is claimed with a lease in its own short transaction, the handler runs outside any
    transaction of ours (it may enqueue to the broker or reach the network), then the row is marked
    done. A crash in between leaves the claim to expire and the sweep runs the row again; handlers
    are idempotent on the row's key (refund_request on `refund_id`, order webhooks on `source_key`).
    """
    now = timezone.now()
    claimed = (
        OutboxMessage.objects.filter(pk=message_id, status=OutboxMessage.Status.PENDING)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .update(claimed_until=now + CLAIM_LEASE, attempts=F("attempts") + 1)
    )
    if not claimed:
        return "skipped"
    message = OutboxMessage.objects.get(pk=message_id)
    try:
        HANDLERS[message.kind](message.key, message.payload)
    except Exception as exc:  # any failure leaves the row pending for the sweep; it is recorded on the row
        logger.warning("outbox message %s failed; the sweep will retry it", message_id, exc_info=True)
        OutboxMessage.objects.filter(pk=message_id).update(
            claimed_until=None, last_error=f"{exc.__class__.__name__}: {exc}"[:500]
        )
        return "failed"
    OutboxMessage.objects.filter(pk=message_id).update(
        status=OutboxMessage.Status.DONE, processed_at=timezone.now(), last_error="", claimed_until=None
    )
    return "done"


def outbox_pending_ids(*, older_than: timedelta, limit: int) -> list[int]:
    """Pending rows past their normal after-commit path, oldest first."""
    cutoff = timezone.now() - older_than
    return list(
        OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING, created_at__lt=cutoff)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:limit]
    )
