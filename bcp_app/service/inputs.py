"""Request models → checkout engine inputs shared by checkouts and carts (`operations`, `carts`)."""

from __future__ import annotations

from typing import Any

from bcp_app.protocol.names import BUYER_CONSENT
from bcp_app.protocol.schemas.consent import consent_input
from shop.checkout import types as ct


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
    )


def line_inputs(body: Any, *, update: bool) -> tuple[ct.LineInput, ...]:
    return tuple(
        ct.LineInput(sku=li.item.id, quantity=li.quantity, line_id=li.id if update else None) for li in body.line_items
    )
