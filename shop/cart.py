"""The cart: one `Cart` row (shop/models/cart.py), the storefront's and the BCP cart capability's.

**The storefront's session cart** (first half): the session points to its Cart (session["cart_id"]); an
agent's cart opened by the buyer through its `continue_url` becomes the session's cart. Adding or changing a
quantity caps it at the stock on sale (backorder variants excepted) and says so; prices, discounts and the
final stock check are decided by the checkout engine when the buyer goes to /checkout/ (the same engine agents
use), whose quantities the cart then takes (`cart_sync_quantities`). The session also names the storefront
checkout (session["checkout_id"]).

**The BCP cart capability** (second half; UCP cart): create, get, update (full replacement), cancel, estimate.

    cart_create(*, data: CheckoutInput, platform_id: str | None, session_key: str, language: str) -> CartResult
        # CartEmpty(messages) when every item is unavailable (nothing stored, BCP Error Response)
    cart_get(*, cart_id: str) -> CartResult            # CartNotFound: unknown, canceled or expired
    cart_update(*, cart_id: str, data: CheckoutInput) -> CartResult
    cart_cancel(*, cart_id: str) -> CartResult         # the cart as it was; later calls: CartNotFound
    cart_checkout_input(cart: Cart) -> CheckoutInput   # a cart's contents as the checkout it converts to

A cart stores lines, buyer, context and codes; each read prices it with the checkout engine's own line
planning and coupon rules (`shop.checkout.evaluate.plan_lines`, `shop.checkout.pricing`), so its estimate and the
checkout it converts to agree. `CheckoutInputError` for structurally bad input, as for checkouts.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from kernel.json_limits import control_in
from shop.catalog.selectors import variant_titles, variants_by_sku
from shop.checkout.evaluate import CheckoutInputError, plan_lines
from shop.checkout.pricing import coupon_total_text, coupons_evaluate, coupons_load
from shop.checkout.selectors import RowReader
from shop.checkout.types import (
    AppliedDiscountView,
    BuyerInput,
    CheckoutInput,
    CheckoutMessage,
    ContextInput,
    LineInput,
    Total,
)
from shop.models import Cart, Product, ProductImage, Variant
from shop.models import CartLine as CartLineRow
from shop.models.cart import new_cart_line_id

CART_KEY = "cart_id"  # the public id of the session's Cart
COUPONS_KEY = "cart_coupons"  # before carts were rows; only dropped now
CHECKOUT_KEY = "checkout_id"
MAX_QUANTITY = 99
# What of a refused quantity the product page gets back to show in its field: enough for any number typed.
TYPED_QUANTITY_MAX = 12
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
    photo: ProductImage | None = None  # the product's main photo (else its first), for the cart page

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


def _items_sql() -> str:
    line, cart = CartLineRow._meta.db_table, Cart._meta.db_table  # from the models; the values are parameters
    return (
        f"SELECT l.sku, l.quantity FROM {line} l JOIN {cart} c ON c.id = l.cart_id"  # noqa: S608
        " WHERE c.public_id = %s AND c.status = %s AND c.expires_at > %s ORDER BY l.position, l.id"
    )


def cart_items(session: SessionBase | None) -> dict[str, int]:
    """{SKU: quantity} of the session's cart, in cart order (1 query; none without a cart).

    Every storefront page of a buyer with a cart asks (the mini-cart badge): a hand-written statement, since
    compiling the ORM's join cost more CPU than running it (issue 34)."""
    cart_id = session.get(CART_KEY) if session is not None else None
    if not isinstance(cart_id, str):
        return {}
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_items_sql(), [cart_id, Cart.STATUS_ACTIVE, now])
        rows = cursor.fetchall()
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
    text = str(raw).strip()
    try:
        quantity = int(text)
    except (TypeError, ValueError):
        if re.fullmatch(r"-?\d+[.,]\d+", text):  # "1.5": units are whole
            raise CartError("quantity", _("Informe a quantidade em unidades inteiras, como 1 ou 2.")) from None
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
    try:
        qty = _parse_quantity(quantity, allow_zero=True)
    except CartError as exc:
        raise CartError(exc.field, _line_quantity_message(sku, quantity, exc.message)) from None
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


def _line_quantity_message(sku: str, typed: object, reason: str) -> str:
    """A refused quantity on the cart page names its product: the page lists every line and its message sits above
    them all (QA walk: "Quantidade inválida." over two products, after one field was left empty)."""
    variant = variants_by_sku([sku]).get(sku)
    if variant is None:
        return reason
    if not str(typed).strip():
        return _("Informe a quantidade de %(product)s (0 remove o item).") % {"product": variant.display_title}
    return _("%(product)s: %(reason)s") % {"product": variant.display_title, "reason": reason[:1].lower() + reason[1:]}


def cart_sync_quantities(session: SessionBase, quantities: Iterable[tuple[str, int]]) -> None:
    """Take the quantities the checkout engine settled on (stock adjustments), so the cart and its
    header badge count what the checkout holds."""
    settled = {sku: quantity for sku, quantity in quantities if 0 < quantity <= MAX_QUANTITY}
    items = cart_items(session)
    if any(sku in items and items[sku] != quantity for sku, quantity in settled.items()):
        _update(session, lambda current: {sku: settled.get(sku, qty) for sku, qty in current.items()}, create=False)


# The cart page's lines in one hand-written statement: the cart's coupon codes, each cart line with its sellable
# variant, the variant's product and the product's main photo. Three ORM reads (cart_items, variants_by_sku,
# product_main_photos) and the codes' own statement cost more CPU than Postgres spent running them (issue 34); this
# SQL is built once per process. The cart comes first and its lines by an outer join: a cart without lines is one
# row of NULL lines, which still carries its codes.
_LINE_ROWS = RowReader(Variant, Product, ProductImage)


@functools.cache
def _lines_sql() -> str:
    line, cart, variant, product, image = (
        model._meta.db_table for model in (CartLineRow, Cart, Variant, Product, ProductImage)
    )  # from the models; the values are parameters
    # The main photo first, then position and id: ProductImage's ordering.
    first_photo = (
        f"SELECT f.id FROM {image} f WHERE f.product_id = p.id"  # noqa: S608
        " ORDER BY f.is_main DESC, f.position, f.id LIMIT 1"
    )
    return (
        f"SELECT c.discount_codes, l.sku, l.quantity, {_LINE_ROWS.columns('v', 'p', 'i')}"  # noqa: S608
        f" FROM {cart} c LEFT JOIN {line} l ON l.cart_id = c.id"
        f" LEFT JOIN {variant} v ON v.sku = l.sku AND v.active"
        f" LEFT JOIN {product} p ON p.id = v.product_id AND p.active"
        f" LEFT JOIN {image} i ON i.id = ({first_photo})"
        " WHERE c.public_id = %s AND c.status = %s AND c.expires_at > %s ORDER BY l.position, l.id"
    )


@dataclass(frozen=True)
class CartPage:
    """What the cart page reads of the session's cart: its sellable lines and its usable coupon codes."""

    lines: list[CartLine]
    coupons: list[str]
    # Titles of the lines this read took out of the cart (off sale or gone), for the buyer to be told once: the
    # next read no longer finds them. The SKU when the catalog no longer knows it.
    removed: tuple[str, ...] = ()


def cart_page(session: SessionBase) -> CartPage:
    """The lines with their sellable variants, products and main photos, and the cart's coupon codes (as
    `cart_coupons` reads them), in 1 statement (none without a cart); unknown or unsellable SKUs are dropped from
    the session's cart."""
    cart_id = session.get(CART_KEY) if session is not None else None
    if not isinstance(cart_id, str):
        return CartPage([], [])
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_lines_sql(), [cart_id, Cart.STATUS_ACTIVE, now])
        rows = cursor.fetchall()
    items: dict[str, int] = {}
    found: dict[str, tuple[Variant, ProductImage | None]] = {}
    for _codes, sku, quantity, *values in rows:
        if sku is None:  # a cart without lines
            continue
        items[sku] = items.get(sku, 0) + quantity
        if sku not in found:
            variant, product, photo = _LINE_ROWS.instances(values)
            if variant is not None and product is not None:
                variant._state.fields_cache["product"] = product  # as select_related("product") sets it
                if photo is not None:
                    photo._state.fields_cache["product"] = product
                found[sku] = (variant, photo)  # type: ignore[assignment]
    removed: tuple[str, ...] = ()
    if set(found) != set(items):
        # a SKU added meanwhile (not looked up here) stays
        _update(
            session,
            lambda current: {sku: qty for sku, qty in current.items() if sku in found or sku not in items},
            create=False,
        )
        gone = [sku for sku in items if sku not in found]
        titles = variant_titles(gone)  # a second statement only when a line was dropped
        removed = tuple(titles.get(sku, sku) for sku in gone)
    lines = [CartLine(found[sku][0], qty, found[sku][1]) for sku, qty in items.items() if sku in found]
    return CartPage(lines, _usable_codes(rows[0][0] if rows else []), removed)


def coupon_usable(code: str) -> bool:
    """A code the engine can look up: 1–40 characters, no control character (U+0000 breaks Postgres)."""
    return 0 < len(code) <= COUPON_MAX_LENGTH and control_in(code, identifier=True) is None


def _codes_sql() -> str:
    cart = Cart._meta.db_table  # from the model; the values are parameters
    return f"SELECT discount_codes FROM {cart} WHERE public_id = %s AND status = %s AND expires_at > %s"  # noqa: S608


def cart_coupons(session: SessionBase) -> list[str]:
    """The codes of the session's active cart (1 hand-written statement, as `cart_items`)."""
    cart_id = session.get(CART_KEY)
    raw: object = []
    if isinstance(cart_id, str):
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            cursor.execute(_codes_sql(), [cart_id, Cart.STATUS_ACTIVE, now])
            row = cursor.fetchone()
        raw = row[0] if row else []
    return _usable_codes(raw)


def _usable_codes(raw: object) -> list[str]:
    """The usable codes of a cart's `discount_codes` column value. Codes stored before the limits existed are
    dropped here too, so no cart can stay broken."""
    if isinstance(raw, (str, bytes)):  # JSON text (Django reads the column as text and decodes it itself)
        raw = json.loads(raw)
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


# --- the BCP cart capability ------------------------------------------------------------------------


__all__ = [
    "CartEmpty",
    "CartNotFound",
    "CartResult",
    "CartView",
    "CheckoutInputError",
    "cart_cancel",
    "cart_checkout_input",
    "cart_create",
    "cart_get",
    "cart_update",
]


class CartNotFound(LookupError):
    """No active cart with that id (unknown, canceled or expired): BCP `not_found`."""


class CartEmpty(Exception):
    """Nothing could be put in a cart (every item unavailable): BCP Error Response, nothing stored."""

    def __init__(self, messages: list[CheckoutMessage]) -> None:
        super().__init__("; ".join(m.content for m in messages))
        self.messages = messages


@dataclass(frozen=True)
class CartLineView:
    id: str
    sku: str
    title: str
    price: int
    quantity: int
    image_url: str

    @property
    def totals(self) -> tuple[Total, ...]:
        return (Total("subtotal", self.price * self.quantity), Total("total", self.price * self.quantity))


@dataclass(frozen=True)
class CartView:
    cart: Cart
    id: str
    lines: tuple[CartLineView, ...]
    buyer: BuyerInput | None
    context: ContextInput | None
    discount_codes: tuple[str, ...]
    discounts_applied: tuple[AppliedDiscountView, ...]
    totals: tuple[Total, ...]
    messages: tuple[CheckoutMessage, ...]
    expires_at: datetime
    checkout_id: str
    platform_id: str | None
    language: str


CartResult = CartView


def _buyer_json(buyer: BuyerInput | None) -> dict[str, object] | None:
    if buyer is None:
        return None
    out: dict[str, object] = {
        key: value
        for key, value in (
            ("first_name", buyer.first_name),
            ("last_name", buyer.last_name),
            ("email", buyer.email),
            ("phone_number", buyer.phone_number),
            ("tax_id", buyer.tax_id),
        )
        if value
    }
    if buyer.consent is not None:  # buyer consent extension: carried to the checkout the cart converts to
        out["consent"] = [list(item) for item in buyer.consent]
        out["consent_captured_by"] = buyer.consent_captured_by
    return out


def _buyer_of(stored: dict[str, object] | None) -> BuyerInput | None:
    if stored is None:
        return None
    fields = {key: value for key, value in stored.items() if key not in ("consent", "consent_captured_by")}
    consent = stored.get("consent")
    return BuyerInput(
        **fields,  # type: ignore[arg-type]
        consent=tuple((str(p), bool(g)) for p, g in consent) if isinstance(consent, list) else None,
        consent_captured_by=str(stored.get("consent_captured_by", "")),
    )


def _context_json(context: ContextInput | None) -> dict[str, Any] | None:
    return {k: v for k, v in vars(context).items() if v} if context is not None else None


def _estimate(cart: Cart, lines: list[CartLineRow], *, now: datetime) -> CartView:
    """Price the cart now: line titles, prices, stock messages, coupon discounts, estimated totals."""
    data = CheckoutInput(
        lines=tuple(LineInput(sku=line.sku, quantity=line.quantity, line_id=line.public_id) for line in lines)
    )
    planned, messages, _rejections, _unavailable = plan_lines(
        data, {line.public_id: line for line in lines}, is_update=True
    )
    subtotal = sum(line.amount for line in planned)  # an unavailable line shows its price, counts nothing
    codes = tuple(cart.discount_codes or ())
    email = str((cart.buyer or {}).get("email", ""))
    coupons = coupons_evaluate(
        codes=codes,
        subtotal=subtotal,
        email=email,
        now=now,
        loaded=coupons_load(codes, email=email, exclude_checkout_pk=None),
    )
    totals = [Total("subtotal", subtotal)]
    totals += [Total("discount", -applied.amount, coupon_total_text(applied.code)) for applied in coupons.applied]
    totals.append(Total("total", subtotal - coupons.total))
    return CartView(
        cart=cart,
        id=cart.public_id,
        lines=tuple(
            CartLineView(
                id=p.public_id, sku=p.sku, title=p.title, price=p.unit_price, quantity=p.quantity, image_url=p.image_url
            )
            for p in planned
        ),
        buyer=_buyer_of(cart.buyer),
        context=ContextInput.stored(cart.context) if cart.context else None,
        discount_codes=codes,
        discounts_applied=coupons.applied,
        totals=tuple(totals),
        messages=(*messages, *coupons.messages),
        expires_at=cart.expires_at,
        checkout_id=cart.checkout_id,
        platform_id=cart.platform_id,
        language=cart.language,
    )


def _active(cart_id: str, *, lock: bool = False) -> Cart:
    rows = Cart.objects.select_for_update() if lock else Cart.objects
    cart = rows.filter(public_id=cart_id, status=Cart.STATUS_ACTIVE, expires_at__gt=timezone.now()).first()
    if cart is None:
        raise CartNotFound(cart_id)
    return cart


def _validate(data: CheckoutInput) -> None:
    if len(data.lines) > 100:
        raise CheckoutInputError("$.line_items", "No máximo 100 itens por carrinho.")
    for index, line in enumerate(data.lines):
        if not 1 <= line.quantity <= 999:
            raise CheckoutInputError(f"$.line_items[{index}].quantity", "A quantidade deve ser um inteiro de 1 a 999.")
        if not line.sku.strip() or len(line.sku) > 64:
            raise CheckoutInputError(f"$.line_items[{index}].item.id", "Informe o id do item (até 64 caracteres).")
    for index, code in enumerate(data.discount_codes or ()):
        if len(code) > 40:
            raise CheckoutInputError(f"$.discounts.codes[{index}]", "No máximo 40 caracteres.")


def _write(cart: Cart, data: CheckoutInput, existing: list[CartLineRow]) -> list[CartLineRow]:
    known = {line.public_id: line for line in existing}
    for index, line in enumerate(data.lines):
        if line.line_id and line.line_id not in known:
            raise CheckoutInputError(f"$.line_items[{index}].id", "Linha desconhecida neste carrinho.")
    cart.buyer = _buyer_json(data.buyer)
    cart.context = _context_json(data.context)
    cart.discount_codes = list(data.discount_codes or ())
    cart.expires_at = cart_expiry()
    cart.save()
    CartLineRow.objects.filter(cart=cart).delete()
    rows = [
        CartLineRow(
            cart=cart,
            public_id=line.line_id or new_cart_line_id(),
            sku=line.sku.strip(),
            quantity=line.quantity,
            position=position,
        )
        for position, line in enumerate(data.lines)
    ]
    return CartLineRow.objects.bulk_create(rows)


def cart_create(
    *, data: CheckoutInput, platform_id: str | None = None, session_key: str = "", language: str = "pt-br"
) -> CartView:
    _validate(data)
    now = timezone.now()
    probe = Cart(
        public_id="", expires_at=now, discount_codes=list(data.discount_codes or ()), buyer=_buyer_json(data.buyer)
    )
    preview = _estimate(
        probe,
        [
            CartLineRow(public_id=f"li_{i}", sku=line.sku.strip(), quantity=line.quantity)
            for i, line in enumerate(data.lines)
        ],
        now=now,
    )
    unavailable = [m for m in preview.messages if m.code in ("item_unavailable", "out_of_stock")]
    if not data.lines or len(unavailable) == len(data.lines):
        raise CartEmpty(
            [CheckoutMessage(m.type, m.code, m.content, "unrecoverable") for m in unavailable]
            or [
                CheckoutMessage(
                    "error", "field_required", "Adicione ao menos um item.", "unrecoverable", "$.line_items"
                )
            ]
        )
    with transaction.atomic():
        cart = Cart(platform_id=platform_id, session_key=session_key, language=language, expires_at=cart_expiry())
        lines = _write(cart, data, [])
    return _estimate(cart, lines, now=now)


def cart_get(*, cart_id: str) -> CartView:
    cart = _active(cart_id)
    return _estimate(cart, list(cart.lines.all()), now=timezone.now())


def cart_update(*, cart_id: str, data: CheckoutInput) -> CartView:
    _validate(data)
    with transaction.atomic():
        cart = _active(cart_id, lock=True)
        lines = _write(cart, data, list(cart.lines.all()))
    return _estimate(cart, lines, now=timezone.now())


def cart_cancel(*, cart_id: str) -> CartView:
    with transaction.atomic():
        cart = _active(cart_id, lock=True)
        view = _estimate(cart, list(cart.lines.all()), now=timezone.now())
        cart.status = Cart.STATUS_CANCELED
        cart.save(update_fields=["status", "updated_at"])
    return view


def cart_owner(cart_id: str) -> Cart:
    """An active cart, for its owner: `platform_id` (None: anonymous or storefront) and `session_key` (the
    anonymous agent's `profile:<hash>`, or the storefront session). Raises CartNotFound."""
    return _active(cart_id)


def cart_checkout_input(cart: Cart, *, signals: dict[str, str] | None = None) -> CheckoutInput:
    """The checkout a cart converts to: its lines, buyer, context and codes (the cart wins, UCP cart)."""
    lines = list(cart.lines.all())
    return CheckoutInput(
        lines=tuple(LineInput(sku=line.sku, quantity=line.quantity) for line in lines),
        buyer=_buyer_of(cart.buyer),
        context=ContextInput.stored(cart.context) if cart.context else None,
        discount_codes=tuple(cart.discount_codes or ()),
        signals=dict(signals or {}),
    )


def cart_link_checkout(*, cart_id: str, checkout_id: str) -> None:
    Cart.objects.filter(public_id=cart_id).update(checkout_id=checkout_id, updated_at=timezone.now())
