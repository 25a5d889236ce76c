"""`order.intent` and `order.status`: draft orders are BCP checkouts, made and read through
`bcp_app.service.operations` (the engine decides prices, stock and status; nothing is re-implemented here).

Typed tools carry no BCP profile, so the caller's context is the shop's own capability set and the
platform of the API key (anonymous otherwise). `order.intent` replays by `idempotency_key` through
the BCP idempotency store (kept 48 h ≥ the seed's 24 h); the same key with other arguments is an
`idempotency_conflict` protocol error.
"""

from __future__ import annotations

import re
from typing import Any

from bcp_app.protocol.field_errors import field_path
from bcp_app.protocol.names import AP2_MANDATE
from bcp_app.protocol.results import OperationResult
from bcp_app.service import idempotency, operations
from bcp_app.service.catalogue.contracts import (
    Caller,
    ErrorResult,
    OrderIntentInput,
    OrderIntentOk,
    OrderStatusInput,
    OrderStatusOk,
    error_result,
)
from bcp_app.service.catalogue.reads import unknown_skus
from bcp_app.service.context import RequestContext
from bcp_app.service.discovery import capability_registry
from bcp_app.service.platforms import platform_get

OPERATION = "order.intent"
# The engine keeps the buyer's first and last names in 100 characters each (shop/checkout/evaluate.py,
# `buyer_first_name`/`buyer_last_name`); seed 002 allows a 200-character `customer.name`.
NAME_PART_MAX = 100
_LINE_PATH = re.compile(r"^\$\.line_items\[(\d+)\]")


def typed_context(caller: Caller, *, language: str = "pt-br") -> RequestContext:
    """A context for a non-BCP agent: every capability the shop offers (AP2 mandates excepted)."""
    capabilities = {
        name: entries[0]["version"] for name, entries in capability_registry().items() if name != AP2_MANDATE
    }
    platform = platform_get(caller.platform_id) if caller.platform_id else None
    return RequestContext(
        transport="mcp", profile_url="", profile={}, capabilities=capabilities, platform=platform, language=language
    )


def _total(body: dict[str, Any]) -> int:
    return next((t["amount"] for t in body.get("totals", []) if t.get("type") == "total"), 0)


def _stock_problems(args: OrderIntentInput) -> ErrorResult | None:
    """Pre-flight so a draft is never created for items that cannot be sold (the engine re-checks)."""
    lines = operations.stock_check([(item.sku, item.quantity) for item in args.items], together=True)
    unknown = unknown_skus(lines)
    if unknown is not None:
        return unknown
    short = {
        field_path(("items", i, "quantity")): f"Disponível agora: {line.in_stock}."
        for i, line in enumerate(lines)
        if not line.can_fulfill
    }
    if short:
        return error_result("out_of_stock", "Há itens sem estoque suficiente.", fields=short)
    return None


def _blocking(body: dict[str, Any]) -> ErrorResult | None:
    """Item errors in the engine's answer (an Error Response, or a draft whose lines could not be sold)."""
    fields: dict[str, str] = {}
    codes: set[str] = set()
    for message in body.get("messages") or []:
        if message.get("type") != "error" or message.get("code") not in ("out_of_stock", "item_unavailable"):
            continue
        codes.add(message["code"])
        match = _LINE_PATH.match(message.get("path") or "")
        fields[field_path(("items", int(match.group(1))) if match else ("items",))] = message.get("content", "")
    if body.get("ucp", {}).get("status") == "error" and not codes:
        message = (body.get("messages") or [{}])[0]
        return error_result("not_found", message.get("content") or "Nada pôde ser incluído no pedido.")
    if not codes:
        return None
    code = "out_of_stock" if "out_of_stock" in codes else "not_found"
    return error_result(code, "Há itens que não podem ser vendidos agora.", fields=fields or None)


def split_name(name: str, *, limit: int = NAME_PART_MAX) -> tuple[str, str]:
    """A full name as (first, last), each within `limit` characters, no letter dropped for names up to
    2 × `limit`: at the first space when both halves fit, else at the first space that fits both, else (one
    very long word, or words where no space fits) cut at `limit` characters."""
    name = " ".join(name.split())
    spaces = [i for i, char in enumerate(name) if char == " "]
    for index in spaces:
        if index <= limit and len(name) - index - 1 <= limit:
            return name[:index], name[index + 1 :]
    if not spaces and len(name) <= limit:
        return name, ""
    return name[:limit].rstrip(), name[limit:].strip()[:limit]


def _checkout_body(args: OrderIntentInput) -> dict[str, Any]:
    first, last = split_name(args.customer.name)
    body: dict[str, Any] = {
        "line_items": [{"item": {"id": item.sku}, "quantity": item.quantity} for item in args.items],
        "buyer": {"first_name": first, "last_name": last, "email": args.customer.email},
    }
    if args.notes:
        body["context"] = {"intent": args.notes}
    if args.shipping_method:
        body["fulfillment"] = {"methods": [{"type": args.shipping_method}]}
    return body


def _create(args: OrderIntentInput, caller: Caller, language: str) -> OperationResult:
    if (problem := _stock_problems(args)) is not None:
        return OperationResult(200, problem.model_dump(mode="json", exclude_none=True))
    ctx = typed_context(caller, language=language)
    created = operations.create_checkout(ctx, _checkout_body(args))
    body = created.body
    if (problem := _blocking(body)) is not None:
        if body.get("id") and body.get("ucp", {}).get("status") != "error":
            operations.cancel_checkout(ctx, body["id"])  # never leave a draft the agent was told failed
        return OperationResult(200, problem.model_dump(mode="json", exclude_none=True))
    ok = OrderIntentOk(
        status="ok",
        draft_order_id=body["id"],
        checkout_status=body["status"],
        total=_total(body),
        currency="BRL",
        continue_url=body.get("continue_url"),
        expires_at=body.get("expires_at"),
    )
    return OperationResult(201, ok.model_dump(mode="json", exclude_none=True))


def order_intent(args: OrderIntentInput, caller: Caller, *, language: str = "pt-br") -> OrderIntentOk | ErrorResult:
    if args.idempotency_key is None:
        result = _create(args, caller, language)
    else:
        arguments = args.model_dump(mode="json", exclude_none=True, exclude={"idempotency_key"})
        result = idempotency.run(
            principal=f"typed:{caller.platform_id or 'anonymous'}",
            operation=OPERATION,
            key=args.idempotency_key,
            fingerprint=idempotency.fingerprint_jcs({"name": OPERATION, "arguments": arguments}),
            execute=lambda: _create(args, caller, language),
            field_name="idempotency_key",
        )
    body = result.body
    return ErrorResult.model_validate(body) if body.get("status") == "error" else OrderIntentOk.model_validate(body)


def _refused(body: dict[str, Any]) -> ErrorResult | None:
    if body.get("ucp", {}).get("status") != "error":
        return None
    message = (body.get("messages") or [{}])[0]
    code = "forbidden" if message.get("code") == "unauthorized" else "not_found"
    return error_result(code, message.get("content", ""), fields={field_path(("id",)): message.get("content", "")})


def order_status(args: OrderStatusInput, caller: Caller, *, language: str = "pt-br") -> OrderStatusOk | ErrorResult:
    ctx = typed_context(caller, language=language)
    if args.id.startswith("order_"):
        body = operations.get_order(ctx, args.id).body
        if (problem := _refused(body)) is not None:
            return problem
        return OrderStatusOk(
            status="ok",
            id=args.id,
            kind="order",
            state=operations.order_state(body),
            total=_total(body),
            currency="BRL",
            order_id=body["id"],
            permalink_url=body.get("permalink_url"),
        )
    body = operations.get_checkout(ctx, args.id).body
    if (problem := _refused(body)) is not None:
        return problem
    order = body.get("order") or {}
    return OrderStatusOk(
        status="ok",
        id=args.id,
        kind="draft",
        state=body["status"],
        total=_total(body),
        currency="BRL",
        order_id=order.get("id"),
        permalink_url=order.get("permalink_url"),
        continue_url=body.get("continue_url"),
    )
