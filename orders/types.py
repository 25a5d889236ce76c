"""Input types of the orders services (the contract with `shop`, see contracts.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PlacedLine:
    line_id: str  # the checkout line public id (li_…); kept as the order line id
    sku: str
    title: str
    unit_price: int
    quantity: int
    image_url: str = ""


@dataclass(frozen=True)
class PlacedCheckout:
    checkout_id: str
    currency: str
    buyer_first_name: str
    buyer_last_name: str
    buyer_email: str
    buyer_phone: str
    buyer_tax_id: str
    lines: list[PlacedLine]
    totals: list[tuple[str, int, str]]  # (type, amount, display_text) in BCP §6 order
    fulfillment_method: str  # "shipping" | "pickup" | "digital"
    fulfillment_title: str  # e.g. "SEDEX" or "Retirada na loja"
    fulfillment_description: str  # e.g. "Chega em 3 a 5 dias úteis"
    destination: dict[str, str]  # street, number, complement, neighborhood, city, state, postal_code, country…
    platform_id: str | None  # originating BCP platform public id; None for storefront
    language: str  # "pt-br" | "en"
    payment_handler_id: str
    payment_type: str  # "pix" | "card"
    payment_reference: str  # = checkout_id (payments' reference)
    payment_txid: str
    paid_amount: int
    installments: int = 1  # card: the parcelamento chosen
    installment_amount: int = 0  # each installment (the first may carry the remainder cents)
    first_installment: int = 0
    # The store policies in force at placement (`shop.store.policies.Policy` as dicts), kept with the order.
    policies: list[dict[str, Any]] = field(default_factory=list)
    fulfillment_carrier: str = ""  # the chosen method's carrier, e.g. "Correios"; empty: none named
    # The chosen option's business days (min, max) as quoted, counted from shipping; None: not known (pickup, or
    # an option shown before the shop kept them): the order then keeps only the words.
    fulfillment_days: tuple[int, int] | None = None
    # The shop's business days from payment to posting (its "prazo de postagem"); > 0: the expectation counts
    # these plus `fulfillment_days` from the payment until it ships, then `fulfillment_days` from the shipment.
    handling_days: int = 0


@dataclass(frozen=True)
class LineQuantity:
    """A quantity of one order line, named by its public id (`li_…`)."""

    line_id: str
    quantity: int
