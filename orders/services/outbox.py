"""Outbox services: record a side effect inside the caller's transaction; process it exactly once.

Kinds: `refund_requested` (Pix devolução through payments), `order_changed` (signed order webhooks
to the platform, through bcp_app; for a placed order also the buyer's "Pedido recebido" e-mail and, through
the shop's receiver, the NF-e request: the one task per placed order) and `label_purchase` (a carrier label,
bought by the shop's receiver).

`outbox_add` runs inside the transaction of the change (the adjustment); after commit it enqueues
`orders.tasks.process_outbox_message`. If that enqueue is lost (broker down) or processing fails (a
database error in a receiver), the row stays `pending` and `orders.tasks.sweep_outbox` (beat) runs it
again. Processing dispatches the row's signal synchronously (orders/services/dispatch.py: outbox_process).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kernel.rows import new_row
from kernel.tasks import enqueue_on_commit, pending_sends
from orders.models import OutboxMessage
from orders.outbox_models import ORDER_CHANGED

REFUND_REQUESTED = "refund_requested"
PLACED = "placed"  # the order_changed event of a placement (its e-mail and NF-e read the order's lines)
LABEL_PURCHASE = "label_purchase"  # a carrier label (the shop's receiver buys it: issue 36)
# Each kind has its handler in orders/services/dispatch.py.
KINDS = frozenset({REFUND_REQUESTED, ORDER_CHANGED, LABEL_PURCHASE})


def outbox_add(*, kind: str, key: str, payload: dict[str, Any], fresh: bool = False) -> OutboxMessage:
    """Inside the caller's transaction. The same key twice is the same side effect: one row.
    `fresh`: the key is new by construction (random), so the row is inserted without looking first."""
    if kind not in KINDS:
        raise ValueError(f"unknown outbox kind {kind!r}")
    if fresh:
        message = OutboxMessage.objects.create(key=key, kind=kind, payload=payload)
    else:
        message, _ = OutboxMessage.objects.get_or_create(key=key, defaults={"kind": kind, "payload": payload})
    outbox_enqueue(message)
    return message


def outbox_row(*, kind: str, key: str, payload: dict[str, Any]) -> OutboxMessage:
    """A new outbox row not written yet, for a caller that inserts it with its other rows in one statement
    (`kernel.rows.insert_together`, the placement); `outbox_enqueue` it once written. The key must be new by
    construction (random): nothing is looked up."""
    if kind not in KINDS:
        raise ValueError(f"unknown outbox kind {kind!r}")
    return new_row(OutboxMessage, key=key, kind=kind, payload=payload)


PROCESS_TASK = "orders.tasks.process_outbox_message"


def outbox_enqueue(message: OutboxMessage) -> None:
    """Its task after the caller's commit (broker down: the beat sweep runs it). The send is tagged with the row,
    so `outbox_pending` finds it while the caller's transaction is open."""
    enqueue_on_commit(PROCESS_TASK, message.pk, tag=message)


def outbox_pending(kind: str) -> Iterator[OutboxMessage]:
    """The rows of `kind` this transaction wrote (in this savepoint or an enclosing one) and will enqueue at its
    commit: written by the caller's transaction, so no one else has seen or run them yet."""
    for tag in pending_sends(PROCESS_TASK):
        if isinstance(tag, OutboxMessage) and tag.kind == kind:
            yield tag
