"""Cart capability operations (`br.dev.bcp.shopping.cart`, UCP cart) for REST, MCP and A2A alike.

Re-exported by `bcp_app.service.operations` (`create_cart`, `get_cart`, `update_cart`, `cancel_cart`); the contract is
the operations one: `(ctx, …) -> OperationResult`, protocol errors raised as `ProtocolError`. A cart belongs to
the platform that created it (others get `not_found`, as for checkouts). `checkout_from_cart` is the
`cart_id` conversion of create checkout (BCP §4.1, §4.3): the cart's contents win and an incomplete checkout
already made from the cart is returned instead of a new one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.urls import reverse

from bcp_app.protocol.errors import ProtocolError, error_response
from bcp_app.protocol.field_errors import rooted
from bcp_app.protocol.names import BUYER_CONSENT, CART, CHECKOUT, DISCOUNT, PROTOCOL_VERSION
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.schemas.cart import CartCreateRequest, CartResponse, CartUpdateRequest, CartWrite
from bcp_app.protocol.validation import validate
from bcp_app.service import presenters, ratelimit
from bcp_app.service.inputs import buyer_input, context_input, line_inputs
from bcp_app.service.policies import policies_json
from shop import cart as shop_cart
from shop.cart import CartNotFound, cart_checkout_input, cart_link_checkout, cart_owner
from shop.checkout import types as ct
from shop.checkout.selectors import absolute_url, checkout_links
from shop.checkout.types import TERMINAL_STATUSES
from shop.models import Cart, Checkout

CART_CAPABILITIES = (CART, DISCOUNT, BUYER_CONSENT)
TEXTS = {
    "not_found": {"pt-br": "Carrinho não encontrado.", "en": "Cart not found."},
    "incompatible": {
        "pt-br": "A plataforma não negociou a capacidade de carrinho.",
        "en": "The platform did not negotiate the cart capability.",
    },
    "empty": {"pt-br": "Nenhum item pôde ser incluído no carrinho.", "en": "None of the items could be added."},
    "line_items_replaced": {
        "pt-br": "Os itens deste checkout são os do carrinho {cart_id}: os line_items enviados junto com cart_id "
        "foram substituídos pelos itens do carrinho. Confira os itens antes de concluir.",
        "en": "This checkout's items are those of cart {cart_id}: the line_items sent with cart_id were replaced "
        "by the cart's items. Check the items before completing.",
    },
}
LINE_ITEMS_REPLACED = "line_items_replaced"  # BCP-CHK-20: the platform's lines were not the ones used


def _text(ctx: Any, key: str) -> str:
    return TEXTS[key]["en" if ctx.language == "en" else "pt-br"]


def _not_found(ctx: Any) -> OperationResult:
    return OperationResult(
        200, error_response("not_found", _text(ctx, "not_found"), capabilities=ctx.ucp_capabilities(CART) or None)
    )


def _incompatible(ctx: Any) -> OperationResult:
    return OperationResult(200, error_response("capabilities_incompatible", _text(ctx, "incompatible")))


def _input(ctx: Any, body: CartWrite, *, update: bool) -> ct.CheckoutInput:
    codes = tuple(body.discounts.codes) if ctx.has(DISCOUNT) and body.discounts else ()
    return ct.CheckoutInput(
        lines=line_inputs(body, update=update),
        buyer=buyer_input(ctx, body.buyer),
        context=context_input(body.context),
        discount_codes=codes,
        signals=dict(body.signals or {}),
    )


def cart_body(view: Any, ctx: Any) -> dict[str, Any]:
    """The BCP cart response for the negotiated capabilities of `ctx`."""
    body: dict[str, Any] = {
        "ucp": {"version": PROTOCOL_VERSION, "capabilities": ctx.ucp_capabilities(*CART_CAPABILITIES)},
        "id": view.id,
        "line_items": [
            {
                "id": line.id,
                "item": {
                    key: value
                    for key, value in (
                        ("id", line.sku),
                        ("title", line.title),
                        ("price", line.price),
                        ("image_url", line.image_url),
                    )
                    if value not in ("", None)
                },
                "quantity": line.quantity,
                "totals": presenters.totals(line.totals),
            }
            for line in view.lines
        ],
        "currency": "BRL",
    }
    if view.buyer is not None:
        buyer = {
            k: v
            for k, v in vars(view.buyer).items()
            if k in ("first_name", "last_name", "email", "phone_number", "tax_id") and v
        }
        if ctx.has(BUYER_CONSENT):
            buyer["consent"] = presenters.consent_json(view.buyer.consent, checkout_links(view.language))
        if buyer:
            body["buyer"] = buyer
    if view.context is not None:
        # the hints as a checkout echoes them (`presenters`): the payment preference shows in the handlers' order
        body["context"] = {k: v for k, v in vars(view.context).items() if v and k != "payment"}
    if ctx.has(DISCOUNT):
        body["discounts"] = presenters.discounts(view)
    body["totals"] = presenters.totals(view.totals)
    if view.messages:
        body["messages"] = presenters.messages(view.messages)
    links = checkout_links(view.language)  # titles in the cart's language (BCP §5.1)
    body["links"] = [{"type": link.type, "url": link.url, "title": link.title} for link in links]
    body["policies"] = policies_json(view.language)
    body["continue_url"] = absolute_url(reverse("checkout:cart_open", kwargs={"cart_id": view.id}))
    body["expires_at"] = presenters.rfc3339(view.expires_at)
    return CartResponse.produce(body)  # the output model's body, as for checkouts and orders (one output set)


def _owned(ctx: Any, cart_id: str) -> bool:
    try:
        cart = cart_owner(str(cart_id))
    except CartNotFound:
        return False
    return ctx.checkout_owner.owns(cart)  # as for checkouts: anyone else gets `not_found` (issue 31)


def _refused(ctx: Any, cart_id: str) -> OperationResult | None:
    """What a read or write of one cart answers before touching it: the cart capability not negotiated, or a cart
    that is not the caller's; None when it may go on."""
    if not ctx.has(CART):
        return _incompatible(ctx)
    if not _owned(ctx, cart_id):
        return _not_found(ctx)
    return None


def _input_error(exc: Any, under: tuple[str, ...]) -> ProtocolError:
    """The cart service's path is into the cart; `under` names it from the request's root, as the schema's."""
    return ProtocolError("invalid_request", f"{rooted(exc.path, under)}: {exc.content}" if exc.path else exc.content)


def create_cart(
    ctx: Any, body: CartCreateRequest | Mapping[str, Any], *, under: tuple[str, ...] = ()
) -> OperationResult:
    """`under`: the member holding the cart in what the agent sent (A2A: `("cart",)`), which the paths of a wrong
    type, a missing member or a line the service refuses start from (MCP: its arguments' `cart`; REST's body is the
    cart itself; BCP-ERR-05)."""
    request = validate(CartCreateRequest, body, under=under)
    if not ctx.has(CART):
        return _incompatible(ctx)
    ratelimit.enforce_checkout_create(platform_id=ctx.platform_id, client_ip=ctx.extra.get("client_ip"))
    try:
        owner = ctx.checkout_owner  # anonymous: bound to its profile, as its checkouts are
        view = shop_cart.cart_create(
            data=_input(ctx, request, update=False),
            platform_id=owner.platform_id,
            session_key="" if owner.platform_id else owner.key,
            language=ctx.language,
        )
    except shop_cart.CartEmpty as exc:
        return OperationResult(
            200,
            error_response(
                "item_unavailable",
                _text(ctx, "empty"),
                capabilities=ctx.ucp_capabilities(CART) or None,
                messages=presenters.messages(exc.messages) or None,
            ),
        )  # built by the model, not edited after
    except shop_cart.CheckoutInputError as exc:
        raise _input_error(exc, under) from exc
    return OperationResult(201, cart_body(view, ctx))


def get_cart(ctx: Any, cart_id: str) -> OperationResult:
    if (refused := _refused(ctx, cart_id)) is not None:
        return refused
    return OperationResult(200, cart_body(shop_cart.cart_get(cart_id=str(cart_id)), ctx))


def update_cart(
    ctx: Any, cart_id: str, body: CartUpdateRequest | Mapping[str, Any], *, under: tuple[str, ...] = ()
) -> OperationResult:
    """`under`: as `create_cart`'s."""
    request = validate(CartUpdateRequest, body, under=under)
    if (refused := _refused(ctx, cart_id)) is not None:
        return refused
    try:
        view = shop_cart.cart_update(cart_id=str(cart_id), data=_input(ctx, request, update=True))
    except shop_cart.CartNotFound:
        return _not_found(ctx)
    except shop_cart.CheckoutInputError as exc:
        raise _input_error(exc, under) from exc
    return OperationResult(200, cart_body(view, ctx))


def cancel_cart(ctx: Any, cart_id: str) -> OperationResult:
    """UCP cart: the cart as it was before deletion; later operations on it are `not_found`."""
    if (refused := _refused(ctx, cart_id)) is not None:
        return refused
    try:
        return OperationResult(200, cart_body(shop_cart.cart_cancel(cart_id=str(cart_id)), ctx))
    except shop_cart.CartNotFound:
        return _not_found(ctx)


def link_cart(cart_id: str, checkout_id: str) -> None:
    cart_link_checkout(cart_id=cart_id, checkout_id=checkout_id)


@dataclass(frozen=True)
class CartConversion:
    """What `checkout_from_cart` made of a create with `cart_id`: the input to create with, the id of the cart's
    incomplete checkout to return instead, or the `not_found` answer; and the warning to add to the answer when
    the platform sent `line_items` that are not the cart's (they were replaced), else None."""

    outcome: ct.CheckoutInput | str | OperationResult
    notice: ct.CheckoutMessage | None = None


def _counted(lines: tuple[ct.LineInput, ...]) -> Counter[str]:
    counted: Counter[str] = Counter()
    for line in lines:
        counted[line.sku] += line.quantity
    return counted


def _replaced_notice(
    ctx: Any, cart_id: str, sent: tuple[ct.LineInput, ...], used: tuple[ct.LineInput, ...]
) -> ct.CheckoutMessage | None:
    """BCP-CHK-20: a `checkout_changed`-like warning at `$.line_items` when the platform's `line_items` (sent with
    `cart_id`) differ from the cart's, which win (BCP §4.3); None when it sent none or the same items."""
    if not sent or _counted(sent) == _counted(used):
        return None
    content = TEXTS[LINE_ITEMS_REPLACED]["en" if ctx.language == "en" else "pt-br"].format(cart_id=cart_id)
    return ct.CheckoutMessage("warning", LINE_ITEMS_REPLACED, content, path="$.line_items")


def checkout_from_cart(ctx: Any, cart_id: str, data: ct.CheckoutInput) -> CartConversion:
    """For create checkout with `cart_id`: the cart's contents as input (the cart wins over the payload's
    lines, buyer, context and codes; fulfillment and payment of the payload stay), or the id of the
    incomplete checkout already made from it (reused), or `not_found` when the cart is not the caller's; with
    the warning that the payload's own `line_items` were replaced, when it had others."""
    if not _owned(ctx, cart_id):
        return CartConversion(
            OperationResult(
                200,
                error_response(
                    "not_found", _text(ctx, "not_found"), capabilities=ctx.ucp_capabilities(CHECKOUT) or None
                ),
            )
        )
    cart = Cart.objects.prefetch_related("lines").get(public_id=cart_id)
    contents = cart_checkout_input(cart, signals=data.signals)
    notice = _replaced_notice(ctx, cart_id, data.lines, contents.lines)
    if cart.checkout_id:
        status = Checkout.objects.filter(public_id=cart.checkout_id).values_list("status", flat=True).first()
        if status is not None and status not in TERMINAL_STATUSES:
            return CartConversion(cart.checkout_id, notice)
    codes = contents.discount_codes if data.discount_codes is not None else None
    return CartConversion(
        replace(
            data,
            lines=contents.lines,
            buyer=contents.buyer or data.buyer,
            context=contents.context or data.context,
            discount_codes=codes,
        ),
        notice,
    )
