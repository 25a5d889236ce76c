"""The checkout's payment-method choice: which methods the page lists, in which order, and which one is open.

Pix first (cheaper for the shop, usually with a discount, and what most Brazilian buyers pay with); one template
per method under `templates/shop/checkout/payment/`, so adding a method (boleto…) is one entry here and one
partial there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shop.checkout.selectors import CheckoutView


@dataclass(frozen=True)
class PaymentMethod:
    code: str
    template: str
    selected: bool = False


def payment_methods(
    view: CheckoutView, card: dict[str, Any], posted: str = "", *, boleto: dict[str, Any] | None = None
) -> list[PaymentMethod]:
    """The methods offered on this checkout, one selected: the one the buyer just submitted, else the
    checkout's own instrument (a card that was declined stays open), else the first the buyer's agent said they
    prefer (`context.payment`, BCP-PAY-08: the page a `continue_url` opens), else Pix."""
    codes = ["pix"]
    if card.get("enabled"):
        codes.append("card")
    if boleto and boleto.get("enabled"):
        codes.append("boleto")
    instrument = (view.checkout.payment_instrument or {}).get("type", "")
    preferred = view.context.payment if view.context is not None else ()
    chosen = next((code for code in (posted, instrument, *preferred) if code in codes), codes[0])
    return [PaymentMethod(code, f"shop/checkout/payment/{code}.html", code == chosen) for code in codes]
