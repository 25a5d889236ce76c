"""Session cart of the storefront: {SKU: quantity} under session["cart"], coupon codes under session["cart_coupons"].

Adding or changing a quantity caps it at the stock on sale (backorder variants excepted) and says so;
prices, discounts and the final stock check are decided by the checkout engine when the buyer goes to
/checkout/ (the same engine agents use), whose quantities the cart then takes (`cart_sync_quantities`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from payments.json_limits import control_in
from shop.models import Variant
from shop.selectors import variants_by_sku

CART_KEY = "cart"
COUPONS_KEY = "cart_coupons"
CHECKOUT_KEY = "checkout_id"
MAX_QUANTITY = 99
MAX_LINES = 50
COUPON_MAX_LENGTH = 40  # the engine's limit for one code (`$.discounts.codes[i]`)
MAX_COUPONS = 5


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


@dataclass(frozen=True)
class CartChange:
    """What a cart write did: `quantity` units are now in the cart, fewer than asked when `capped`."""

    variant: Variant
    quantity: int
    capped: bool

    @property
    def capped_message(self) -> str:
        return ngettext(
            "Só temos %(count)d unidade de %(title)s; a quantidade no carrinho foi ajustada.",
            "Só temos %(count)d unidades de %(title)s; a quantidade no carrinho foi ajustada.",
            self.quantity,
        ) % {"count": self.quantity, "title": self.variant.display_title}


def _capped(variant: Variant, wanted: int) -> int:
    # Backorder variants sell beyond stock; the others never hold more than is on sale now.
    return wanted if variant.allow_backorder else min(wanted, max(variant.stock, 0))


def cart_items(session: SessionBase) -> dict[str, int]:
    raw = session.get(CART_KEY, {})
    if not isinstance(raw, dict):
        return {}
    return {str(sku): int(qty) for sku, qty in raw.items() if isinstance(qty, int) and qty > 0}


def _parse_quantity(raw: object, *, allow_zero: bool) -> int:
    try:
        quantity = int(str(raw).strip())
    except (TypeError, ValueError):
        raise CartError("quantity", _("Quantidade inválida.")) from None
    low = 0 if allow_zero else 1
    if not low <= quantity <= MAX_QUANTITY:
        raise CartError(
            "quantity", _("A quantidade deve estar entre %(low)d e %(high)d.") % {"low": low, "high": MAX_QUANTITY}
        )
    return quantity


def cart_add(session: SessionBase, *, sku: str, quantity: object) -> CartChange:
    """Add units of a sellable variant, capped at its stock; raises CartError naming the field."""
    qty = _parse_quantity(quantity, allow_zero=False)
    sku = (sku or "").strip()
    variant = variants_by_sku([sku]).get(sku)
    if variant is None:
        raise CartError("sku", _("Produto indisponível."))
    if variant.stock <= 0 and not variant.allow_backorder:
        raise CartError("sku", _("Produto esgotado."))
    items = cart_items(session)
    if sku not in items and len(items) >= MAX_LINES:
        raise CartError("sku", _("O carrinho aceita até %(max)d produtos diferentes.") % {"max": MAX_LINES})
    wanted = min(items.get(sku, 0) + qty, MAX_QUANTITY)
    items[sku] = _capped(variant, wanted)
    session[CART_KEY] = items
    return CartChange(variant, items[sku], capped=items[sku] < wanted)


def cart_set(session: SessionBase, *, sku: str, quantity: object) -> CartChange | None:
    """Change a line's quantity, capped at stock; 0 (or nothing left on sale) removes it → None."""
    qty = _parse_quantity(quantity, allow_zero=True)
    items = cart_items(session)
    if sku not in items:
        raise CartError("sku", _("Este produto não está no carrinho."))
    variant = variants_by_sku([sku]).get(sku) if qty else None
    capped = _capped(variant, qty) if variant is not None else 0
    if capped == 0:
        items.pop(sku)
    else:
        items[sku] = capped
    session[CART_KEY] = items
    if qty and variant is None:
        raise CartError("sku", _("Produto indisponível."))
    if qty and capped == 0:
        raise CartError("sku", _("Produto esgotado."))
    return CartChange(variant, capped, capped=capped < qty) if variant is not None else None


def cart_sync_quantities(session: SessionBase, quantities: Iterable[tuple[str, int]]) -> None:
    """Take the quantities the checkout engine settled on (stock adjustments), so the cart and its
    header badge count what the checkout holds."""
    items = cart_items(session)
    for sku, quantity in quantities:
        if sku in items and 0 < quantity <= MAX_QUANTITY:
            items[sku] = quantity
    session[CART_KEY] = items


def cart_lines(session: SessionBase) -> list[CartLine]:
    """Lines with their sellable variants (1 query); unknown SKUs are dropped from the session."""
    items = cart_items(session)
    variants = variants_by_sku(items)
    if set(variants) != set(items):
        session[CART_KEY] = {sku: qty for sku, qty in items.items() if sku in variants}
    return [CartLine(variants[sku], qty) for sku, qty in items.items() if sku in variants]


def coupon_usable(code: str) -> bool:
    """A code the engine can look up: 1–40 characters, no control character (U+0000 breaks Postgres)."""
    return 0 < len(code) <= COUPON_MAX_LENGTH and control_in(code, identifier=True) is None


def cart_coupons(session: SessionBase) -> list[str]:
    # Codes stored before the limits existed are dropped here too, so no session can stay broken.
    raw = session.get(COUPONS_KEY, [])
    return [code for code in map(str, raw) if coupon_usable(code)][:MAX_COUPONS] if isinstance(raw, list) else []


def cart_set_coupons(session: SessionBase, codes: list[str]) -> None:
    """Keep the usable codes (unusable ones are dropped, not cut short into another code), once each."""
    cleaned: list[str] = []
    for code in codes:
        code = code.strip()
        if coupon_usable(code) and code.upper() not in (c.upper() for c in cleaned):
            cleaned.append(code)
    session[COUPONS_KEY] = cleaned[:MAX_COUPONS]


def cart_replace(session: SessionBase, *, items: list[tuple[str, int]], coupons: list[str], checkout_id: str) -> None:
    """The cart becomes exactly `items` and `coupons`, bound to `checkout_id` (a BCP permalink's checkout)."""
    session[CART_KEY] = {sku: quantity for sku, quantity in items if 0 < quantity <= MAX_QUANTITY}
    cart_set_coupons(session, coupons)
    session[CHECKOUT_KEY] = checkout_id


def cart_clear(session: SessionBase) -> None:
    for key in (CART_KEY, COUPONS_KEY, CHECKOUT_KEY):
        session.pop(key, None)
