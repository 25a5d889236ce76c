"""Helpers shared by the orders services: locking, validation of line quantities, timeline, side effects."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.dispatch import Signal
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from kernel import rows
from kernel.tasks import enqueue_on_commit
from orders.errors import OrderError, OrderNotFound
from orders.models import (
    Adjustment,
    AdjustmentStatus,
    AdjustmentType,
    EmailDelivery,
    Order,
    OrderEvent,
    OrderLine,
    OrderStatus,
    OutboxMessage,
    PaymentStatus,
)
from orders.selectors import order_bcp_json, order_for_bcp
from orders.services.outbox import ORDER_CHANGED, PLACED, outbox_enqueue, outbox_pending, outbox_row
from orders.types import LineQuantity

logger = logging.getLogger(__name__)
MAX_QUANTITY = 2**31 - 1
TYPE_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# A control character other than line feed and tab (one search, not a Python step per character: every timeline
# line a worker writes is checked, issue 34).
CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f]")


def lock_order(order_id: str, *, field: str = "order_id") -> Order:
    """Row-lock the order (always first, then its lines by primary key: a fixed order avoids deadlocks)."""
    if not isinstance(order_id, str) or not order_id:
        raise OrderNotFound(field)
    order = Order.objects.select_for_update().filter(public_id=order_id).first()
    if order is None:
        raise OrderNotFound(field)
    return order


def lock_lines(order: Order) -> dict[str, OrderLine]:
    lines = OrderLine.objects.select_for_update().filter(order=order).order_by("id")
    return {line.public_id: line for line in lines}


def refuse_if_canceled(order: Order) -> None:
    if order.status == OrderStatus.CANCELED:
        raise OrderError(
            "order_id", _("O pedido #%(number)s está cancelado."), code="order_canceled", number=order.number
        )


def clean_text(value: object, *, field: str, max_length: int, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise OrderError(field, _("Informe um texto."), code="not_text")
    value = value.strip()
    if required and not value:
        raise OrderError(field, _("Campo obrigatório."), code="required")
    if len(value) > max_length:
        raise OrderError(field, _("Use no máximo %(max)s caracteres."), code="too_long", max=max_length)
    if CONTROL_RE.search(value):
        raise OrderError(field, _("Não use caracteres de controle."), code="control_character")
    return value


def clean_type(value: object, *, field: str = "type") -> str:
    if not isinstance(value, str) or not TYPE_RE.match(value):
        raise OrderError(
            field, _("Use uma palavra em minúsculas, como “shipped” (letras, números e _)."), code="invalid_type"
        )
    return value


def clean_line_quantities(
    lines: Iterable[LineQuantity], known: dict[str, OrderLine], *, field: str = "lines"
) -> list[tuple[OrderLine, int]]:
    """Validate `[LineQuantity]` against the order's lines: known ids, quantity ≥ 1, no duplicates."""
    result: list[tuple[OrderLine, int]] = []
    seen: set[str] = set()
    for index, item in enumerate(lines):
        where = f"{field}[{index}]"
        line_id = getattr(item, "line_id", None)
        quantity = getattr(item, "quantity", None)
        if not isinstance(line_id, str) or line_id not in known:
            raise OrderError(
                f"{where}.id", _("Item %(line)s não encontrado neste pedido."), code="unknown_line", line=line_id
            )
        if line_id in seen:
            raise OrderError(
                f"{where}.id", _("O item %(line)s aparece duas vezes."), code="duplicate_line", line=line_id
            )
        if isinstance(quantity, bool) or not isinstance(quantity, int) or not 1 <= quantity <= MAX_QUANTITY:
            raise OrderError(
                f"{where}.quantity", _("Informe uma quantidade inteira, a partir de 1."), code="bad_quantity"
            )
        seen.add(line_id)
        result.append((known[line_id], quantity))
    return result


def line_items_json(pairs: Sequence[tuple[OrderLine, int]], *, sign: int = 1) -> list[dict[str, Any]]:
    return [{"id": line.public_id, "quantity": sign * quantity} for line, quantity in pairs]


def refresh_line(line: OrderLine) -> None:
    # `fulfilled` counts what left the shop (shipped) or reached the buyer (delivered, pickup), once.
    line.quantity_fulfilled = min(line.quantity_total, max(line.quantity_shipped, line.quantity_delivered))


def refresh_order_status(order: Order, lines: Iterable[OrderLine], *, empty_status: str | None = None) -> None:
    active = [line for line in lines if line.quantity_total > 0]
    if not active:
        order.status = empty_status or (
            order.status if order.status in (OrderStatus.CANCELED, OrderStatus.RETURNED) else OrderStatus.CANCELED
        )
    elif all(line.quantity_delivered >= line.quantity_total for line in active):
        order.status = OrderStatus.DELIVERED
    elif all(line.quantity_fulfilled >= line.quantity_total for line in active):
        order.status = OrderStatus.SHIPPED
    elif any(line.quantity_fulfilled > 0 for line in active):
        order.status = OrderStatus.PARTIALLY_SHIPPED
    else:
        order.status = OrderStatus.PLACED


def refresh_payment_status(order: Order) -> None:
    if order.paid_amount <= 0:
        order.payment_status = PaymentStatus.REFUNDED if order.refunded_amount > 0 else PaymentStatus.PENDING
    elif order.refunded_amount <= 0:
        order.payment_status = PaymentStatus.PAID
    elif order.refunded_amount >= order.paid_amount:
        order.payment_status = PaymentStatus.REFUNDED
    else:
        order.payment_status = PaymentStatus.PARTIALLY_REFUNDED


def refundable_amount(order: Order) -> int:
    """Paid minus every refund not failed (pending ones are money already promised back)."""
    promised = (
        Adjustment.objects.filter(order=order, type=AdjustmentType.REFUND)
        .exclude(status=AdjustmentStatus.FAILED)
        .aggregate(total=Sum("amount"))["total"]
        or 0
    )
    return max(0, order.paid_amount + promised)  # refund amounts are stored negative


def refund_count(order: Order) -> int:
    """How many refunds the order has, whatever their state: the admin's refund page keeps the number it showed,
    so a refund someone else registered meanwhile is noticed before a second one goes out."""
    return Adjustment.objects.filter(order=order, type=AdjustmentType.REFUND).count()


def returned_to_sender_close(order: Order, *, why: str, actor: str) -> None:
    """The carrier's bring-back (a pending return adjustment: only `order_returned_to_sender_open` leaves a return
    pending) is settled once the parcel goes again or the order is cancelled: pending → completed, the one in-place
    change BCP §7 allows. Without it the buyer read "Devolução — pendente" forever."""
    pending = Adjustment.objects.select_for_update().filter(
        order=order, type=AdjustmentType.RETURN, status=AdjustmentStatus.PENDING
    )
    for adjustment in pending:
        adjustment.status = AdjustmentStatus.COMPLETED
        adjustment._allow_update = True  # type: ignore[attr-defined]
        adjustment.save(update_fields=["status", "updated_at"])
        timeline(order, "returned_to_sender_closed", f"Devolução ao remetente encerrada: {why}.", actor=actor,
                 data={"adjustment_id": adjustment.public_id})  # fmt: skip


def staff_words(label: object) -> str:
    """A choice label in the shop's language: timeline messages are stored text, whatever the caller's language."""
    with translation.override(settings.LANGUAGE_CODE):
        return str(label)


def timeline(
    order: Order,
    kind: str,
    message: str,
    *,
    actor: str = "",
    internal: bool = False,
    data: dict[str, Any] | None = None,
) -> OrderEvent:
    return OrderEvent.objects.create(
        order=order, kind=kind, message=message, actor=actor, internal=internal, data=data or {}
    )


def schedule_email(order: Order, kind: str, *, ref: str = "") -> EmailDelivery | None:
    """Record the e-mail in this transaction; the Celery task sends it after commit, once."""
    if not order.buyer_email:
        return None
    # One INSERT … ON CONFLICT on (order, kind, ref), not get_or_create's SELECT, savepoint, INSERT and release:
    # a replay finds the row and schedules nothing.
    delivery = EmailDelivery(order=order, kind=kind, ref=ref, to_email=order.buyer_email)
    if not rows.insert_once(delivery, ["order", "kind", "ref"]):
        return EmailDelivery.objects.filter(order=order, kind=kind, ref=ref).first()
    # A broker hiccup must not turn a committed change into an error page; the row stays unsent.
    enqueue_on_commit("orders.tasks.send_order_email", delivery.pk)
    return delivery


def send_on_commit(signal: Signal, order: Order, **kwargs: Any) -> None:
    """After commit, every receiver runs even if another fails (a failure is logged, the change stands)."""
    order_id = order.public_id

    def send() -> None:
        for receiver, result in signal.send_robust(sender=Order, order_id=order_id, **kwargs):
            if isinstance(result, Exception):
                logger.error("orders signal receiver %r failed for %s", receiver, order_id, exc_info=result)

    transaction.on_commit(send)


def with_relations(order: Order, **rows: list[Any]) -> Order:
    """Remember relations just written (lines, expectations, fulfillment_events, adjustments) as prefetched."""
    cache: dict[str, Any] = {}
    for name, items in rows.items():
        queryset = getattr(order, name).all()
        queryset._result_cache = list(items)
        queryset._prefetch_done = True
        cache[name] = queryset
    order._prefetched_objects_cache = cache
    return order


def notify_changed(order: Order, event: str, *, rendered: bool = False) -> None:
    """Every service that changes what a platform sees of the order calls this last, in its transaction:
    the presented BCP order is rewritten here (Get Order reads only that), and a platform's order is
    announced through an outbox row of the same transaction (a lost enqueue or a failed first run is
    re-driven by the sweep, never dropped). The row carries the platform (the webhook receiver skips
    storefront orders without a task) and the presented order at this moment (the webhook's body).
    `rendered`: `order.bcp_json` was written with the row (placement renders it into the order's INSERT), so
    nothing is re-read or rewritten."""
    fresh = None if rendered else order_for_bcp(order.public_id)
    if fresh is not None:
        # The snapshot's `updated_at`: taken under the order's lock, so each change's is later than the last one's.
        fresh.bcp_json_at = order.bcp_json_at = timezone.now()
        order.bcp_json = order_bcp_json(fresh)
        Order.objects.filter(pk=order.pk).update(bcp_json=order.bcp_json, bcp_json_at=order.bcp_json_at)
    if _fold_into_earlier(order, event):
        return
    message = changed_outbox_row(order, event)
    message.save()
    outbox_enqueue(message)


def _fold_into_earlier(order: Order, event: str) -> bool:
    """One webhook per committed change of the order: a second `notify_changed` of the same order in the same
    transaction (a cancel that also asks for the refund: `refund_requested`, then `canceled`; an order placed and
    changed at once) does not write a row of its own but rewrites the pending row of the first to carry the order
    as it is now, and every event named in the transaction in `events`, in order; `event` becomes the last one
    (the last that a platform sees, `fiscal_…` steps being invisible to most), so a receiver keyed on the event
    name reads `events` (orders/signals.py) — except a placement's, which stays `placed`: its task also sends the
    "Pedido recebido" e-mail and asks for the NF-e. False when there is no such row (then the caller writes one)."""
    order_id = order.public_id
    for earlier in outbox_pending(ORDER_CHANGED):
        payload = earlier.payload
        if payload.get("order_id") != order_id:
            continue
        events = list(payload.get("events") or [payload.get("event", "")])
        if event not in events:
            events.append(event)
        shown = [name for name in events if not name.startswith("fiscal_")]
        last = PLACED if payload.get("event") == PLACED else (shown or events)[-1]
        payload = {**payload, "event": last, "events": events, "snapshot": order.bcp_json}
        # Still pending (nobody else sees it before this transaction commits); gone only if a savepoint that wrote
        # it was rolled back without its send, which Django does not do: then the caller writes a new row.
        if OutboxMessage.objects.filter(pk=earlier.pk).update(payload=payload):
            earlier.payload = payload
            return True
    return False


def changed_outbox_row(order: Order, event: str) -> OutboxMessage:
    """`notify_changed`'s outbox row for `order.bcp_json` as it is, not written yet (the placement inserts it
    with the order in one statement, then `outbox_enqueue`s it)."""
    return outbox_row(
        kind=ORDER_CHANGED,
        key=f"order_changed:{uuid.uuid4().hex}",  # random: nothing to look up first
        payload={
            "order_id": order.public_id,
            "event": event,
            "platform_id": order.platform_id or "",
            "snapshot": order.bcp_json,
        },
    )
