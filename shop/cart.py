"""Session cart of the storefront: {SKU: quantity} under session["cart"], coupon codes under session["cart_coupons"].

The cart is only a list of wishes; prices, stock and discounts are decided by the checkout engine
when the buyer goes to /checkout/ (the same engine agents use).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase

from shop.models import Variant
from shop.selectors import variants_by_sku

CART_KEY = "cart"
COUPONS_KEY = "cart_coupons"
CHECKOUT_KEY = "checkout_id"
MAX_QUANTITY = 99
MAX_LINES = 50


class CartError(ValueError):
    """Bad cart input, naming the form field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class CartLine:
    variant: Variant
    quantity: int

    @property
    def amount(self) -> int:
        return self.variant.price * self.quantity


def cart_items(session: SessionBase) -> dict[str, int]:
    raw = session.get(CART_KEY, {})
    if not isinstance(raw, dict):
        return {}
    return {str(sku): int(qty) for sku, qty in raw.items() if isinstance(qty, int) and qty > 0}


def _parse_quantity(raw: object, *, allow_zero: bool) -> int:
    try:
        quantity = int(str(raw).strip())
    except (TypeError, ValueError):
        raise CartError("quantity", "Quantidade inválida.") from None
    low = 0 if allow_zero else 1
    if not low <= quantity <= MAX_QUANTITY:
        raise CartError("quantity", f"A quantidade deve estar entre {low} e {MAX_QUANTITY}.")
    return quantity


def cart_add(session: SessionBase, *, sku: str, quantity: object) -> Variant:
    """Add units of a sellable variant; raises CartError naming the field."""
    qty = _parse_quantity(quantity, allow_zero=False)
    sku = (sku or "").strip()
    variant = variants_by_sku([sku]).get(sku)
    if variant is None:
        raise CartError("sku", "Produto indisponível.")
    if variant.stock <= 0 and not variant.allow_backorder:
        raise CartError("sku", "Produto esgotado.")
    items = cart_items(session)
    if sku not in items and len(items) >= MAX_LINES:
        raise CartError("sku", f"O carrinho aceita até {MAX_LINES} produtos diferentes.")
    items[sku] = min(items.get(sku, 0) + qty, MAX_QUANTITY)
    session[CART_KEY] = items
    return variant


def cart_set(session: SessionBase, *, sku: str, quantity: object) -> None:
    """Change a line's quantity; 0 removes it."""
    qty = _parse_quantity(quantity, allow_zero=True)
    items = cart_items(session)
    if sku not in items:
        raise CartError("sku", "Este produto não está no carrinho.")
    if qty == 0:
        items.pop(sku)
    else:
        items[sku] = qty
    session[CART_KEY] = items


def cart_lines(session: SessionBase) -> list[CartLine]:
    """Lines with their sellable variants (1 query); unknown SKUs are dropped from the session."""
    items = cart_items(session)
    variants = variants_by_sku(items)
    if set(variants) != set(items):
        session[CART_KEY] = {sku: qty for sku, qty in items.items() if sku in variants}
    return [CartLine(variants[sku], qty) for sku, qty in items.items() if sku in variants]


def cart_coupons(session: SessionBase) -> list[str]:
    raw = session.get(COUPONS_KEY, [])
    return [str(c) for c in raw] if isinstance(raw, list) else []


def cart_set_coupons(session: SessionBase, codes: list[str]) -> None:
    cleaned: list[str] = []
    for code in codes:
        code = code.strip()[:40]
        if code and code.upper() not in (c.upper() for c in cleaned):
            cleaned.append(code)
    session[COUPONS_KEY] = cleaned[:5]


def cart_clear(session: SessionBase) -> None:
    for key in (CART_KEY, COUPONS_KEY, CHECKOUT_KEY):
        session.pop(key, None)
