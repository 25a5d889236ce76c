"""The subscription extension (`br.dev.bcp.shopping.subscription`, issue 38): an agent subscribes its buyer to a
plan, reads the subscription (state, the authorization to approve in the bank app, the next charge, each cycle's
order) and cancels it. Every cycle becomes an order of the order capability, with its signed order webhooks.

Only an authenticated platform may create one, and only the platform that created it reads or cancels it (as
orders, BCP-ORD-02); anyone else gets `not_found`. Bad input is `invalid_request` naming the field (nothing is
written); a plan that does not exist or a refused buyer is a business outcome with a message.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from django.conf import settings

from bcp_app.protocol.errors import error_response
from bcp_app.protocol.names import ORDER, SUBSCRIPTION
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.schemas.subscription import SubscriptionCreateRequest
from bcp_app.protocol.validation import validate
from bcp_app.service.context import RequestContext
from bcp_app.service.operations.base import incompatible
from payments.card.gateway import GatewayError
from payments.psp import PSPRejected, PSPUnavailable
from shop.subscriptions.selectors import subscription_presented
from shop.subscriptions.services import (
    SubscriptionInputError,
    SubscriptionStateError,
    subscription_cancel,
    subscription_create,
    subscription_input_problems,
)

ADDRESS_KEYS = ("postal_code", "street", "number", "complement", "neighborhood", "city", "state")


def _result(ctx: RequestContext, body: dict[str, Any], status: int = 200) -> OperationResult:
    envelope = {"version": "2026-07-28", "capabilities": ctx.ucp_capabilities(SUBSCRIPTION, ORDER)}
    return OperationResult(status, {"ucp": envelope, **body})


def _refused(ctx: RequestContext, code: str, content: str, path: str = "") -> OperationResult:
    return _refused_fields(ctx, code, {path: content})


def _refused_fields(ctx: RequestContext, code: str, problems: Mapping[str, str]) -> OperationResult:
    """The Error Response naming every field at fault: one message per field, with its path ("" for none), in the
    order given (BCP-ERR-05, as the checkout's messages)."""
    messages: list[dict[str, Any]] = []
    for path, content in problems.items():
        message: dict[str, Any] = {"type": "error", "code": code, "content": content, "severity": "recoverable"}
        if path:
            message["path"] = path
        messages.append(message)
    caps = ctx.ucp_capabilities(SUBSCRIPTION)
    first = messages[0]["content"]
    return OperationResult(200, error_response(code, first, capabilities=caps, messages=messages))


# The service's names of the fields it checks → their paths in the request (BCP §5.1).
_PATHS = {"buyer_name": "$.buyer.first_name", "buyer_tax_id": "$.buyer.tax_id", "buyer_email": "$.buyer.email",
          "card_token": "$.payment.instruments[0].credential.token"}  # fmt: skip


def _path(field: str) -> str:
    return _PATHS.get(field, f"$.destination.{field}" if field in ADDRESS_KEYS else f"$.{field}")


def _paths(errors: Mapping[str, str]) -> dict[str, str]:
    return {_path(field): message for field, message in errors.items()}


def _guard(ctx: RequestContext) -> OperationResult | None:
    if not ctx.has(SUBSCRIPTION):
        return incompatible(ctx, SUBSCRIPTION)
    if not ctx.authenticated or ctx.platform_id is None:
        return _refused(ctx, "unauthorized", "Assinaturas exigem uma plataforma autenticada.")
    return None


def _card_token(request: SubscriptionCreateRequest) -> tuple[str, dict[str, str]]:
    """The card token of `payment` (BCP §11: one instrument of the card handler, its credential platform →
    business only, never echoed nor logged), "" for Pix Automático, and what is wrong with the instrument by path."""
    if request.payment is None or not request.payment.instruments:
        return "", {}
    path = "$.payment.instruments[0]"
    if len(request.payment.instruments) != 1:
        return "", {"$.payment.instruments": "Informe exatamente um meio de pagamento."}
    instrument = request.payment.instruments[0]
    card_handler = getattr(settings, "BCP_CARD_HANDLER_ID", "gpay")
    if instrument.type != "card" or instrument.handler_id != card_handler:
        text = f"Assinaturas aceitam só cartão (handler {card_handler}) aqui; sem payment, Pix Automático."
        return "", {f"{path}.type": text}
    token = instrument.credential.token if instrument.credential is not None else ""
    if not token:
        return "", {f"{path}.credential.token": "Informe o token do cartão."}
    return token, {}


def create_subscription(
    ctx: RequestContext, body: SubscriptionCreateRequest | Mapping[str, Any], *, under: tuple[str, ...] = ()
) -> OperationResult:
    """`POST /subscriptions`: a pending subscription with its Pix Automático recurrence at the PSP; the buyer
    authorizes it in the bank app (`authorization`), and the cycles are charged ahead of each due date. With a
    card instrument in `payment`, the card is stored at the gateway and the first cycle charged at once: the
    answer is `active` with the first cycle's order (or `pending_authorization` with the decline, and no order).
    `under`: the member holding the subscription in what the agent sent (A2A: `("subscription",)`), which the
    paths of a wrong type or a missing member start from, as MCP's (REST's body is the subscription itself)."""
    if (refused := _guard(ctx)) is not None:
        return refused
    # Types, control characters and missing members refused naming the field (nothing written).
    request = validate(SubscriptionCreateRequest, body, under=under)
    buyer = request.buyer
    name = f"{buyer.first_name} {buyer.last_name}"
    address = request.destination.model_dump() if request.destination is not None else None
    if address is not None:
        address["complement"] = address.get("complement") or ""
    starts_on = date.fromisoformat(request.starts_on) if request.starts_on else None  # its format was validated
    card_token, card_problems = _card_token(request)
    if card_problems:
        # What is wrong with the buyer, the address or the date too, so the agent fixes everything in one go.
        problems = subscription_input_problems(
            buyer_name=name, buyer_tax_id=buyer.tax_id, buyer_email=buyer.email, starts_on=starts_on,
            destination=address, card=True,
        )  # fmt: skip
        return _refused_fields(ctx, "invalid_subscription", {**_paths(problems), **card_problems})
    try:
        subscription = subscription_create(
            plan_id=request.plan_id,
            buyer_name=name,
            buyer_tax_id=buyer.tax_id,
            buyer_email=buyer.email,
            starts_on=starts_on,
            destination=address,
            platform_id=ctx.platform_id or "",
            destination_required=True,
            card_token=card_token,
            language=ctx.language,
        )
    except SubscriptionInputError as exc:
        return _refused_fields(ctx, "invalid_subscription", _paths(exc.errors))
    except (PSPUnavailable, PSPRejected):
        return _refused(ctx, "payment_unavailable", "O Pix Automático está indisponível agora; tente de novo.")
    except GatewayError:
        return _refused(ctx, "payment_unavailable", "A operadora do cartão não respondeu agora; tente de novo.")
    presented = subscription_presented(subscription.public_id)
    assert presented is not None  # just written
    return _result(ctx, presented, 201)


def _owned(ctx: RequestContext, subscription_id: str) -> dict[str, Any] | None:
    presented = subscription_presented(subscription_id)
    if presented is None or presented.pop("_platform_id") != ctx.platform_id:
        return None
    return presented


def get_subscription(ctx: RequestContext, subscription_id: str) -> OperationResult:
    if (refused := _guard(ctx)) is not None:
        return refused
    presented = _owned(ctx, subscription_id)
    if presented is None:
        return _refused(ctx, "not_found", "Assinatura não encontrada.")
    return _result(ctx, presented)


def cancel_subscription(ctx: RequestContext, subscription_id: str) -> OperationResult:
    """`POST /subscriptions/{id}/cancel`: no further cycle is charged; the recurrence is cancelled at the PSP
    (`PATCH /rec/{idRec}`) and a charge already sent is withdrawn. Cancelling twice answers the same."""
    if (refused := _guard(ctx)) is not None:
        return refused
    if _owned(ctx, subscription_id) is None:
        return _refused(ctx, "not_found", "Assinatura não encontrada.")
    try:
        subscription_cancel(public_id=subscription_id, by="buyer")
    except SubscriptionStateError as exc:
        return _refused(ctx, "invalid_subscription_status", str(exc))
    presented = _owned(ctx, subscription_id)
    assert presented is not None
    return _result(ctx, presented)
