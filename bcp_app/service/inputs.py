"""Request models → checkout engine inputs shared by checkouts and carts (`operations`, `carts`)."""

from __future__ import annotations

from typing import Any

from bcp_app.protocol.names import BOLETO_HANDLER, BUYER_CONSENT, PIX_HANDLER
from bcp_app.protocol.schemas.consent import consent_input
from bcp_app.service.discovery import CARD_HANDLER
from shop.checkout import types as ct

METHOD_OF_HANDLER = {PIX_HANDLER: "pix", CARD_HANDLER: "card", BOLETO_HANDLER: "boleto"}


def buyer_input(ctx: Any, buyer: Any) -> ct.BuyerInput | None:
    """`buyer` (with the consent extension's decisions when negotiated), None when no buyer was sent."""
    if buyer is None:
        return None
    return ct.BuyerInput(
        first_name=buyer.first_name,
        last_name=buyer.last_name,
        email=buyer.email,
        phone_number=buyer.phone_number,
        tax_id=buyer.tax_id,
        **consent_input(ctx.has(BUYER_CONSENT), ctx, buyer.consent),
    )


def context_input(context: Any) -> ct.ContextInput | None:
    if context is None:
        return None
    return ct.ContextInput(
        address_country=context.address_country,
        address_region=context.address_region,
        postal_code=context.postal_code,
        language=context.language,
        intent=context.intent,
        payment=preferred_methods(context.payment),
    )


def preferred_methods(entries: list[Any]) -> tuple[str, ...]:
    """`context.payment` (`[{handler, types?}]`, most preferred first) as the methods it names, each once; an
    entry that is not an object, or names a handler this shop does not have, is ignored without error
    (BCP-PAY-08, `common/types/context.json`)."""
    methods: list[str] = []
    for entry in entries:
        method = METHOD_OF_HANDLER.get(entry.get("handler")) if isinstance(entry, dict) else None
        if method is not None and method not in methods:
            methods.append(method)
    return tuple(methods)


def line_inputs(body: Any, *, update: bool) -> tuple[ct.LineInput, ...]:
    return tuple(
        ct.LineInput(sku=li.item.id, quantity=li.quantity, line_id=li.id if update else None) for li in body.line_items
    )
