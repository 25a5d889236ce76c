"""Handing goods over: store pickup (ready → picked up) and correcting a shipment's tracking code."""

from __future__ import annotations

from django.db import transaction

from orders.errors import OrderError
from orders.models import EmailKind, FulfillmentEvent, FulfillmentEventType, Order, OrderStatus
from orders.services._common import (
    lock_order,
    notify_changed,
    refuse_if_canceled,
    schedule_email,
    timeline,
)
from orders.services.fulfillment import (
    CORREIOS,
    _clean_tracking,
    correios_code_valid,
    fulfillment_event_create,
    order_mark_delivered,
)

READY_FOR_PICKUP = "ready_for_pickup"  # BCP §7 event types are open strings


def pickup_ready_event(order: Order) -> FulfillmentEvent | None:
    return order.fulfillment_events.filter(type=READY_FOR_PICKUP).order_by("-occurred_at", "-id").first()


def _refuse_unless_pickup(order: Order) -> None:
    if order.fulfillment_method != "pickup":
        raise OrderError("order_id", f"order #{order.number} is not a pickup order", code="not_pickup")


@transaction.atomic
def order_pickup_ready(*, order_id: str, description: str = "", actor: str = "") -> FulfillmentEvent:
    """The order is packed and waiting at the counter: an event and an e-mail to the buyer (once)."""
    order = lock_order(order_id)
    refuse_if_canceled(order)
    _refuse_unless_pickup(order)
    if order.payment_status == "pending":
        raise OrderError("order_id", f"order #{order.number} is not paid yet", code="not_paid")
    if pickup_ready_event(order) is not None:
        raise OrderError("order_id", f"order #{order.number} is already ready for pickup", code="already_ready")
    if order.status == OrderStatus.DELIVERED:
        raise OrderError("order_id", f"order #{order.number} was already picked up", code="already_delivered")
    event = fulfillment_event_create(
        order_id=order_id, type=READY_FOR_PICKUP, description=description or "Pronto para retirada", actor=actor
    )
    schedule_email(order, EmailKind.READY_FOR_PICKUP, ref=event.public_id)
    return event


@transaction.atomic
def order_pickup_done(*, order_id: str, description: str = "", actor: str = "") -> FulfillmentEvent:
    """The buyer took the goods: everything ready is delivered (e-mail "entregue" to the buyer)."""
    order = lock_order(order_id)
    refuse_if_canceled(order)
    _refuse_unless_pickup(order)
    if pickup_ready_event(order) is None:
        raise OrderError("order_id", f"order #{order.number} is not ready for pickup yet", code="not_ready")
    return order_mark_delivered(order_id=order_id, description=description or "Retirado na loja", actor=actor)


@transaction.atomic
def order_tracking_correct(
    *, order_id: str, event_id: str, tracking_number: str, carrier: str = "", actor: str = ""
) -> FulfillmentEvent:
    """Replace a shipment's wrong tracking code; the buyer gets the shipped e-mail again, once per new code.

    The shipment event is corrected in place (what the buyer and agents read is the right code), and
    the timeline keeps the old and the new code: the correction itself is the append-only record.
    """
    order = lock_order(order_id)
    refuse_if_canceled(order)
    event = (
        FulfillmentEvent.objects.select_for_update()
        .filter(order=order, public_id=event_id, type=FulfillmentEventType.SHIPPED)
        .first()
    )
    if event is None:
        raise OrderError("event_id", "unknown shipment for this order", code="not_found")
    number, url, carrier = _clean_tracking(tracking_number, "", carrier or event.carrier)
    if not number:
        raise OrderError("tracking_number", "a shipment needs a tracking code")
    if carrier.lower() == CORREIOS.lower() and not correios_code_valid(number):
        raise OrderError("tracking_number", "not a valid Correios code (e.g. BR123456785BR)", code="bad_tracking")
    if number == event.tracking_number:
        raise OrderError("tracking_number", "this is already the shipment's code", code="unchanged")
    old = event.tracking_number
    event.tracking_number, event.tracking_url, event.carrier = number, url, carrier
    event._allow_update = True  # a correction of a typo, recorded in the timeline below
    event.save(update_fields=["tracking_number", "tracking_url", "carrier"])
    timeline(
        order,
        "tracking_corrected",
        f"Código de rastreio corrigido: {old or '—'} → {number}",
        actor=actor,
        data={"event_id": event.public_id, "old": old, "new": number},
    )
    # One e-mail per corrected code: a double submit finds the same (order, kind, ref) row.
    schedule_email(order, EmailKind.SHIPPED, ref=f"{event.public_id}:{number}"[:64])
    notify_changed(order, "tracking_corrected")
    return event
