"""Domain → BCP JSON: checkouts (from the engine's `CheckoutView`) and orders (`orders.selectors`).

Presenters only map names and apply negotiation (which capabilities, extensions and payment
handlers appear); every business decision was already taken by the checkout engine or orders.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import segno
from django.conf import settings
from django.utils import timezone

from bcp_app.protocol.names import (
    AP2_MANDATE,
    BOLETO_HANDLER,
    BUYER_CONSENT,
    CHECKOUT,
    DISCOUNT,
    FISCAL_DOCUMENT,
    FULFILLMENT,
    ORDER,
    ORDER_ACTIONS,
    PIX_HANDLER,
    PROTOCOL_VERSION,
)
from bcp_app.protocol.schemas.consent import consent_out
from bcp_app.service.context import RequestContext
from bcp_app.service.discovery import (
    CARD_HANDLER,
    boleto_handler_entry,
    boleto_handler_id,
    card_handler_entry,
    card_handler_id,
    pix_handler_entry,
    pix_handler_id,
)
from bcp_app.service.inputs import METHOD_OF_HANDLER
from bcp_app.service.policies import policies_json
from kernel.money import PT_BR, format_brl
from orders.arrival import promise_words
from orders.selectors import order_actions_bcp, order_bcp_payload
from payments.boleto.codes import barcode_from_line, line_display
from shop.checkout.selectors import CheckoutView, DestinationView, MethodView, OptionView, Total
from shop.checkout.services import boleto_offered
from shop.checkout.types import CheckoutMessage
from shop.invoicing.selectors import fiscal_documents_bcp
from shop.store.services import store_get

CHECKOUT_CAPABILITIES = (CHECKOUT, FULFILLMENT, DISCOUNT, BUYER_CONSENT, AP2_MANDATE)
# payments' charge statuses → PIX.md §2.3 wire values
PIX_STATUS = {
    "active": "active",
    "paid": "paid",
    "revoked": "canceled",
    "expired": "expired",
    "refunded": "refunded",
    "partially_refunded": "partially_refunded",
}


def rfc3339(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value not in ("", None)}


def totals(entries: tuple[Total, ...] | list[Total]) -> list[dict[str, Any]]:
    out = []
    for total in entries:
        entry: dict[str, Any] = {"type": total.type}
        if total.display_text:
            entry["display_text"] = total.display_text
        entry["amount"] = total.amount
        if total.lines:
            entry["lines"] = [{"display_text": text, "amount": amount} for text, amount in total.lines]
        out.append(entry)
    return out


def messages(items: tuple[CheckoutMessage, ...] | list[CheckoutMessage]) -> list[dict[str, Any]]:
    out = []
    for m in items:
        entry: dict[str, Any] = {"type": m.type}
        if m.code:
            entry["code"] = m.code
        if m.type == "error":
            entry["severity"] = m.severity or "recoverable"
        if m.path:
            entry["path"] = m.path
        entry["content"] = m.content
        out.append(entry)
    return out


def _extension_message(m: CheckoutMessage, ctx: RequestContext) -> bool:
    # BCP-NEG-08: no messages pointing into an extension the platform did not negotiate.
    if m.path.startswith("$.discounts") and not ctx.has(DISCOUNT):
        return False
    return not (m.path.startswith("$.fulfillment") and not ctx.has(FULFILLMENT) and m.type != "error")


HANDLER_OF_METHOD = {method: name for name, method in METHOD_OF_HANDLER.items()}


def _usable_handlers(view: CheckoutView | None, ctx: RequestContext) -> list[str]:
    """The names of the handlers usable for this checkout and platform (BCP-PAY-02, PIX.md §1.3), in answer order."""
    theirs = ctx.platform_payment_handlers()
    usable = []
    if PIX_HANDLER in theirs and (view is None or (view.pix_available and view.currency == "BRL")):
        usable.append(PIX_HANDLER)
    if CARD_HANDLER in theirs and getattr(settings, "BCP_CARD_ENABLED", True):
        usable.append(CARD_HANDLER)
    if BOLETO_HANDLER in theirs and boleto_offered():
        usable.append(BOLETO_HANDLER)
    preferred = view.context.payment if view is not None and view.context is not None else ()
    if preferred:  # BCP-PAY-08: the buyer's preferred handlers first, in their order; the rest as they were
        rank = {method: i for i, method in enumerate(preferred)}
        usable.sort(key=lambda name: rank.get(METHOD_OF_HANDLER[name], len(preferred)))
    return usable


def payment_handlers(view: CheckoutView | None, ctx: RequestContext) -> dict[str, list[dict[str, Any]]]:
    """Handlers usable for this checkout and platform (BCP-PAY-02, PIX.md §1.3)."""
    handlers: dict[str, list[dict[str, Any]]] = {}
    for name in _usable_handlers(view, ctx):
        if name == PIX_HANDLER:
            entry = pix_handler_entry()
            discount = entry["config"].get("discount")
            if view is not None and discount is not None:
                # Resolved for this checkout (PIX.md §1.3): what Pix takes off and the total paid by Pix.
                entry["config"]["discount"] = {**discount, "total_with_pix": view.pix_total}
            handlers[PIX_HANDLER] = [entry]
        elif name == CARD_HANDLER:
            handlers[CARD_HANDLER] = [card_handler_entry()]
        else:
            handlers[BOLETO_HANDLER] = [boleto_handler_entry()]
    return handlers


def payment_handler_ids(ctx: RequestContext) -> tuple[str, ...]:
    """The ids of `payment_handlers(None, ctx)`'s entries, without building them (BCP §11.2 / BCP-PAY-03: the
    handler of a platform's instrument must be one of these; asked on every create, update and complete)."""
    ids = {PIX_HANDLER: pix_handler_id, CARD_HANDLER: card_handler_id, BOLETO_HANDLER: boleto_handler_id}
    return tuple(ids[name]() for name in _usable_handlers(None, ctx))


def _destination(d: DestinationView) -> dict[str, Any]:
    address = _compact(
        {
            "first_name": d.first_name,
            "last_name": d.last_name,
            "phone_number": d.phone_number,
            "street_address": d.street_address,
            "extended_address": d.extended_address,
            "address_locality": d.address_locality,
            "address_region": d.address_region,
            "postal_code": d.postal_code,
            "address_country": d.address_country,
        }
    )
    if d.type == "business_location":
        out: dict[str, Any] = {"id": d.id, "type": d.type, "name": d.name}
        if address:
            out["address"] = address
        return out
    return {"id": d.id, "type": d.type, **address}


def _option_description(o: OptionView, handling_days: int) -> str:
    """A shipping option's promise with the store's "prazo de postagem" (orders.arrival.promise_words), as the buyer's
    checkout says it under the options: the platform reads only this text (closing note 45: it said the carrier's
    days alone, when the order then dated its arrival from the payment, handling included)."""
    days = (o.days_min, o.days_max) if o.days_min is not None and o.days_max is not None else None
    return promise_words(o.description, handling_days, days)


def _method(m: MethodView) -> dict[str, Any]:
    handling = store_get().handling_days if m.type == "shipping" else 0  # a pickup is prepared, not posted
    groups = []
    for g in m.groups:
        options = []
        for o in g.options:
            option: dict[str, Any] = {"id": o.id, "title": o.title}
            if o.description:
                option["description"] = {"plain": _option_description(o, handling)}
            option["totals"] = totals(o.totals)
            if o.carrier:
                option["carrier"] = o.carrier
            if o.earliest_fulfillment_time:
                option["earliest_fulfillment_time"] = rfc3339(o.earliest_fulfillment_time)
            if o.latest_fulfillment_time:
                option["latest_fulfillment_time"] = rfc3339(o.latest_fulfillment_time)
            options.append(option)
        groups.append(
            {
                "id": g.id,
                "line_item_ids": list(g.line_item_ids),
                "options": options,
                "selected_option_id": g.selected_option_id,
            }
        )
    return {
        "id": m.id,
        "type": m.type,
        "line_item_ids": list(m.line_item_ids),
        "destinations": [_destination(d) for d in m.destinations],
        "selected_destination_id": m.selected_destination_id,
        "groups": groups,
    }


def fulfillment(view: CheckoutView) -> dict[str, Any]:
    out: dict[str, Any] = {"methods": [_method(m) for m in view.fulfillment_methods]}
    if view.available_methods:
        out["available_methods"] = [
            {
                "type": a.type,
                "line_item_ids": list(a.line_item_ids),
                "fulfillable_on": a.fulfillable_on,
                "description": a.description,
            }
            for a in view.available_methods
        ]
    return out


def discounts(view: CheckoutView) -> dict[str, Any]:
    applied = []
    for d in view.discounts_applied:
        entry: dict[str, Any] = {"code": d.code} if d.code and not d.automatic else {}
        entry["title"] = d.title
        entry["amount"] = d.amount
        if d.automatic or not d.code:
            entry["automatic"] = True
        entry["method"] = d.method
        if d.allocations:
            entry["allocations"] = [{"path": a.path, "amount": a.amount} for a in d.allocations]
        applied.append(entry)
    return {"codes": list(view.discount_codes), "applied": applied}


@lru_cache(maxsize=512)
def qr_png_data_uri(br_code: str) -> str:
    """PNG of the BR Code (PIX.md §2.3). Pure function of the string, so memoized: encoding costs ~0.1 s."""
    return segno.make(br_code, error="m").png_data_uri(scale=4, border=2)


def pix_charge(charge: Any) -> dict[str, Any]:
    return {
        "txid": charge.txid,
        "status": PIX_STATUS.get(charge.status, charge.status),
        "amount": charge.amount,
        "currency": "BRL",
        "br_code": charge.br_code,
        "qr_code": {"media_type": "image/png", "data_uri": qr_png_data_uri(charge.br_code)},
        "created_at": rfc3339(charge.created_at),
        "expires_at": rfc3339(charge.expires_at),
        "paid_at": rfc3339(getattr(charge, "paid_at", None)),
        "end_to_end_id": getattr(charge, "end_to_end_id", "") or None,
    }


def card_description(instrument: Any) -> str:
    """ "Cartão em 3x de R$ 33,34 + 2x de R$ 33,33"-style text of the chosen plan (display only)."""
    count = instrument.installments
    if count <= 1 or not instrument.installment_amount:
        return "Cartão à vista"
    first = instrument.first_installment or instrument.installment_amount
    if first != instrument.installment_amount:
        rest = format_brl(instrument.installment_amount, language=PT_BR)
        return f"Cartão em {count}x: 1ª de {format_brl(first, language=PT_BR)} e {count - 1}x de {rest}"
    return f"Cartão em {count}x de {format_brl(instrument.installment_amount, language=PT_BR)}"


def _instrument_description(instrument: Any) -> str:
    if instrument.type == "pix":
        return "Pix"
    if instrument.type == "boleto":
        return "Boleto bancário"
    return card_description(instrument)


BOLETO_STATUS = {"issued": "pending", "paid": "paid", "expired": "expired"}


def boleto_out(boleto: Any) -> dict[str, Any]:
    """A boleto checkout's `payment.instruments[].boleto` (shopping/boleto.json `boleto`): what the buyer pays
    with. `line` is the linha digitável (47 digits), `barcode` the 44 digits of the código de barras."""
    try:
        barcode = barcode_from_line(boleto.line)
    except ValueError:
        barcode = ""
    return {
        "id": boleto.payment_id,
        "status": BOLETO_STATUS.get(boleto.status, boleto.status),
        "amount": boleto.amount,
        "currency": "BRL",
        "due_date": boleto.due_date.isoformat(),
        "line": boleto.line,
        "line_formatted": line_display(boleto.line),
        "barcode": barcode,
        "pdf_url": boleto.pdf_url or None,
        "pix_br_code": boleto.qr_code or None,
        "paid_at": rfc3339(boleto.paid_at),
    }


def payment(view: CheckoutView) -> dict[str, Any]:
    instruments = []
    for i in view.instruments:
        entry: dict[str, Any] = {
            "id": i.id,
            "handler_id": i.handler_id,
            "type": i.type,
            "selected": i.selected,
            "display": {"description": _instrument_description(i)},
        }
        if i.type == "card":
            entry["installments"] = i.installments
            if i.brand and i.last_digits:  # the card charged (shopping/types/card_payment_instrument.json)
                entry["display"] = {**entry["display"], "brand": i.brand, "last_digits": i.last_digits}
        if i.type == "pix" and view.pix_charge is not None:
            entry["pix"] = pix_charge(view.pix_charge)
        if i.type == "boleto" and view.boleto is not None:
            entry["boleto"] = boleto_out(view.boleto)
        instruments.append(entry)
    return {"instruments": instruments}


def consent_json(decisions: tuple[tuple[str, bool], ...] | None, links: tuple[Any, ...]) -> dict[str, Any]:
    privacy = next((link.url for link in links if link.type == "privacy_policy"), "")
    return {key: value.model_dump(exclude_none=True) for key, value in consent_out(decisions, privacy).items()}


def checkout(view: CheckoutView, ctx: RequestContext) -> dict[str, Any]:
    """The BCP checkout response (§4.1) for the negotiated capabilities of `ctx`."""
    body: dict[str, Any] = {
        "ucp": {
            "version": PROTOCOL_VERSION,
            "capabilities": ctx.ucp_capabilities(*CHECKOUT_CAPABILITIES),
            "payment_handlers": payment_handlers(view, ctx),
        },
        "id": view.id,
        "status": view.status,
        "currency": view.currency,
        "line_items": [
            {
                "id": line.id,
                "item": _compact(
                    {"id": line.sku, "title": line.title, "price": line.price, "image_url": line.image_url}
                ),
                "quantity": line.quantity,
                "totals": totals(line.totals),
            }
            for line in view.lines
        ],
    }
    if view.buyer is not None:
        buyer = _compact(
            {
                "first_name": view.buyer.first_name,
                "last_name": view.buyer.last_name,
                "email": view.buyer.email,
                "phone_number": view.buyer.phone_number,
                "tax_id": view.buyer.tax_id,
            }
        )
        if ctx.has(BUYER_CONSENT):  # every offered purpose, decided or the business default
            buyer["consent"] = consent_json(view.buyer.consent, view.links)
        if buyer:
            body["buyer"] = buyer
    if view.context is not None:
        context = _compact(
            {
                "address_country": view.context.address_country,
                "address_region": view.context.address_region,
                "postal_code": view.context.postal_code,
                "language": view.context.language,
                "intent": view.context.intent,
            }
        )
        if view.context.payment:  # BCP-PAY-08: the preference as understood, so a full update can send it back
            context["payment"] = [{"handler": HANDLER_OF_METHOD[method]} for method in view.context.payment]
        if context:
            body["context"] = context
    if ctx.has(FULFILLMENT):
        body["fulfillment"] = fulfillment(view)
    if ctx.has(DISCOUNT):
        body["discounts"] = discounts(view)
    if view.instruments:
        body["payment"] = payment(view)
    body["totals"] = totals(view.totals)
    shown = [m for m in view.messages if _extension_message(m, ctx)]
    if shown:
        body["messages"] = messages(shown)
    body["links"] = [_compact({"type": link.type, "url": link.url, "title": link.title}) for link in view.links]
    body["policies"] = policies_json(view.language)  # UCP #572: terms, privacy, returns, shipping
    if view.continue_url:
        body["continue_url"] = view.continue_url
    if view.expires_at is not None:
        body["expires_at"] = rfc3339(view.expires_at)
    if view.order is not None:
        body["order"] = {"id": view.order.id, "permalink_url": view.order.permalink_url}
    return body


def order(order_model: Any, ctx: RequestContext | None) -> dict[str, Any]:
    """The BCP order (§7, seed 000): `ucp` with the order capability + the full current snapshot."""
    version = ctx.capabilities.get(ORDER, PROTOCOL_VERSION) if ctx is not None else PROTOCOL_VERSION
    payload = order_bcp_payload(order_model)
    capabilities: dict[str, list[dict[str, str]]] = {ORDER: [{"version": version}]}
    if ctx is not None and ctx.has(FISCAL_DOCUMENT):
        capabilities[FISCAL_DOCUMENT] = [{"version": ctx.capabilities[FISCAL_DOCUMENT]}]
        # Its NF-e de devolução are read only for an order goods came back to (a return adjustment): no query else.
        returned = any(item.get("type") == "return" for item in payload.get("adjustments") or ())
        payload["fiscal_documents"] = fiscal_documents_bcp(order_model.public_id, returns=returned)
    if ctx is not None and ctx.has(ORDER_ACTIONS):
        capabilities[ORDER_ACTIONS] = [{"version": ctx.capabilities[ORDER_ACTIONS]}]
        payload.update(order_actions_bcp(order_model, now=timezone.now()))  # read live, as the NF-e
    # UCP #572 on orders: the policies in force when it was placed (snapshot), not today's store settings.
    payload.setdefault(
        "policies", policies_json(getattr(order_model, "language", None), kept=getattr(order_model, "policies", None))
    )
    return {"ucp": {"version": PROTOCOL_VERSION, "capabilities": capabilities}, **payload}
