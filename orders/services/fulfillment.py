"""Fulfillment: append-only events (ship, deliver, …); the expectations live in `expectations.py`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from urllib.parse import quote, urlsplit

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from orders.errors import OrderError
from orders.labels import units_text
from orders.models import (
    EmailDelivery,
    EmailKind,
    FulfillmentEvent,
    FulfillmentEventType,
    FulfillmentMethod,
    OrderLine,
)
from orders.selectors import shipment_of_step
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
    returned_to_sender_close,
    schedule_email,
    staff_words,
    timeline,
)
from orders.services.disputes import refuse_if_disputed
from orders.types import LineQuantity

CORREIOS = "Correios"
CORREIOS_TRACKING_URL = "https://rastreamento.correios.com.br/app/index.php?objeto={code}"
TRACKING_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{2,63}$")
CORREIOS_CODE_RE = re.compile(r"^[A-Z]{2}\d{9}[A-Z]{2}$")

# Which quantities each event type may name, as (line) -> maximum. "Delivered" is what was shipped and not
# delivered yet when the order ships by carrier; pickup and digital orders hand everything over at once.
_LIMITS = {
    FulfillmentEventType.SHIPPED: lambda line: line.quantity_total - line.quantity_shipped,
    FulfillmentEventType.DELIVERED: lambda line: line.quantity_total - line.quantity_delivered,
    FulfillmentEventType.RETURNED_TO_SENDER: lambda line: line.quantity_shipped - line.quantity_delivered,
    FulfillmentEventType.UNDELIVERABLE: lambda line: line.quantity_shipped - line.quantity_delivered,
    FulfillmentEventType.IN_TRANSIT: lambda line: line.quantity_shipped - line.quantity_delivered,
    FulfillmentEventType.OUT_FOR_DELIVERY: lambda line: line.quantity_shipped - line.quantity_delivered,
    FulfillmentEventType.FAILED_ATTEMPT: lambda line: line.quantity_shipped - line.quantity_delivered,
}
_ON_ITS_WAY = _LIMITS[FulfillmentEventType.IN_TRANSIT]
# What hands goods over, refused while the payer disputes the Pix (MED); a delivery is a handover unless a
# carrier already took the goods (then it only confirms what left before the dispute).
HELD_WHILE_DISPUTED = (FulfillmentEventType.SHIPPED, FulfillmentEventType.READY_FOR_PICKUP)
# Carrier steps the buyer hears about by e-mail (not every scan: "em trânsito" sends nothing), once per shipment each.
STEP_EMAILS = {
    FulfillmentEventType.OUT_FOR_DELIVERY: EmailKind.OUT_FOR_DELIVERY,
    FulfillmentEventType.FAILED_ATTEMPT: EmailKind.DELIVERY_FAILED,
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


def _limit(kind: str, method: str, *, tracked: bool = False):
    """The most an event of `kind` may name per line, on an order fulfilled by `method`. A carrier delivers
    only what was shipped — unless the delivery event carries its own tracking code: the carrier's
    confirmation that it left and arrived (the seed's order has just that one event), which ships it too."""
    if kind == FulfillmentEventType.DELIVERED and method == "shipping" and not tracked:
        return _ON_ITS_WAY
    return _LIMITS.get(kind, lambda line: line.quantity_total)


def _too_many(kind: str, method: str, quantity: int, allowed: int) -> Promise:
    """The refusal of `quantity` units when `allowed` may be named: each count takes its own plural."""
    if kind == FulfillmentEventType.SHIPPED:
        return ngettext_lazy(
            "Não é possível enviar %(quantity)s unidade de %(sku)s: no máximo %(allowed)s.",
            "Não é possível enviar %(quantity)s unidades de %(sku)s: no máximo %(allowed)s.",
            quantity,
        )
    if kind == FulfillmentEventType.DELIVERED and method == "shipping":
        asked = ngettext_lazy(
            "Não é possível marcar como entregue %(quantity)s unidade de %(sku)s: ",
            "Não é possível marcar como entregue %(quantity)s unidades de %(sku)s: ",
            quantity,
        )
        on_its_way = (
            ngettext_lazy(
                "só %(allowed)s foi enviada e ainda não entregue.",
                "só %(allowed)s foram enviadas e ainda não entregues.",
                allowed,
            )
            if allowed > 0
            else _("nenhuma unidade enviada está à espera de entrega.")
        )
        return format_lazy("{}{}", asked, on_its_way)
    return ngettext_lazy(
        "Não é possível registrar “%(kind)s” para %(quantity)s unidade de %(sku)s: no máximo %(allowed)s.",
        "Não é possível registrar “%(kind)s” para %(quantity)s unidades de %(sku)s: no máximo %(allowed)s.",
        quantity,
    )


def _default_lines(kind: str, lines: dict[str, OrderLine], method: str, *, tracked: bool) -> list[LineQuantity]:
    """Without explicit lines, an event covers everything it may still cover (e.g. ship all that is left)."""
    limit = _limit(kind, method, tracked=tracked)
    if kind == FulfillmentEventType.DELIVERED and any(
        line.quantity_shipped > line.quantity_delivered for line in lines.values()
    ):
        # Something is on its way: "delivered" means what was shipped, not what is still in the shop.
        limit = _ON_ITS_WAY
    return [LineQuantity(line_id, limit(line)) for line_id, line in lines.items() if limit(line) > 0]


def clean_tracking(tracking_number: str, tracking_url: str, carrier: str) -> tuple[str, str, str]:
    """(code, url, carrier) as stored. A Correios code (the carrier named, or the code's S10 shape with no
    carrier) must carry its check digit: a wrong code would e-mail the buyer a broken tracking link."""
    number = clean_text(tracking_number, field="tracking_number", max_length=64).replace(" ", "").upper()
    if number and not TRACKING_RE.match(number):
        raise OrderError(
            "tracking_number", _("Use só letras, números e hífens (ex.: BR123456785BR)."), code="bad_tracking"
        )
    url = clean_text(tracking_url, field="tracking_url", max_length=500)
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise OrderError(
                "tracking_url", _("Informe um link completo, começando com https://."), code="bad_tracking_url"
            )
    carrier = clean_text(carrier, field="carrier", max_length=80)
    if number and not carrier and CORREIOS_CODE_RE.match(number):
        carrier = CORREIOS
    if number and carrier.lower() == CORREIOS.lower():
        if not correios_code_valid(number):
            raise OrderError(
                "tracking_number",
                _("Código dos Correios inválido: 2 letras, 9 números e “BR” (ex.: BR123456785BR); confira o dígito."),
                code="bad_tracking",
            )
        carrier = CORREIOS
        url = url or correios_tracking_url(number)
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
    if kind in HELD_WHILE_DISPUTED or (
        kind == FulfillmentEventType.DELIVERED and order.fulfillment_method != FulfillmentMethod.SHIPPING
    ):
        refuse_if_disputed(order)
    known = lock_lines(order)
    if kind == FulfillmentEventType.SHIPPED and not carrier.strip() and not tracking_number.strip():
        carrier = order.fulfillment_carrier  # no code, no carrier named: the one of the method the buyer chose
    number, url, carrier = clean_tracking(tracking_number, tracking_url, carrier)
    tracked = kind == FulfillmentEventType.DELIVERED and bool(number)
    requested = list(lines) if lines else _default_lines(kind, known, order.fulfillment_method, tracked=tracked)
    if not requested:
        message = (
            _("Nada foi enviado ainda no pedido #%(number)s: registre o envio antes da entrega.")
            if kind == FulfillmentEventType.DELIVERED and order.fulfillment_method == "shipping"
            else _("Não há itens para isso no pedido #%(number)s.")
        )
        raise OrderError("lines", message, code="nothing_left", number=order.number)
    pairs = clean_line_quantities(requested, known)
    limit = _limit(kind, order.fulfillment_method, tracked=tracked)
    for index, (line, quantity) in enumerate(pairs):
        allowed = max(limit(line), 0)
        if quantity > allowed:
            raise OrderError(
                f"lines[{index}].quantity",
                _too_many(kind, order.fulfillment_method, quantity, allowed),
                code="quantity_exceeded",
                kind=FulfillmentEventType(kind).label if kind in FulfillmentEventType.values else kind,
                quantity=quantity,
                sku=line.sku,
                allowed=allowed,
            )
    # Correios always gives a tracking code; the store's own courier (motoboy, entrega local) has none.
    if kind == FulfillmentEventType.SHIPPED and not number and carrier.lower() == CORREIOS.lower():
        raise OrderError(
            "tracking_number",
            _("Informe o código de rastreio: todo envio pelos Correios tem um."),
            code="tracking_required",
        )
    if occurred_at is not None and timezone.is_naive(occurred_at):
        raise OrderError("occurred_at", _("Informe a data com fuso horário."), code="naive_datetime")
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
            if tracked:  # the carrier's confirmation: what it delivered left the shop too
                line.quantity_shipped = max(line.quantity_shipped, line.quantity_delivered)
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
    summary = units_text((quantity, line.title) for line, quantity in pairs)  # names staff read, not SKUs
    timeline(
        order,
        f"fulfillment_{kind}",
        f"{staff_words(FulfillmentEventType(kind).label) if kind in FulfillmentEventType.values else kind}: {summary}"
        + (f" — {number}" if number else ""),
        actor=actor,
        data={"event_id": event.public_id, "tracking_number": number},
    )
    if kind == FulfillmentEventType.SHIPPED:
        returned_to_sender_close(order, why=f"pedido enviado de novo ({summary})", actor=actor)
        schedule_email(order, EmailKind.SHIPPED, ref=event.public_id)
    elif kind == FulfillmentEventType.DELIVERED:
        schedule_email(order, EmailKind.DELIVERED, ref=event.public_id)
        if not any(line.quantity_shipped > line.quantity_delivered for line in known.values()):
            # Nothing on its way any more: a carrier step's e-mail not sent yet is stale (a late poll brought "saiu
            # para entrega" and "entregue" together); the delivered e-mail says it all. One not claimed by a sender.
            EmailDelivery.objects.filter(
                Q(claimed_until__isnull=True) | Q(claimed_until__lt=timezone.now()),
                order=order, kind__in=STEP_EMAILS.values(), sent_at__isnull=True,
            ).delete()  # fmt: skip
    elif kind in STEP_EMAILS:
        shipment = shipment_of_step(event)
        if shipment is not None:  # keyed by the shipment: a second "saiu para entrega" of the parcel sends nothing
            schedule_email(order, STEP_EMAILS[kind], ref=shipment.public_id)
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
