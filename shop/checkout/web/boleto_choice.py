"""The boleto choice of the one-page checkout (issue 37): its instrument and what its partial shows."""

from __future__ import annotations

from typing import Any

from shop.checkout.boleto import boleto_handler_id, boleto_offered
from shop.checkout.selectors import CheckoutView
from shop.checkout.types import InstrumentInput
from shop.checkout.web.card_page import card_total
from shop.store.services import store_get

STOREFRONT_BOLETO_ID = "boleto_storefront"


def boleto_instrument() -> InstrumentInput:
    return InstrumentInput(id=STOREFRONT_BOLETO_ID, handler_id=boleto_handler_id(), type="boleto")


def boleto_context(view: CheckoutView) -> dict[str, Any]:
    """What `templates/shop/partials/boleto_checkout.html` shows: offered or not, in how many business days a
    boleto issued now is due (StoreSettings.boleto_due_business_days), and the total a boleto pays (no Pix
    discount, no card interest; sent back so a total that changed on submit is confirmed, not charged)."""
    if not boleto_offered():
        return {"enabled": False}
    return {"enabled": True, "days": store_get().boleto_due_business_days, "total": card_total(view)}
