"""Carrier tracking events → the order's fulfillment events, by themselves (no staff typing a code).

posted → shipped (with the tracking code; e-mail "Pedido enviado", order webhook), in transit, out for
delivery, failed attempt → the same BCP event types, delivered → delivered (closes the lines), returned →
returned_to_sender plus a pending return adjustment for staff. Each carrier event is applied once
(`LabelTrackingEvent` unique per label and event id): a webhook delivered twice or a poll that sees the same
history changes nothing. Events the order cannot take (shipped by hand already, nothing left) are recorded as
seen and move nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

import carriers
from carriers import CarrierRejected, CarrierUnavailable, LabelState, TrackingEvent
from kernel.http import Deadline
from orders.errors import OrderError
from orders.models import FulfillmentEvent
from orders.services import (
    clean_tracking,
    fulfillment_event_create,
    order_returned_to_sender_open,
    order_tracking_correct,
)
from orders.summary import current_tracking
from shop.freight.labels import ACTOR, _state
from shop.models import LabelTrackingEvent, ShippingLabel

logger = logging.getLogger(__name__)

EVENT_TYPES = {
    "posted": "shipped",
    "in_transit": "in_transit",
    "out_for_delivery": "out_for_delivery",
    "failed_attempt": "failed_attempt",
    "delivered": "delivered",
    "returned": "returned_to_sender",
}
POLL_EVERY = timedelta(minutes=30)
POLL_BATCH = 50


# Carrier events that mean the parcel left the shop: when the posting itself moved nothing (its code refused),
# the first of these that carries a good code ships the order before it applies.
AFTER_POSTING = {"in_transit", "out_for_delivery", "failed_attempt", "returned"}


def _valid_code(label: ShippingLabel, code: str) -> str:
    """The code as the order would store it, or "" when the order's rules refuse it (Correios check digit…)."""
    if not code:
        return ""
    try:
        return clean_tracking(code, "", label.carrier_name)[0]
    except OrderError:
        return ""


def _code_for(label: ShippingLabel, event: TrackingEvent) -> str:
    """The label's code, taken from the first event that brings a valid one. A bad code is refused for that event
    only (WARNING) and never kept on the label: kept, it made every later event of the label move nothing. A valid
    code other than the label's is the carrier's new code for the same parcel (a label generated again, an object
    swapped): it becomes the label's and the shipment's (`_code_changed`)."""
    kept = _valid_code(label, label.tracking_code)
    code = _valid_code(label, event.tracking_code)
    if kept and code in ("", kept):
        return kept
    if event.tracking_code and not code:
        logger.warning(
            "tracking code %r of carrier event %s on label %s refused (invalid); the event is applied without it",
            event.tracking_code, event.event_id, label.public_id,
        )  # fmt: skip
    if code:
        ShippingLabel.objects.filter(pk=label.pk).update(tracking_code=code)
        label.tracking_code = code
    if kept and code:
        _code_changed(label, kept, code)
    return code


def _shipment_of(label: ShippingLabel, code: str) -> FulfillmentEvent | None:
    """The order's shipment of the label's parcel: the one shipped with `code`, or corrected to it since (by staff's
    "Corrigir rastreio", or by the carrier's new code)."""
    return (
        FulfillmentEvent.objects.filter(order_id=label.order_id, type="shipped")
        .filter(Q(tracking_number=code) | Q(corrections__tracking_number=code))
        .order_by("occurred_at", "pk")
        .first()
    )


def _code_changed(label: ShippingLabel, old: str, new: str) -> None:
    """The carrier named `new` for the parcel the label had as `old`: the shipment is corrected to it as staff's
    "Corrigir rastreio" would (its own event, the timeline, the buyer's e-mail and page, the order webhook), so the
    buyer follows the code the carrier scans. Merchant gap (session 48): the new code was dropped and the buyer's
    page kept the old one. Not shipped yet: the posting ships with the new code. Left alone when staff's correction
    gave the parcel to another carrier, or the shipment already shows it."""
    shipment = _shipment_of(label, old)
    if shipment is None:
        return
    current = current_tracking(shipment, list(shipment.corrections.all()))
    carrier = label.carrier_name or ""
    if current.tracking_number == new or (current.carrier or carrier) != carrier:
        return
    try:
        with transaction.atomic():
            order_tracking_correct(
                order_id=label.order.public_id, event_id=shipment.public_id, tracking_number=new, carrier=carrier,
                actor=ACTOR,
            )  # fmt: skip
    except OrderError as error:  # a cancelled order: its shipment is not corrected any more
        logger.info("label %s: new code %s moved nothing: %s", label.public_id, new, error.message)


def _as_corrected(label: ShippingLabel, code: str) -> tuple[str, str]:
    """The code and carrier the order shows now for the label's shipment: staff's latest correction of it
    ("Corrigir rastreio") when there is one. QA walk: events after a correction came back with the label's old
    code, and the buyer's page showed the wrong code again under "Entregue"."""
    carrier = label.carrier_name or ""
    if not code:
        return code, carrier
    shipment = _shipment_of(label, code)
    if shipment is None:
        return code, carrier
    current = current_tracking(shipment, list(shipment.corrections.all()))
    return current.tracking_number or code, current.carrier or carrier


def _ship_first(label: ShippingLabel, event: TrackingEvent, code: str) -> None:
    """The parcel is on its way but the order was never shipped from this label (its posting came with a bad
    code): ship it now, as posted when this event happened. Nothing when shipped already (by hand, or before)."""
    order = label.order
    if not code or _shipment_of(label, code) is not None:
        return
    try:
        with transaction.atomic():
            fulfillment_event_create(
                order_id=order.public_id, type="shipped", tracking_number=code, carrier=label.carrier_name or "",
                occurred_at=event.occurred_at, actor=ACTOR,
            )  # fmt: skip
    except OrderError as error:
        logger.info("label %s: shipping before event %s moved nothing: %s", label.public_id, event.event_id,
                    error.message)  # fmt: skip


def _apply_one(label: ShippingLabel, event: TrackingEvent) -> str:
    """Inside the caller's transaction. The fulfillment event's id, "" when it moved nothing, None if seen."""
    try:
        with transaction.atomic():
            seen = LabelTrackingEvent.objects.create(
                label=label, event_id=event.event_id[:200], kind=event.kind, occurred_at=event.occurred_at,
                description=event.description[:255],
            )  # fmt: skip
    except IntegrityError:
        return "seen"
    kind = EVENT_TYPES.get(event.kind)
    if kind is None:
        return ""
    code = _code_for(label, event)
    if event.kind in AFTER_POSTING:
        _ship_first(label, event, code)
    shown_code, carrier = _as_corrected(label, code)
    try:
        with transaction.atomic():
            created = fulfillment_event_create(
                order_id=label.order.public_id, type=kind, tracking_number=shown_code,
                carrier=carrier, description=event.description, occurred_at=event.occurred_at,
                actor=ACTOR,
            )  # fmt: skip
    except OrderError as error:
        logger.info("tracking event %s on %s moved nothing: %s", event.event_id, label.public_id, error.message)
        return ""
    seen.fulfillment_event_id = created.public_id
    seen.save(update_fields=["fulfillment_event_id"])
    if event.kind == "delivered":
        ShippingLabel.objects.filter(pk=label.pk).update(finished_at=timezone.now())
    if event.kind == "returned":
        # Spent: no print, no cancel, and the order may have a new label to go again.
        ShippingLabel.objects.filter(pk=label.pk).update(
            status=ShippingLabel.Status.RETURNED, finished_at=timezone.now()
        )
        order_returned_to_sender_open(
            order_id=label.order.public_id,
            description=f"Objeto {shown_code} devolvido ao remetente"
            + (f": {event.description}" if event.description else ""),
            actor=ACTOR,
        )
    return created.public_id


def tracking_apply(*, label_id: str, events: Sequence[TrackingEvent]) -> list[str]:
    """Apply carrier events (oldest first) to the label's order; returns the fulfillment event ids created."""
    created: list[str] = []
    with transaction.atomic():
        label = ShippingLabel.objects.select_related("order").select_for_update(of=("self",)).get(public_id=label_id)
        for event in sorted(events, key=lambda e: e.occurred_at):
            result = _apply_one(label, event)
            if result and result != "seen":
                created.append(result)
    return created


def tracking_from_webhook(*, events: Sequence[TrackingEvent]) -> list[str]:
    """Events from a verified webhook, matched to labels by the carrier's id; unknown labels are ignored."""
    created: list[str] = []
    for remote_id in {e.remote_id for e in events}:
        label = ShippingLabel.objects.filter(remote_id=remote_id, status=ShippingLabel.Status.PURCHASED).first()
        if label is None:
            logger.info("tracking webhook for unknown label %s ignored", remote_id)
            continue
        created += tracking_apply(label_id=label.public_id, events=[e for e in events if e.remote_id == remote_id])
    return created


def _polled_state(label: ShippingLabel) -> LabelState | None:
    """What the Correios are asked about: the object the order shows now — staff's correction of the label's code
    ("Corrigir rastreio"), not the label's own (QA walk: the sweep kept asking about the wrong object). None when the
    correction named another carrier: the Correios know nothing of that parcel."""
    state = _state(label)
    code, carrier = _as_corrected(label, label.tracking_code)
    if code == label.tracking_code:
        return state
    if carrier != (label.carrier_name or ""):
        return None
    return replace(state, tracking_code=code)


def tracking_poll_due(*, now=None, limit: int = POLL_BATCH) -> int:  # type: ignore[no-untyped-def]
    """Beat: ask the Correios for the history of each bought, unfinished label not polled for `POLL_EVERY`.
    One label's carrier call at a time, no transaction open meanwhile. Returns the events created."""
    now = now or timezone.now()
    due = list(
        ShippingLabel.objects.filter(carrier="correios", status=ShippingLabel.Status.PURCHASED, finished_at=None)
        .filter(Q(last_polled_at__isnull=True) | Q(last_polled_at__lt=now - POLL_EVERY))
        .exclude(tracking_code="")
        .order_by("last_polled_at", "id")[:limit]
    )
    created = 0
    for label in due:
        ShippingLabel.objects.filter(pk=label.pk).update(last_polled_at=now)
        state = _polled_state(label)
        if state is None:
            continue
        try:
            events = carriers.get_carrier(label.carrier).tracking(
                state=state, deadline=Deadline(settings.CARRIER_LABEL_DEADLINE_MS / 1000)
            )
        except (CarrierUnavailable, CarrierRejected) as exc:
            logger.warning("tracking poll of %s failed: %s", label.public_id, exc)
            continue
        created += len(tracking_apply(label_id=label.public_id, events=events))
    return created
