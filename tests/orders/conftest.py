"""Factories for orders tests: a PlacedCheckout like the shop sends after a Pix settlement."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator

import pytest

from orders.models import Order
from orders.services import order_place_from_checkout
from orders.signals import order_changed, refund_requested, stock_return_requested
from orders.types import PlacedCheckout, PlacedLine

DESTINATION = {
    "first_name": "Ana",
    "last_name": "Souza",
    "street": "Rua das Flores",
    "number": "123",
    "complement": "Apto 45",
    "neighborhood": "Jardim Paulista",
    "city": "São Paulo",
    "state": "SP",
    "postal_code": "01310-100",
    "country": "BR",
}


@pytest.fixture(autouse=True)
def _orders_signals_isolated() -> Iterator[None]:
    """orders is a leaf app: its tests see only their own receivers (the shop's wiring is tested in shop)."""
    saved = {signal: list(signal.receivers) for signal in (order_changed, refund_requested, stock_return_requested)}
    for signal in saved:
        signal.receivers = []
        signal.sender_receivers_cache.clear()
    yield
    for signal, receivers in saved.items():
        signal.receivers = receivers
        signal.sender_receivers_cache.clear()


def make_checkout(
    *,
    lines: list[tuple[str, int, int]] | None = None,
    freight: int = 800,
    language: str = "pt-br",
    payment_type: str = "pix",
    paid: bool = True,
    email: str = "ana@example.com.br",
    method: str = "shipping",
    discounts: list[tuple[int, str]] | None = None,
    carrier: str | None = None,
) -> PlacedCheckout:
    """lines = [(sku, unit_price, quantity)]; discounts = [(centavos off, label)], e.g. a coupon or the Pix
    discount; totals follow BCP §6 (subtotal, discount…, fulfillment, total)."""
    lines = lines or [("CAM-P-AZUL", 3000, 1)]
    checkout_id = f"checkout_{secrets.token_hex(8)}"
    placed = [
        PlacedLine(
            line_id=f"li_{secrets.token_hex(8)}",
            sku=sku,
            title=f"Produto {sku}",
            unit_price=price,
            quantity=quantity,
            image_url=f"https://cdn.example.com.br/{sku}.jpg",
        )
        for sku, price, quantity in lines
    ]
    subtotal = sum(price * quantity for _, price, quantity in lines)
    digital = method == "digital"  # as the checkout places it: nothing to ship, no address, no freight
    freight = 0 if digital else freight
    off = [("discount", -amount, label) for amount, label in discounts or []]
    total = subtotal - sum(amount for amount, _ in discounts or []) + freight
    return PlacedCheckout(
        checkout_id=checkout_id,
        currency="BRL",
        buyer_first_name="Ana",
        buyer_last_name="Souza",
        buyer_email=email,
        buyer_phone="+5511987654321",
        buyer_tax_id="39053344705",
        lines=placed,
        totals=[("subtotal", subtotal, ""), *off, ("fulfillment", freight, "Frete SEDEX"), ("total", total, "")],
        fulfillment_method=method,
        fulfillment_title="Entrega digital" if digital else "SEDEX",
        fulfillment_description="" if digital else "Chega em 3 a 5 dias úteis",
        destination={} if digital else DESTINATION,
        platform_id=None,
        language=language,
        payment_handler_id="pix_recebedor_001",
        payment_type=payment_type,
        payment_reference=checkout_id,
        payment_txid=secrets.token_hex(16),
        paid_amount=total if paid else 0,
        # a SEDEX order, as the checkout places it: the method's carrier
        fulfillment_carrier=("Correios" if method == "shipping" else "") if carrier is None else carrier,
    )


@pytest.fixture
def place_order(django_capture_on_commit_callbacks) -> Callable[..., Order]:
    """Place an order and run its after-commit callbacks (e-mail task, signals) like a real commit."""

    def _place(**kwargs: object) -> Order:
        with django_capture_on_commit_callbacks(execute=True):
            order = order_place_from_checkout(checkout=make_checkout(**kwargs))
        return order

    return _place
