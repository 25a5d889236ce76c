"""Storefront cart: a `Cart` row (shop/models/cart.py) the session points to (session["cart_id"]).

The same model is the BCP cart capability's (an agent's cart opened by the buyer through its `continue_url`
becomes the session's cart). Adding or changing a quantity caps it at the stock on sale (backorder variants
excepted) and says so; prices, discounts and the final stock check are decided by the checkout engine when
the buyer goes to /checkout/ (the same engine agents use), whose quantities the cart then takes
(`cart_sync_quantities`). The session also names the storefront checkout (session["checkout_id"]).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from kernel.json_limits import control_in
from shop.catalog.selectors import variants_by_sku
from shop.models import Cart, Variant
from shop.models import CartLine as CartLineRow

CART_KEY = "cart_id"  # the public id of the session's Cart
COUPONS_KEY = "cart_coupons"  # before carts were rows; only dropped now
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


def session_cart(session: SessionBase | None, *, create: bool = False) -> Cart | None:
    """The session's active cart (expired or canceled ones are forgotten); a new one when `create`."""
    cart_id = session.get(CART_KEY) if session is not None else None
    cart = None
    if isinstance(cart_id, str):
        cart = Cart.objects.filter(public_id=cart_id, status=Cart.STATUS_ACTIVE, expires_at__gt=timezone.now()).first()
    if cart is None and create and session is not None:
        cart = Cart.objects.create(session_key=session.session_key or "", expires_at=cart_expiry())
        session[CART_KEY] = cart.public_id
    return cart


def cart_expiry() -> datetime:
    return timezone.now() + timedelta(seconds=settings.SHOP_CART_TTL_SECONDS)


def cart_items(session: SessionBase | None) -> dict[str, int]:
    """{SKU: quantity} of the session's cart, in cart order (1 query; none without a cart)."""
    cart_id = session.get(CART_KEY) if session is not None else None
    if not isinstance(cart_id, str):
        return {}
    rows = CartLineRow.objects.filter(
        cart__public_id=cart_id, cart__status=Cart.STATUS_ACTIVE, cart__expires_at__gt=timezone.now()
    ).values_list("sku", "quantity")
    items: dict[str, int] = {}
    for sku, quantity in rows:
        items[sku] = items.get(sku, 0) + quantity
    return items


def _lines(cart: Cart) -> dict[str, int]:
    items: dict[str, int] = {}
    for sku, quantity in CartLineRow.objects.filter(cart=cart).order_by("position").values_list("sku", "quantity"):
        items[sku] = items.get(sku, 0) + quantity
    return items


def _update(
    session: SessionBase,
    edit: Callable[[dict[str, int]], dict[str, int]],
    *,
    create: bool = True,
    coupons: list[str] | None = None,
    checkout_id: str | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """The session's cart lines become `edit(lines)` (and `coupons` when given): one short transaction.

    The lines are read under the cart's row lock, so two requests changing one cart at once each see the
    other's change (20 concurrent adds of 1 unit on a cart of 1 make 21, not the last writer's 2). Without a
    cart and `create=False`, `edit` sees no lines and nothing is written. Returns (lines before, lines after).
    """
    with transaction.atomic():
        cart = session_cart(session, create=create)
        if cart is None:
            return {}, edit({})
        cart = Cart.objects.select_for_update().get(pk=cart.pk)
        before = _lines(cart)
        items = edit(dict(before))
        if list(items.items()) != list(before.items()):
            CartLineRow.objects.filter(cart=cart).delete()
            CartLineRow.objects.bulk_create(
                [
                    CartLineRow(cart=cart, sku=sku, quantity=quantity, position=position)
                    for position, (sku, quantity) in enumerate(items.items())
                ]
            )
        if coupons is not None:
            cart.discount_codes = coupons
        if checkout_id is not None:
            cart.checkout_id = checkout_id
        cart.expires_at = cart_expiry()
        cart.save()
    return before, items


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

    def add(items: dict[str, int]) -> dict[str, int]:
        if sku not in items and len(items) >= MAX_LINES:
            raise CartError("sku", _("O carrinho aceita até %(max)d produtos diferentes.") % {"max": MAX_LINES})
        items[sku] = _capped(variant, min(items.get(sku, 0) + qty, MAX_QUANTITY))
        return items

    before, after = _update(session, add)
    wanted = min(before.get(sku, 0) + qty, MAX_QUANTITY)
    return CartChange(variant, after[sku], capped=after[sku] < wanted)


def cart_set(session: SessionBase, *, sku: str, quantity: object) -> CartChange | None:
    """Change a line's quantity, capped at stock; 0 (or nothing left on sale) removes it → None."""
    qty = _parse_quantity(quantity, allow_zero=True)
    variant = variants_by_sku([sku]).get(sku) if qty else None
    capped = _capped(variant, qty) if variant is not None else 0

    def change(items: dict[str, int]) -> dict[str, int]:
        if sku not in items:
            raise CartError("sku", _("Este produto não está no carrinho."))
        if capped == 0:
            items.pop(sku)
        else:
            items[sku] = capped
        return items

    _update(session, change, create=False)
    if qty and variant is None:
        raise CartError("sku", _("Produto indisponível."))
    if qty and capped == 0:
        raise CartError("sku", _("Produto esgotado."))
    return CartChange(variant, capped, capped=capped < qty) if variant is not None else None


def cart_sync_quantities(session: SessionBase, quantities: Iterable[tuple[str, int]]) -> None:
    """Take the quantities the checkout engine settled on (stock adjustments), so the cart and its
    header badge count what the checkout holds."""
    settled = {sku: quantity for sku, quantity in quantities if 0 < quantity <= MAX_QUANTITY}
    items = cart_items(session)
    if any(sku in items and items[sku] != quantity for sku, quantity in settled.items()):
        _update(session, lambda current: {sku: settled.get(sku, qty) for sku, qty in current.items()}, create=False)


def cart_lines(session: SessionBase) -> list[CartLine]:
    """Lines with their sellable variants (1 query); unknown SKUs are dropped from the session."""
    items = cart_items(session)
    variants = variants_by_sku(items)
    if set(variants) != set(items):
        # a SKU added meanwhile (not looked up here) stays
        _update(
            session,
            lambda current: {sku: qty for sku, qty in current.items() if sku in variants or sku not in items},
            create=False,
        )
    return [CartLine(variants[sku], qty) for sku, qty in items.items() if sku in variants]


def coupon_usable(code: str) -> bool:
    """A code the engine can look up: 1–40 characters, no control character (U+0000 breaks Postgres)."""
    return 0 < len(code) <= COUPON_MAX_LENGTH and control_in(code, identifier=True) is None


def cart_coupons(session: SessionBase) -> list[str]:
    # Codes stored before the limits existed are dropped here too, so no cart can stay broken.
    cart = session_cart(session)
    raw = cart.discount_codes if cart is not None else []
    return [code for code in map(str, raw) if coupon_usable(code)][:MAX_COUPONS] if isinstance(raw, list) else []


def cart_set_coupons(session: SessionBase, codes: list[str]) -> None:
    """Keep the usable codes (unusable ones are dropped, not cut short into another code), once each."""
    cleaned: list[str] = []
    for code in codes:
        code = code.strip()
        if coupon_usable(code) and code.upper() not in (c.upper() for c in cleaned):
            cleaned.append(code)
    cleaned = cleaned[:MAX_COUPONS]
    cart = session_cart(session, create=bool(cleaned))
    if cart is not None and cart.discount_codes != cleaned:
        Cart.objects.filter(pk=cart.pk).update(discount_codes=cleaned, updated_at=timezone.now())


def cart_replace(session: SessionBase, *, items: list[tuple[str, int]], coupons: list[str], checkout_id: str) -> None:
    """The cart becomes exactly `items` and `coupons`, bound to `checkout_id` (a BCP permalink's checkout)."""
    lines: dict[str, int] = {}
    for sku, quantity in items:
        if 0 < quantity <= MAX_QUANTITY:
            lines[sku] = min(lines.get(sku, 0) + quantity, MAX_QUANTITY)
    _update(
        session,
        lambda _current: lines,
        coupons=[code for code in coupons if coupon_usable(code)][:MAX_COUPONS],
        checkout_id=checkout_id,
    )
    session[CHECKOUT_KEY] = checkout_id


def cart_bind_checkout(session: SessionBase, checkout_id: str) -> None:
    """The storefront checkout made from the session's cart: named by the session and linked on the cart."""
    session[CHECKOUT_KEY] = checkout_id
    cart = session_cart(session)
    if cart is not None:
        Cart.objects.filter(pk=cart.pk).update(checkout_id=checkout_id)


def cart_adopt(session: SessionBase, cart: Cart) -> None:
    """The session takes `cart` (a shared or agent cart opened from its `continue_url`) as its own."""
    session[CART_KEY] = cart.public_id
    if cart.checkout_id:
        session[CHECKOUT_KEY] = cart.checkout_id
    else:
        session.pop(CHECKOUT_KEY, None)


def cart_clear(session: SessionBase) -> None:
    """After an order: the session starts an empty cart (the old one stays as the order's history)."""
    for key in (CART_KEY, COUPONS_KEY, CHECKOUT_KEY):
        session.pop(key, None)
