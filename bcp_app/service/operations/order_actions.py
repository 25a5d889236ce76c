"""Cancel Order and Request Return (extension br.dev.bcp.shopping.order_actions, issue 35): the order's own
platform acts on it through the orders services the buyer's page and the admin use.

Success is the order (§7) with the extension's `order_actions` and `return_requests`. A rule that refuses
(shipped, window closed, quantity beyond what was delivered) is an Error Response (§5.3) whose message names the
request member in `path` and says why in Portuguese; nothing changed. A malformed body is `invalid_request`.

`body_path` is where the transport carries the request body: `$` for REST and A2A, the tool argument over MCP
(`$.return_request`, `$.cancel`), so a refusal names the member as the agent sent it on every transport, as the
protocol errors do (`$.return_request.line_items[0].quantity` over MCP).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.utils import translation

from bcp_app.protocol.errors import error_message, error_response
from bcp_app.protocol.names import ORDER, ORDER_ACTIONS
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.schemas.order_actions import CancelOrderRequest, RequestReturnRequest
from bcp_app.protocol.validation import validate
from bcp_app.service.context import RequestContext
from bcp_app.service.operations.base import incompatible, text
from bcp_app.service.operations.order_body import order_result
from orders.errors import OrderError
from orders.selectors import order_presented
from orders.services import order_cancel_requested, return_request_create
from orders.types import LineQuantity

# Refusals a platform cannot fix by changing the request (the others name a member to correct).
_FINAL = frozenset(
    {"order_canceled", "already_shipped", "nothing_to_cancel", "nothing_to_return", "return_window_closed", "not_found"}
)
# What a request must carry that its schema cannot say (`reason` only with `reason_code: other`), by service field;
# `{path}` is the member as the agent sent it.
_REQUIRED = {
    "reason": {
        "pt-br": "Informe o motivo da devolução em {path}: é obrigatório quando reason_code é other.",
        "en": "Give the reason for the return in {path}: it is required when reason_code is other.",
    },
}
_LINES = re.compile(r"^lines(\[\d+\])\.(id|quantity)$")


def _member(field: str, body_path: str = "$") -> str | None:
    """The service's field → the request member as a JSONPath under `body_path` (`lines[0].quantity` →
    `$.line_items[0].quantity`, over MCP `$.return_request.line_items[0].quantity`)."""
    if field == "order_id":
        return None
    match = _LINES.match(field)
    if match:
        return f"{body_path}.line_items{match.group(1)}.{match.group(2)}"
    if field == "lines":
        return f"{body_path}.line_items"
    return f"{body_path}.{field}"


def _final(exc: OrderError) -> bool:
    """BCP §5.1: `unrecoverable` when no change to the request can succeed — also a line with no unit left to
    return (none delivered, or all already asked): asking fewer of it is still refused. A count above what is
    left stays `recoverable` (the agent can ask for that many)."""
    return exc.code in _FINAL or (exc.code == "quantity_exceeded" and exc.params.get("left") == 0)


def _refused(ctx: RequestContext, exc: OrderError, body_path: str = "$") -> OperationResult:
    with translation.override("en" if ctx.language == "en" else "pt-br"):
        content = exc.message
    code, path = exc.code, _member(exc.field, body_path)
    if code == "required":
        # A missing member is `field_required` (BCP §5.1), as on checkout; the text names it as the agent sent it.
        required = _REQUIRED.get(exc.field, {}).get(ctx.language)
        code, content = "field_required", required.format(path=path) if required else content
    severity = "unrecoverable" if _final(exc) else "recoverable"
    message = error_message(code, content, severity=severity, path=path)
    return OperationResult(
        200,
        error_response(
            code, content, messages=[message], capabilities=ctx.ucp_capabilities(ORDER, ORDER_ACTIONS) or None
        ),
    )


def _own_order(ctx: RequestContext, order_id: str) -> Any:
    """The order when this platform may act on it (the Get Order rule, BCP-ORD-02), else the Error Response."""
    if not ctx.has(ORDER_ACTIONS):
        return incompatible(ctx, ORDER_ACTIONS, ORDER)
    caps = ctx.ucp_capabilities(ORDER, ORDER_ACTIONS)
    if not ctx.authenticated or ctx.platform_id is None:
        return OperationResult(200, error_response("unauthorized", text(ctx, "order_unauthorized"), capabilities=caps))
    order = order_presented(str(order_id))
    if order is None:
        return OperationResult(200, error_response("not_found", text(ctx, "order_not_found"), capabilities=caps))
    if order.platform_id != ctx.platform_id:
        return OperationResult(200, error_response("unauthorized", text(ctx, "order_unauthorized"), capabilities=caps))
    return order


def _order_now(ctx: RequestContext, order_id: str) -> OperationResult:
    order = order_presented(order_id)
    assert order is not None  # it was just found and orders are never deleted (on_delete=PROTECT)
    return order_result(order, ctx)


def cancel_order(
    ctx: RequestContext,
    order_id: str,
    body: CancelOrderRequest | Mapping[str, Any] | None = None,
    *,
    body_path: str = "$",
) -> OperationResult:
    """Cancel what has not shipped: stock back, what was paid for it refunded through the outbox (everything, freight
    included, while nothing shipped)."""
    request = validate(CancelOrderRequest, body)
    found = _own_order(ctx, order_id)
    if isinstance(found, OperationResult):
        return found
    try:
        order_cancel_requested(order_id=found.public_id, reason=request.reason or "", requested_by="platform",
                               platform_id=ctx.platform_id or "")  # fmt: skip
    except OrderError as exc:
        return _refused(ctx, exc, body_path)
    return _order_now(ctx, found.public_id)


def request_return(
    ctx: RequestContext,
    order_id: str,
    body: RequestReturnRequest | Mapping[str, Any] | None,
    *,
    body_path: str = "$",
) -> OperationResult:
    """Ask to return delivered units within the window; staff approve, receive and refund (webhooks each step)."""
    request = validate(RequestReturnRequest, body)
    found = _own_order(ctx, order_id)
    if isinstance(found, OperationResult):
        return found
    try:
        return_request_create(
            order_id=found.public_id,
            lines=[LineQuantity(line_id=line.id, quantity=line.quantity) for line in request.line_items],
            reason_code=request.reason_code,
            reason=request.reason or "",
            requested_by="platform",
            platform_id=ctx.platform_id or "",
            # The transport's idempotency already answers a replay; the key also guards the order itself.
            request_key=(ctx.idempotency_key or "")[:64],
        )
    except OrderError as exc:
        return _refused(ctx, exc, body_path)
    return _order_now(ctx, found.public_id)
