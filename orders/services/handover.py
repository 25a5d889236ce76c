"""Handing goods over: store pickup (ready → picked up) and correcting a shipment's tracking code."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from orders.errors import OrderError
from orders.labels import PICKED_UP_NOTE, READY_FOR_PICKUP_NOTE
from orders.models import EmailKind, FulfillmentEvent, FulfillmentEventType, Order, OrderStatus
from orders.services._common import (
    lock_order,
    notify_changed,
    refuse_if_canceled,
    schedule_email,
    timeline,
)
from orders.services.fulfillment import clean_tracking, fulfillment_event_create, order_mark_delivered
from orders.summary import current_tracking

READY_FOR_PICKUP = FulfillmentEventType.READY_FOR_PICKUP  # BCP §7 event types are open strings


def pickup_ready_event(order: Order) -> FulfillmentEvent | None:
    return order.fulfillment_events.filter(type=READY_FOR_PICKUP).order_by("-occurred_at", "-id").first()


def _refuse_unless_pickup(order: Order) -> None:
    if order.fulfillment_method != "pickup":
        raise OrderError(
            "order_id", _("O pedido #%(number)s não é de retirada."), code="not_pickup", number=order.number
        )


@transaction.atomic
def order_pickup_ready(*, order_id: str, description: str = "", actor: str = "") -> FulfillmentEvent:
    """The order is packed and waiting at the counter: an event and an e-mail to the buyer (once)."""
    order = lock_order(order_id)
    refuse_if_canceled(order)
    _refuse_unless_pickup(order)
    if order.payment_status == "pending":
        raise OrderError(
            "order_id", _("O pedido #%(number)s ainda não foi pago."), code="not_paid", number=order.number
        )
    if pickup_ready_event(order) is not None:
        raise OrderError(
            "order_id",
            _("O pedido #%(number)s já está pronto para retirada."),
            code="already_ready",
            number=order.number,
        )
    if order.status == OrderStatus.DELIVERED:
        raise OrderError(
            "order_id", _("O pedido #%(number)s já foi retirado."), code="already_delivered", number=order.number
        )
    event = fulfillment_event_create(
        order_id=order_id, type=READY_FOR_PICKUP, description=description or READY_FOR_PICKUP_NOTE, actor=actor
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
        raise OrderError(
            "order_id", _("O pedido #%(number)s ainda não está pronto."), code="not_ready", number=order.number
        )
    return order_mark_delivered(order_id=order_id, description=description or PICKED_UP_NOTE, actor=actor)


@transaction.atomic
def order_tracking_correct(
    *, order_id: str, event_id: str, tracking_number: str, carrier: str = "", tracking_url: str = "", actor: str = ""
) -> FulfillmentEvent:
    """Correct a shipment's tracking code with an event of its own (`tracking_corrected`, append-only).

    The shipment stays as it was recorded; the correction names it (`corrects`), carries the shipment's
    items and the right code, and is what the buyer, the admin and agents read as the shipment's tracking
    from now on (the buyer page shows only the latest). The buyer gets one e-mail per correction that says it
    is a correction. The carrier may be corrected with or without the code (empty: the current one stays).
    """
    order = lock_order(order_id)
    refuse_if_canceled(order)
    shipment = FulfillmentEvent.objects.filter(
        order=order, public_id=event_id, type=FulfillmentEventType.SHIPPED
    ).first()
    if shipment is None:
        raise OrderError("event_id", _("Envio não encontrado neste pedido."), code="not_found")
    current = current_tracking(shipment, list(shipment.corrections.all()))
    number, url, carrier = clean_tracking(tracking_number, tracking_url, carrier.strip() or current.carrier)
    if not number:
        raise OrderError("tracking_number", _("Informe o código de rastreio."), code="tracking_required")
    if (number, carrier, url) == (current.tracking_number, current.carrier, current.tracking_url):
        raise OrderError(
            "tracking_number", _("Este já é o código do envio, com a mesma transportadora."), code="unchanged"
        )
    correction = FulfillmentEvent.objects.create(
        order=order,
        type=FulfillmentEventType.TRACKING_CORRECTED,
        corrects=shipment,
        line_items=shipment.line_items,
        tracking_number=number,
        tracking_url=url,
        carrier=carrier,
        description=f"Código de rastreio corrigido (era {current.tracking_number or '—'}"
        f"{f' / {current.carrier}' if current.carrier and current.carrier != carrier else ''})"[:255],
        occurred_at=timezone.now(),
    )
    timeline(
        order,
        "tracking_corrected",
        f"Código de rastreio corrigido: {current.tracking_number or '—'} → {number}"
        + (f" ({carrier})" if carrier else ""),
        actor=actor,
        data={"event_id": correction.public_id, "shipment_id": shipment.public_id, "old": current.tracking_number,
              "new": number},
    )  # fmt: skip
    schedule_email(order, EmailKind.SHIPPED, ref=correction.public_id)
    notify_changed(order, "tracking_corrected")
    return correction
