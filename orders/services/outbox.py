"""Outbox services: record a side effect inside the caller's transaction; process it exactly once.

`outbox_add` runs inside the transaction of the change (the adjustment); after commit it enqueues
`orders.tasks.process_outbox_message`. If that enqueue is lost (broker down) or processing fails (a
database error in a receiver), the row stays `pending` and `orders.tasks.sweep_outbox` (beat) runs it
again. Processing dispatches the row's signal synchronously inside one transaction that also marks the
row done, so the side effect and "done" commit together or not at all; receivers are idempotent on the
row's key (payments' refund_request on `refund_id`), so a crash after their commit cannot double it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from orders.models import Order, OutboxMessage
from orders.signals import refund_requested

logger = logging.getLogger(__name__)

REFUND_REQUESTED = "refund_requested"


def _send_refund_requested(payload: dict[str, Any]) -> None:
    # `send`, not `send_robust`: a receiver's failure must roll the row back to pending.
    refund_requested.send(sender=Order, **payload)


HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {REFUND_REQUESTED: _send_refund_requested}


def outbox_add(*, kind: str, key: str, payload: dict[str, Any]) -> OutboxMessage:
    """Inside the caller's transaction. The same key twice is the same side effect: one row."""
    if kind not in HANDLERS:
        raise ValueError(f"unknown outbox kind {kind!r}")
    message, _ = OutboxMessage.objects.get_or_create(key=key, defaults={"kind": kind, "payload": payload})
    message_id = message.pk

    def enqueue() -> None:
        from orders.tasks import process_outbox_message

        try:
            process_outbox_message.delay(message_id)
        except Exception:  # broker unreachable: the beat sweep picks the row up
            logger.warning("outbox %s not enqueued; the sweep will process it", key, exc_info=True)

    transaction.on_commit(enqueue)
    return message


def outbox_process(*, message_id: int) -> str:
    """Run one pending row's side effect; "done", "skipped" (already done or being run) or "failed"."""
    try:
        with transaction.atomic():
            message = (
                OutboxMessage.objects.select_for_update(skip_locked=True)
                .filter(pk=message_id, status=OutboxMessage.Status.PENDING)
                .first()
            )
            if message is None:
                return "skipped"
            HANDLERS[message.kind](message.payload)
            message.status = OutboxMessage.Status.DONE
            message.attempts += 1
            message.processed_at = timezone.now()
            message.last_error = ""
            message.save(update_fields=["status", "attempts", "processed_at", "last_error"])
    except Exception as exc:  # any failure leaves the row pending for the sweep; it is recorded on the row
        logger.warning("outbox message %s failed; the sweep will retry it", message_id, exc_info=True)
        OutboxMessage.objects.filter(pk=message_id, status=OutboxMessage.Status.PENDING).update(
            attempts=F("attempts") + 1, last_error=f"{exc.__class__.__name__}: {exc}"[:500]
        )
        return "failed"
    return "done"


def outbox_pending_ids(*, older_than: timedelta, limit: int) -> list[int]:
    """Pending rows past their normal after-commit path, oldest first."""
    cutoff = timezone.now() - older_than
    return list(
        OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING, created_at__lt=cutoff)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:limit]
    )
