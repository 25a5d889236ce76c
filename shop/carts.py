"""Cart services for the BCP cart capability (UCP cart): create, get, update (full replacement), cancel, estimate.

    cart_create(*, data: CheckoutInput, platform_id: str | None, session_key: str, language: str) -> CartResult
        # CartEmpty(messages) when every item is unavailable (nothing stored, BCP Error Response)
    cart_get(*, cart_id: str) -> CartResult            # CartNotFound: unknown, canceled or expired
    cart_update(*, cart_id: str, data: CheckoutInput) -> CartResult
    cart_cancel(*, cart_id: str) -> CartResult         # the cart as it was; later calls: CartNotFound
    cart_checkout_input(cart: Cart) -> CheckoutInput   # a cart's contents as the checkout it converts to

A cart stores lines, buyer, context and codes; each read prices it with the checkout engine's own line
planning and coupon rules (`shop.checkout.evaluate.plan_lines`, `shop.checkout.coupons`), so its estimate and the
checkout it converts to agree. `CheckoutInputError` for structurally bad input, as for checkouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from shop.cart import cart_expiry
from shop.checkout.coupons import coupons_evaluate, coupons_load
from shop.checkout.evaluate import CheckoutInputError, plan_lines
from shop.checkout.outputs import AppliedDiscountView, Total
from shop.checkout.types import BuyerInput, CheckoutInput, CheckoutMessage, ContextInput, LineInput
from shop.models import Cart, CartLine
from shop.models.cart import new_cart_line_id

__all__ = ["CartEmpty", "CartNotFound", "CartResult", "CartView", "CheckoutInputError", "cart_cancel",
           "cart_checkout_input", "cart_create", "cart_get", "cart_update"]


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
    out: dict[str, object] = {key: value for key, value in (
        ("first_name", buyer.first_name), ("last_name", buyer.last_name), ("email", buyer.email),
        ("phone_number", buyer.phone_number), ("tax_id", buyer.tax_id)) if value}
    if buyer.consent is not None:  # buyer consent extension: carried to the checkout the cart converts to
        out["consent"] = [list(item) for item in buyer.consent]
        out["consent_captured_by"] = buyer.consent_captured_by
    return out


def _buyer_of(stored: dict[str, object] | None) -> BuyerInput | None:
    if stored is None:
        return None
    fields = {key: value for key, value in stored.items() if key not in ("consent", "consent_captured_by")}
    consent = stored.get("consent")
    return BuyerInput(**fields,  # type: ignore[arg-type]
                      consent=tuple((str(p), bool(g)) for p, g in consent) if isinstance(consent, list) else None,
                      consent_captured_by=str(stored.get("consent_captured_by", "")))


def _context_json(context: ContextInput | None) -> dict[str, str] | None:
    return {k: v for k, v in vars(context).items() if v} if context is not None else None


def _estimate(cart: Cart, lines: list[CartLine], *, now: datetime) -> CartView:
    """Price the cart now: line titles, prices, stock messages, coupon discounts, estimated totals."""
    data = CheckoutInput(lines=tuple(LineInput(sku=line.sku, quantity=line.quantity, line_id=line.public_id)
                                     for line in lines))
    planned, messages, _rejections, _unavailable = plan_lines(data, {line.public_id: line for line in lines},
                                                              is_update=True)
    subtotal = sum(line.unit_price * line.quantity for line in planned)
    codes = tuple(cart.discount_codes or ())
    email = str((cart.buyer or {}).get("email", ""))
    coupons = coupons_evaluate(codes=codes, subtotal=subtotal, email=email, now=now,
                               loaded=coupons_load(codes, email=email, exclude_checkout_pk=None))
    totals = [Total("subtotal", subtotal)]
    totals += [Total("discount", -applied.amount, f"Cupom {applied.code}") for applied in coupons.applied]
    totals.append(Total("total", subtotal - coupons.total))
    return CartView(
        cart=cart,
        id=cart.public_id,
        lines=tuple(CartLineView(id=p.public_id, sku=p.sku, title=p.title, price=p.unit_price,
                                 quantity=p.quantity, image_url=p.image_url) for p in planned),
        buyer=_buyer_of(cart.buyer),
        context=ContextInput(**cart.context) if cart.context else None,
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


def _write(cart: Cart, data: CheckoutInput, existing: list[CartLine]) -> list[CartLine]:
    known = {line.public_id: line for line in existing}
    for index, line in enumerate(data.lines):
        if line.line_id and line.line_id not in known:
            raise CheckoutInputError(f"$.line_items[{index}].id", "Linha desconhecida neste carrinho.")
    cart.buyer = _buyer_json(data.buyer)
    cart.context = _context_json(data.context)
    cart.discount_codes = list(data.discount_codes or ())
    cart.expires_at = cart_expiry()
    cart.save()
    CartLine.objects.filter(cart=cart).delete()
    rows = [CartLine(cart=cart, public_id=line.line_id or new_cart_line_id(), sku=line.sku.strip(),
                     quantity=line.quantity, position=position) for position, line in enumerate(data.lines)]
    return CartLine.objects.bulk_create(rows)


def cart_create(
    *, data: CheckoutInput, platform_id: str | None = None, session_key: str = "", language: str = "pt-br"
) -> CartView:
    _validate(data)
    now = timezone.now()
    probe = Cart(public_id="", expires_at=now, discount_codes=list(data.discount_codes or ()),
                 buyer=_buyer_json(data.buyer))
    preview = _estimate(probe, [CartLine(public_id=f"li_{i}", sku=line.sku.strip(), quantity=line.quantity)
                                for i, line in enumerate(data.lines)], now=now)
    unavailable = [m for m in preview.messages if m.code in ("item_unavailable", "out_of_stock")]
    if not data.lines or len(unavailable) == len(data.lines):
        raise CartEmpty([CheckoutMessage(m.type, m.code, m.content, "unrecoverable") for m in unavailable]
                        or [CheckoutMessage("error", "field_required", "Adicione ao menos um item.", "unrecoverable",
                                            "$.line_items")])
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
        context=ContextInput(**cart.context) if cart.context else None,
        discount_codes=tuple(cart.discount_codes or ()),
        signals=dict(signals or {}),
    )


def cart_link_checkout(*, cart_id: str, checkout_id: str) -> None:
    Cart.objects.filter(public_id=cart_id).update(checkout_id=checkout_id, updated_at=timezone.now())
