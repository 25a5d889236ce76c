"""Shared by the order_actions transport tests (issue 35): an order of the platform, paid, not yet shipped."""

from __future__ import annotations

import secrets
from typing import Any

ACTIONS = "br.dev.bcp.shopping.order_actions"
ORDER = "br.dev.bcp.shopping.order"


def place_paid_order(platform_id: str, *, delivered: bool = False) -> Any:
    """Two mugs (R$ 25,00 each) + R$ 8,00 freight, paid by Pix; `delivered`: shipped and delivered just now."""
    from orders.services import fulfillment_event_create, order_place_from_checkout, order_ship
    from orders.types import PlacedCheckout, PlacedLine

    checkout_id = f"checkout_{secrets.token_hex(6)}"
    order = order_place_from_checkout(
        checkout=PlacedCheckout(
            checkout_id=checkout_id, currency="BRL", buyer_first_name="Ana", buyer_last_name="Souza",
            buyer_email="ana@example.com.br", buyer_phone="", buyer_tax_id="",
            lines=[PlacedLine(line_id=f"li_{secrets.token_hex(6)}", sku="CANECA", title="Caneca", unit_price=2500,
                              quantity=2)],
            totals=[("subtotal", 5000, ""), ("fulfillment", 800, ""), ("total", 5800, "")],
            fulfillment_method="shipping", fulfillment_title="PAC", fulfillment_description="5 dias úteis",
            destination={"street": "Rua das Flores", "number": "123", "city": "São Paulo", "state": "SP",
                         "postal_code": "01310-100", "country": "BR"},
            platform_id=platform_id, language="pt-br", payment_handler_id="pix", payment_type="pix",
            payment_reference=checkout_id, payment_txid=secrets.token_hex(12), paid_amount=5800,
        )
    )  # fmt: skip
    if delivered:
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
        fulfillment_event_create(order_id=order.public_id, type="delivered")
    return order
