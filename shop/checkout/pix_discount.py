"""The payment-method discount "Pix: N % off" (issue 17): the arithmetic, in integer centavos.

Rule (written down once, used by the engine, the storefront and BCP alike):

- The rate is the store setting `StoreSettings.pix_discount_percent` (0.00–50.00 %), kept as basis
  points (`Store.pix_discount_bp`, 5 % = 500) so no float ever touches money.
- The base is what the buyer pays for the items: the subtotal **after coupons**, never the freight
  (shipping is a pass-through cost; most Brazilian shops discount the products only).
- discount = base × bp / 10 000, **rounded half to even** to the centavo (banker's rounding: a
  half-centavo goes to the even neighbour, so no direction is favoured over many orders).
  R$ 99,90 at 5 % → 499,5 centavos → 500 → "R$ 94,90 no Pix"; R$ 42,90 at 5 % → 214,5 → 214.
- The engine applies it as one order-level `discount` total ("Desconto Pix (5%)") and an automatic
  entry in `discounts.applied` only while the selected instrument is Pix (BCP §6, §10).
"""

from __future__ import annotations

from django.conf import settings

from payments.money import half_even
from shop.store.services import store_get

MAX_BP = 5000  # 50 %: anything above is a typing mistake, refused in the admin


def discount_half_even(base: int, bp: int) -> int:
    """`base` centavos × `bp` basis points / 10 000, rounded half to even; 0 for no base or no rate."""
    if base <= 0 or bp <= 0:
        return 0
    return min(half_even(base * bp, 10_000), base)


def pix_discount_bp() -> int:
    """The shop's Pix discount in basis points, from the cached store row (no query once cached)."""
    return store_get().pix_discount_bp


def percent_label(bp: int) -> str:
    """500 → "5%", 250 → "2,5%" (Brazilian decimal comma), 1234 → "12,34%"."""
    whole, cents = divmod(bp, 100)
    if not cents:
        return f"{whole}%"
    return f"{whole},{cents:02d}".rstrip("0") + "%"


def is_pix_instrument(instrument: dict[str, object] | None) -> bool:
    if not instrument:
        return False
    return instrument.get("type") == "pix" and instrument.get("handler_id") == settings.PIX_HANDLER_ID


def pix_price(amount: int, bp: int | None = None) -> int:
    """What `amount` (items, after coupons) costs paid by Pix."""
    rate = pix_discount_bp() if bp is None else bp
    return amount - discount_half_even(amount, rate)


def pix_discount_title(bp: int) -> str:
    return f"Desconto Pix ({percent_label(bp)})"


def pix_discount_applied(instrument: dict[str, object] | None, base: int) -> dict[str, object] | None:
    """The engine's automatic discount entry while Pix is selected (None: not Pix, no rate or nothing to discount).

    Stored in `Checkout.discounts_applied` like a coupon, without a code and `automatic: true` (BCP §10).
    """
    if not is_pix_instrument(instrument):
        return None
    bp = pix_discount_bp()
    amount = discount_half_even(base, bp)
    if amount <= 0:
        return None
    return {"code": "", "title": pix_discount_title(bp), "amount": amount, "method": "across", "automatic": True}


def pix_offer(*, items_after_coupons: int, total: int, pix_selected: bool) -> tuple[int, int]:
    """(discount, total paid by Pix) for a checkout or cart, for "R$ 94,90 no Pix" before Pix is chosen.

    With Pix already selected the total carries the discount: it is the Pix total as it stands.
    """
    if pix_selected:
        return 0, total
    discount = discount_half_even(items_after_coupons, pix_discount_bp())
    return discount, total - discount
