"""Checkout operations (BCP §4–§6): request model → engine input → the one engine (`shop.checkout.services`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from django.utils import translation
from pydantic import BaseModel

from bcp_app.protocol.errors import ProtocolError, error_response
from bcp_app.protocol.names import (
    AP2_MANDATE,
    CART,
    CHECKOUT,
    DISCOUNT,
    FULFILLMENT,
)
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.schemas.checkout import (
    CheckoutCancelRequest,
    CheckoutCompleteRequest,
    CheckoutCreateRequest,
    CheckoutResponse,
    CheckoutUpdateRequest,
    CheckoutWrite,
)
from bcp_app.protocol.schemas.payment import PaymentIn
from bcp_app.protocol.validation import validate
from bcp_app.service import mandates, presenters, ratelimit, trust
from bcp_app.service.carts import checkout_from_cart, link_cart
from bcp_app.service.context import RequestContext
from bcp_app.service.inputs import buyer_input, context_input, line_inputs
from bcp_app.service.operations.base import checkout_result, incompatible, not_found_checkout, owned, text
from kernel.joined import presenting, stored_for
from shop.checkout import services
from shop.checkout import types as ct

# --- request model → engine input ---------------------------------------------------------------------


def _payment(payment: PaymentIn | None) -> ct.PaymentInput | None:
    if payment is None:
        return None
    return ct.PaymentInput(
        instruments=tuple(
            ct.InstrumentInput(
                id=i.id,
                handler_id=i.handler_id,
                type=i.type,
                selected=i.selected,
                credential=({"type": i.credential.type, "token": i.credential.token} if i.credential else None),
                installments=i.installments or 1,
            )
            for i in payment.instruments
        )
    )


def _checkout_input(ctx: RequestContext, body: CheckoutWrite, *, update: bool) -> ct.CheckoutInput:
    fulfillment = None
    if ctx.has(FULFILLMENT):  # BCP-NEG-08: inputs of inactive extensions are ignored
        methods = []
        for m in body.fulfillment.methods if body.fulfillment else []:
            destinations = tuple(
                ct.AddressInput(
                    id=d.id,
                    first_name=d.first_name,
                    last_name=d.last_name,
                    phone_number=d.phone_number,
                    street_address=d.street_address,
                    extended_address=d.extended_address,
                    address_locality=d.address_locality,
                    address_region=d.address_region,
                    postal_code=d.postal_code,
                    address_country=d.address_country or "BR",
                )
                for d in m.destinations
                if d.type == "shipping_address"  # BCP-FUL-03: platform-written pickup destinations ignored
            )
            methods.append(
                ct.FulfillmentMethodInput(
                    type=m.type,  # type: ignore[arg-type]  # the engine rejects unknown method types
                    id=m.id,
                    line_item_ids=tuple(m.line_item_ids),
                    destinations=destinations,
                    selected_destination_id=m.selected_destination_id,
                    groups=tuple(ct.GroupInput(id=g.id, selected_option_id=g.selected_option_id) for g in m.groups),
                )
            )
        fulfillment = ct.FulfillmentInput(methods=tuple(methods))
    codes = None
    if ctx.has(DISCOUNT):
        codes = tuple(body.discounts.codes) if body.discounts else ()
    return ct.CheckoutInput(
        lines=line_inputs(body, update=update),
        buyer=buyer_input(ctx, body.buyer),
        fulfillment=fulfillment,
        discount_codes=codes,
        payment=_payment(body.payment),
        context=context_input(body.context),
        signals=dict(body.signals or {}),
        offered_handler_ids=_offered(ctx),
        caller_may_complete=trust.refusal(ctx, trust.CHECKOUT_COMPLETE) is None,
        fulfillment_by_buyer=not ctx.has(FULFILLMENT),
    )


def _offered(ctx: RequestContext) -> tuple[str, ...]:
    """BCP §11.2 / BCP-PAY-03: the handler ids this checkout offers this platform (those its profile lists)."""
    return presenters.payment_handler_ids(ctx)


def _language(ctx: RequestContext, body: CheckoutWrite) -> str:
    if body.context is not None and body.context.language:
        return "en" if body.context.language.lower().startswith("en") else "pt-br"
    return ctx.language


def _input_error(exc: Exception) -> ProtocolError:
    path = getattr(exc, "path", "") or ""
    content = getattr(exc, "content", str(exc))
    return ProtocolError("invalid_request", f"{path}: {content}" if path else content)


# --- checkout -------------------------------------------------------------------------------------------


def _engine(ctx: RequestContext, call: Callable[[], ct.CheckoutResult]) -> OperationResult:
    """An engine write on an existing checkout: its result, `not_found`, or the engine's input error.

    Where the engine joins its last transaction (`kernel.joined`, e.g. a card approval) and the caller keeps the
    answer there (`idempotency.run(joinable=True)`), the answer it stores is this result presented in the
    caller's language, as it is after the engine returns; returned as it was stored when it is the engine's."""
    language = translation.get_language()

    def present(engine_result: ct.CheckoutResult) -> OperationResult:
        if translation.get_language() == language:  # the engine speaks the checkout's language
            return checkout_result(ctx, engine_result)
        with translation.override(language):
            return checkout_result(ctx, engine_result)

    try:
        with presenting(present):
            result = call()
    except services.CheckoutNotFound:
        return not_found_checkout(ctx)
    except services.CheckoutInputError as exc:
        raise _input_error(exc) from exc
    joined: OperationResult | None = stored_for(result)
    return joined if joined is not None else checkout_result(ctx, result)


def _checkout_request[M: BaseModel](
    ctx: RequestContext, model: type[M], body: M | Mapping[str, Any] | None, checkout_id: str
) -> M | OperationResult:
    """The request on an existing checkout, or `not_found` when the caller holds no such checkout whatever the body
    says (BCP-CHK-13: the id names the resource; a body's problems are only about a checkout that exists). Only a
    refused body costs the look-up. A valid body without the checkout capability negotiated is `incompatible`."""
    try:
        request = validate(model, body)
    except ProtocolError:
        if ctx.has(CHECKOUT) and not _visible(ctx, checkout_id):
            return not_found_checkout(ctx)
        raise
    if not ctx.has(CHECKOUT):
        return incompatible(ctx, CHECKOUT)
    return request


def _visible(ctx: RequestContext, checkout_id: str) -> bool:
    try:
        return owned(ctx, services.checkout_get(checkout_id=str(checkout_id)).checkout)
    except services.CheckoutNotFound:
        return False


def create_checkout(ctx: RequestContext, body: CheckoutCreateRequest | Mapping[str, Any]) -> OperationResult:
    request = validate(CheckoutCreateRequest, body)
    if not ctx.has(CHECKOUT):
        return incompatible(ctx, CHECKOUT)
    # Every transport creates checkouts here, so one budget covers REST, MCP and A2A alike.
    ratelimit.enforce_checkout_create(platform_id=ctx.platform_id, client_ip=ctx.extra.get("client_ip"))
    data = _checkout_input(ctx, request, update=False)
    notices: list[ct.CheckoutMessage] = []
    if request.cart_id is not None and ctx.has(CART):  # BCP §4.3: the cart wins; its incomplete checkout is reused
        converted = checkout_from_cart(ctx, request.cart_id, data)
        notices = [converted.notice] if converted.notice is not None else []  # BCP-CHK-20: lines replaced
        if isinstance(converted.outcome, str):
            return get_checkout(ctx, converted.outcome, notices=notices)
        if isinstance(converted.outcome, OperationResult):
            return converted.outcome
        data = converted.outcome
    try:
        owner = ctx.checkout_owner  # anonymous: bound to its profile (or the permalink's session), issue 31
        result = services.checkout_create(
            data=data,
            platform_id=owner.platform_id,
            language=_language(ctx, request),
            session_key="" if owner.platform_id else owner.key,
            mandate_required=ctx.has(AP2_MANDATE),  # PIX.md §7: locked to AP2
            creator_tier=trust.agent_tier(ctx),  # what the shop's own completion of it checks (settle.py)
        )
    except services.CheckoutCreateImpossible as exc:
        reasons = [{**message, "severity": "unrecoverable"} for message in presenters.messages(exc.messages)]
        return OperationResult(
            200,
            error_response(
                "item_unavailable",
                text(ctx, "nothing_created"),
                capabilities=ctx.ucp_capabilities(CHECKOUT) or None,
                messages=reasons or None,
            ),
        )
    except services.CheckoutInputError as exc:
        raise _input_error(exc) from exc
    if request.cart_id is not None and ctx.has(CART):
        link_cart(request.cart_id, result.checkout.public_id)
    if notices:
        result = replace(result, messages=[*result.messages, *notices])
    return checkout_result(ctx, result, status=201)


def get_checkout(
    ctx: RequestContext, checkout_id: str, *, notices: list[ct.CheckoutMessage] | None = None
) -> OperationResult:
    """The checkout, with `notices` (this call's own warnings, e.g. a create's replaced lines) after its messages."""
    if not ctx.has(CHECKOUT):
        return incompatible(ctx, CHECKOUT)
    try:
        result = services.checkout_get(checkout_id=str(checkout_id))
    except services.CheckoutNotFound:
        return not_found_checkout(ctx)
    if not owned(ctx, result.checkout):
        return not_found_checkout(ctx)
    if notices:
        result = replace(result, messages=[*result.messages, *notices])
    return checkout_result(ctx, result)


def update_checkout(
    ctx: RequestContext, checkout_id: str, body: CheckoutUpdateRequest | Mapping[str, Any]
) -> OperationResult:
    request = _checkout_request(ctx, CheckoutUpdateRequest, body, checkout_id)
    if isinstance(request, OperationResult):
        return request
    return _engine(
        ctx,
        lambda: services.checkout_update(
            checkout_id=str(checkout_id), owner=ctx.checkout_owner, data=_checkout_input(ctx, request, update=True)
        ),
    )


def complete_checkout(
    ctx: RequestContext, checkout_id: str, body: CheckoutCompleteRequest | Mapping[str, Any]
) -> OperationResult:
    request = _checkout_request(ctx, CheckoutCompleteRequest, body, checkout_id)
    if isinstance(request, OperationResult):
        return request
    if ctx.has(AP2_MANDATE):  # AP2 (PIX.md §7.3): the checkout mandate is verified before any payment
        seen = get_checkout(ctx, checkout_id)
        if "id" not in seen.body:  # not found, or another platform's: that answer, before any mandate check
            return seen
        current = seen.body
        if (refusal := mandates.mandate_refusal(ctx, current, request.ap2)) is not None:
            return OperationResult(200, CheckoutResponse.produce(refusal))  # the unchanged checkout + the error
    payment = _payment(request.payment) or ct.PaymentInput()
    # BCP §11.2 / BCP-PAY-03: the instrument's handler must be one this checkout offers this platform.
    data = ct.CompleteInput(payment=payment, signals=dict(request.signals or {}), offered_handler_ids=_offered(ctx))
    return _engine(
        ctx, lambda: services.checkout_complete(checkout_id=str(checkout_id), owner=ctx.checkout_owner, data=data)
    )


def cancel_checkout(
    ctx: RequestContext, checkout_id: str, body: CheckoutCancelRequest | Mapping[str, Any] | None = None
) -> OperationResult:
    refused = _checkout_request(ctx, CheckoutCancelRequest, body, checkout_id)
    if isinstance(refused, OperationResult):
        return refused
    return _engine(ctx, lambda: services.checkout_cancel(checkout_id=str(checkout_id), owner=ctx.checkout_owner))
