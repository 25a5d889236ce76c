"""`{% pix_price amount %}` and `{% pix_total_price pix_total total bp %}`: the "R$ 94,90 no Pix" line (issue 17).

One partial (`shop/partials/pix_price.html`) for the product page, the cart and the checkout, so the
price a buyer sees before choosing Pix is the one the engine charges (shop/checkout/pricing.py). No query:
the rate comes from the cached store row.
"""

from __future__ import annotations

from typing import Any

from django import template

from shop.checkout import pricing as pix_discount

register = template.Library()

PARTIAL = "shop/partials/pix_price.html"


def _context(amount: int | None, bp: int) -> dict[str, Any]:
    return {"pix_amount": amount, "pix_label": pix_discount.percent_label(bp) if bp > 0 else ""}


@register.inclusion_tag(PARTIAL)
def pix_price(amount: object) -> dict[str, Any]:
    """The Pix price of `amount` centavos of items (product price, cart after coupons); a plain hint without a rate."""
    bp = pix_discount.pix_discount_bp()
    try:
        cents = int(amount)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return _context(None, 0)
    return _context(pix_discount.pix_price(cents, bp) if bp > 0 and cents > 0 else None, bp)


@register.inclusion_tag(PARTIAL)
def pix_total_price(pix_total: int, total: int, bp: int) -> dict[str, Any]:
    """The checkout total paid by Pix (`pix_total` of `total` at the store's rate `bp`), while another instrument
    (or none) is selected. From plain values: the payment choice is kept per its inputs (`{% memo %}`)."""
    if bp <= 0 or pix_total >= total:
        return _context(None, 0) | {"quiet": True}
    return _context(pix_total, bp)
