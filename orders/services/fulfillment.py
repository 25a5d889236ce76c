"""Fulfillment: append-only events (ship, deliver, …) and the buyer-facing expectations (split/merge/update)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from urllib.parse import quote, urlsplit

from django.db import transaction
from django.utils import timezone

from orders.errors import OrderError
from orders.models import (
    EmailKind,
    FulfillmentEvent,
    FulfillmentEventType,
    FulfillmentExpectation,
    OrderLine,
)
from orders.services._common import (
    clean_line_quantities,
    clean_text,
    clean_type,
    line_items_json,
    lock_lines,
    lock_order,
    notify_changed,
    refresh_line,
    refresh_order_status,
    refuse_if_canceled,
    schedule_email,
    staff_words,
    timeline,
)
from orders.types import LineQuantity

CORREIOS = "Correios"
CORREIOS_TRACKING_URL = "https://rastreamento.correios.com.br/app/index.php?objeto={code}"
TRACKING_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{2,63}$")
CORREIOS_CODE_RE = re.compile(r"^[A-Z]{2}\d{9}[A-Z]{2}$")

# Which quantities each event type may name, as (line) -> maximum.
_LIMITS = {
    FulfillmentEventType.SHIPPED: lambda line: line.quantity_total - line.quantity_shipped,
    FulfillmentEventType.DELIVERED: lambda line: line.quantity_total - line.quantity_delivered,
    FulfillmentEventType.RETURNED_TO_SENDER: lambda line: line.quantity_shipped - line.quantity_delivered,
    FulfillmentEventType.UNDELIVERABLE: lambda line: line.quantity_shipped - line.quantity_delivered,
    FulfillmentEventType.IN_TRANSIT: lambda line: line.quantity_shipped - line.quantity_delivered,
    FulfillmentEventType.FAILED_ATTEMPT: lambda line: line.quantity_shipped - line.quantity_delivered,
}
_VERB = {
    FulfillmentEventType.SHIPPED: "ship",
    FulfillmentEventType.DELIVERED: "deliver",
}


def correios_code_valid(code: str) -> bool:
    """UPU S10 code as the Correios print it (AA123456785BR): the 9th digit checks the first eight."""
    if not CORREIOS_CODE_RE.match(code):
        return False
    digits = [int(d) for d in code[2:10]]
    rest = sum(d * w for d, w in zip(digits, (8, 6, 4, 2, 3, 5, 9, 7), strict=True)) % 11
    check = 5 if rest == 0 else 0 if rest == 1 else 11 - rest
    return check == int(code[10])


def correios_tracking_url(code: str) -> str:
    return CORREIOS_TRACKING_URL.format(code=quote(code, safe=""))


def _default_lines(kind: str, lines: dict[str, OrderLine]) -> list[LineQuantity]:
    """Without explicit lines, an event covers everything it may still cover (e.g. ship all that is left)."""
    limit = _LIMITS.get(kind, lambda line: line.quantity_total)
    if kind == FulfillmentEventType.DELIVERED and any(
        line.quantity_shipped > line.quantity_delivered for line in lines.values()
    ):
        # Something is on its way: "delivered" means what was shipped, not what is still in the shop.
        limit = _LIMITS[FulfillmentEventType.IN_TRANSIT]
    return [LineQuantity(line_id, limit(line)) for line_id, line in lines.items() if limit(line) > 0]


def _clean_tracking(tracking_number: str, tracking_url: str, carrier: str) -> tuple[str, str, str]:
    number = clean_text(tracking_number, field="tracking_number", max_length=64).replace(" ", "").upper()
    if number and not TRACKING_RE.match(number):
        raise OrderError("tracking_number", "use letters, digits and dashes only (e.g. BR123456784BR)")
    url = clean_text(tracking_url, field="tracking_url", max_length=500)
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise OrderError("tracking_url", "must be an absolute http(s) URL")
    carrier = clean_text(carrier, field="carrier", max_length=80)
    if number and not carrier and CORREIOS_CODE_RE.match(number):
        carrier = CORREIOS
    if number and not url and carrier.lower() == CORREIOS.lower():
        url = correios_tracking_url(number)
    return number, url, carrier


@transaction.atomic
def fulfillment_event_create(
    *,
    order_id: str,
    type: str,  # the BCP field name
    lines: Sequence[LineQuantity] | None = None,
    tracking_number: str = "",
    tracking_url: str = "",
    carrier: str = "",
    description: str = "",
    occurred_at: datetime | None = None,
    actor: str = "",
) -> FulfillmentEvent:
    """Append a fulfillment event; ship/deliver update the lines' quantities and the order status."""
    kind = clean_type(type)
    order = lock_order(order_id)
    refuse_if_canceled(order)
    known = lock_lines(order)
    requested = list(lines) if lines else _default_lines(kind, known)
    if not requested:
        raise OrderError("lines", f"nothing left to mark as {kind} on order #{order.number}")
    pairs = clean_line_quantities(requested, known)
    limit = _LIMITS.get(kind, lambda line: line.quantity_total)
    for index, (line, quantity) in enumerate(pairs):
        allowed = limit(line)
        if quantity > allowed:
            verb = _VERB.get(kind, f"mark as {kind}")
            raise OrderError(
                f"lines[{index}].quantity",
                f"cannot {verb} {quantity} of {line.public_id} ({line.sku}): only {max(allowed, 0)} possible",
                code="quantity_exceeded",
            )
    number, url, carrier = _clean_tracking(tracking_number, tracking_url, carrier)
    if kind == FulfillmentEventType.SHIPPED and order.fulfillment_method == "shipping" and not number:
        raise OrderError("tracking_number", "a shipment needs a tracking code")
    if occurred_at is not None and timezone.is_naive(occurred_at):
        raise OrderError("occurred_at", "must carry a time zone")
    event = FulfillmentEvent.objects.create(
        order=order,
        type=kind,
        line_items=line_items_json(pairs),
        tracking_number=number,
        tracking_url=url,
        carrier=carrier,
        description=clean_text(description, field="description", max_length=255),
        occurred_at=occurred_at or timezone.now(),
    )
    touched: list[OrderLine] = []
    for line, quantity in pairs:
        if kind == FulfillmentEventType.SHIPPED:
            line.quantity_shipped += quantity
        elif kind == FulfillmentEventType.DELIVERED:
            line.quantity_delivered += quantity
        elif kind == FulfillmentEventType.RETURNED_TO_SENDER:
            line.quantity_shipped -= quantity  # back in the shop: may be shipped again
        else:
            continue
        refresh_line(line)
        touched.append(line)
    if touched:
        OrderLine.objects.bulk_update(touched, ["quantity_shipped", "quantity_delivered", "quantity_fulfilled"])
    refresh_order_status(order, known.values())
    order.save(update_fields=["status", "updated_at"])
    summary = ", ".join(f"{quantity}× {line.sku}" for line, quantity in pairs)
    timeline(
        order,
        f"fulfillment_{kind}",
        f"{staff_words(FulfillmentEventType(kind).label) if kind in FulfillmentEventType.values else kind}: {summary}"
        + (f" — {number}" if number else ""),
        actor=actor,
        data={"event_id": event.public_id, "tracking_number": number},
    )
    if kind == FulfillmentEventType.SHIPPED:
        schedule_email(order, EmailKind.SHIPPED, ref=event.public_id)
    elif kind == FulfillmentEventType.DELIVERED:
        schedule_email(order, EmailKind.DELIVERED, ref=event.public_id)
    notify_changed(order, kind)
    return event


def order_ship(
    *,
    order_id: str,
    tracking_number: str,
    lines: Sequence[LineQuantity] | None = None,
    carrier: str = "",
    tracking_url: str = "",
    description: str = "",
    actor: str = "",
) -> FulfillmentEvent:
    """Register a shipment (type `shipped`); without `lines` ships everything not yet shipped."""
    return fulfillment_event_create(
        order_id=order_id,
        type=FulfillmentEventType.SHIPPED,
        lines=lines,
        tracking_number=tracking_number,
        tracking_url=tracking_url,
        carrier=carrier,
        description=description,
        actor=actor,
    )


def order_mark_delivered(
    *, order_id: str, lines: Sequence[LineQuantity] | None = None, description: str = "", actor: str = ""
) -> FulfillmentEvent:
    """Mark delivered; without `lines`, everything not yet delivered."""
    return fulfillment_event_create(
        order_id=order_id, type=FulfillmentEventType.DELIVERED, lines=lines, description=description, actor=actor
    )


# --- Expectations -------------------------------------------------------------------------------------


def _lock_expectation(order_id: str, expectation_id: str, *, field: str = "expectation_id"):
    order = lock_order(order_id)
    refuse_if_canceled(order)
    expectation = (
        FulfillmentExpectation.objects.select_for_update().filter(order=order, public_id=expectation_id).first()
    )
    if expectation is None:
        raise OrderError(field, "unknown expectation for this order", code="not_found")
    return order, expectation


def _local_date(iso: str) -> str:
    """ "2026-12-10T15:00:00Z" → "10/12/2026 12:00" in the shop's time zone (timeline text for staff)."""
    return timezone.localtime(datetime.fromisoformat(iso.replace("Z", "+00:00"))).strftime("%d/%m/%Y %H:%M")


def _clean_fulfillable_on(value: str | None) -> str | None:
    if value is None:
        return None
    value = clean_text(value, field="fulfillable_on", max_length=40)
    if value in ("", "now"):
        return value or "now"
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise OrderError("fulfillable_on", "must be 'now' or an ISO 8601 timestamp with time zone") from None
    if timezone.is_naive(parsed):
        raise OrderError("fulfillable_on", "must carry a time zone")
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@transaction.atomic
def expectation_update(
    *,
    order_id: str,
    expectation_id: str,
    description: str | None = None,
    fulfillable_on: str | None = None,
    actor: str = "",
) -> FulfillmentExpectation:
    order, expectation = _lock_expectation(order_id, expectation_id)
    if description is not None:
        expectation.description = clean_text(description, field="description", max_length=255)
    cleaned = _clean_fulfillable_on(fulfillable_on)
    if cleaned is not None:
        expectation.fulfillable_on = cleaned
    expectation.save()
    timeline(
        order,
        "expectation_changed",
        f"{expectation.description or 'Previsão'} — "
        + (
            "disponível agora"
            if expectation.fulfillable_on in ("", "now")
            else f"disponível em {_local_date(expectation.fulfillable_on)}"
        ),
        actor=actor,
        data={"expectation_id": expectation.public_id},
    )
    notify_changed(order, "expectation_changed")
    return expectation


@transaction.atomic
def expectation_split(
    *,
    order_id: str,
    expectation_id: str,
    lines: Sequence[LineQuantity],
    description: str | None = None,
    fulfillable_on: str | None = None,
    actor: str = "",
) -> FulfillmentExpectation:
    """Move the given quantities out of an expectation into a new one (e.g. a back-ordered item)."""
    order, source = _lock_expectation(order_id, expectation_id)
    held = {item["id"]: int(item["quantity"]) for item in source.line_items}
    if not lines:
        raise OrderError("lines", "name the line quantities to move")
    moved: list[dict[str, object]] = []
    for index, item in enumerate(lines):
        quantity = item.quantity
        if item.line_id not in held:
            raise OrderError(f"lines[{index}].id", f"line item {item.line_id!r} is not in {source.public_id}")
        if isinstance(quantity, bool) or not isinstance(quantity, int) or not 1 <= quantity <= held[item.line_id]:
            raise OrderError(f"lines[{index}].quantity", f"must be between 1 and {held[item.line_id]}")
        held[item.line_id] -= quantity
        moved.append({"id": item.line_id, "quantity": quantity})
    remaining = [{"id": line_id, "quantity": quantity} for line_id, quantity in held.items() if quantity > 0]
    if not remaining:
        raise OrderError("lines", "a split must leave something in the original expectation")
    source.line_items = remaining
    source.save()
    split = FulfillmentExpectation.objects.create(
        order=order,
        position=source.position + 1,
        method_type=source.method_type,
        destination=source.destination,
        description=source.description
        if description is None
        else clean_text(description, field="description", max_length=255),
        fulfillable_on=_clean_fulfillable_on(fulfillable_on) or source.fulfillable_on,
        line_items=moved,
    )
    timeline(
        order,
        "expectation_split",
        f"Previsão dividida: {split.description or source.description}",
        actor=actor,
        data={"from": source.public_id, "to": split.public_id},
    )
    notify_changed(order, "expectation_changed")
    return split


@transaction.atomic
def expectation_merge(*, order_id: str, expectation_ids: Sequence[str], actor: str = "") -> FulfillmentExpectation:
    """Merge expectations (same method and destination) into the first one; the others disappear."""
    ids = list(expectation_ids)
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise OrderError("expectation_ids", "name at least two different expectations")
    order = lock_order(order_id)
    refuse_if_canceled(order)
    found = {
        exp.public_id: exp
        for exp in FulfillmentExpectation.objects.select_for_update().filter(order=order, public_id__in=ids)
    }
    for index, exp_id in enumerate(ids):
        if exp_id not in found:
            raise OrderError(f"expectation_ids[{index}]", "unknown expectation for this order", code="not_found")
    target = found[ids[0]]
    merged: dict[str, int] = {item["id"]: int(item["quantity"]) for item in target.line_items}
    for index, exp_id in enumerate(ids[1:], start=1):
        other = found[exp_id]
        if other.method_type != target.method_type or other.destination != target.destination:
            raise OrderError(f"expectation_ids[{index}]", "only expectations with the same method and destination")
        for item in other.line_items:
            merged[item["id"]] = merged.get(item["id"], 0) + int(item["quantity"])
    target.line_items = [{"id": line_id, "quantity": quantity} for line_id, quantity in merged.items()]
    target.save()
    FulfillmentExpectation.objects.filter(pk__in=[found[exp_id].pk for exp_id in ids[1:]]).delete()
    timeline(
        order,
        "expectation_merged",
        f"Previsões unidas: {target.description}".rstrip(": "),
        actor=actor,
        data={"into": target.public_id, "merged": ids[1:]},
    )
    notify_changed(order, "expectation_changed")
    return target
