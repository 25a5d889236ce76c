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
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

import carriers
from carriers import CarrierRejected, CarrierUnavailable, TrackingEvent
from kernel.http import Deadline
from orders.errors import OrderError
from orders.services import fulfillment_event_create, order_returned_to_sender_open
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
    code = label.tracking_code or event.tracking_code
    if code and not label.tracking_code:
        ShippingLabel.objects.filter(pk=label.pk).update(tracking_code=code)
        label.tracking_code = code
    try:
        with transaction.atomic():
            created = fulfillment_event_create(
                order_id=label.order.public_id, type=kind, tracking_number=code,
                carrier=label.carrier_name or "", description=event.description, occurred_at=event.occurred_at,
                actor=ACTOR,
            )  # fmt: skip
    except OrderError as error:
        logger.info("tracking event %s on %s moved nothing: %s", event.event_id, label.public_id, error.message)
        return ""
    seen.fulfillment_event_id = created.public_id
    seen.save(update_fields=["fulfillment_event_id"])
    if event.kind in ("delivered", "returned"):
        ShippingLabel.objects.filter(pk=label.pk).update(finished_at=timezone.now())
    if event.kind == "returned":
        order_returned_to_sender_open(
            order_id=label.order.public_id,
            description=f"Objeto {code} devolvido ao remetente"
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
        try:
            events = carriers.get_carrier(label.carrier).tracking(
                state=_state(label), deadline=Deadline(settings.CARRIER_LABEL_DEADLINE_MS / 1000)
            )
        except (CarrierUnavailable, CarrierRejected) as exc:
            logger.warning("tracking poll of %s failed: %s", label.public_id, exc)
            continue
        created += len(tracking_apply(label_id=label.public_id, events=events))
    return created
