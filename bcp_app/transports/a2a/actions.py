"""A2A intents → BCP operations (BCP.md §13.3): contexts, messageId idempotency, action dispatch, replies.

`handle_message(ctx, message)` is synchronous Django code called by the A2A executor. It holds no
business rule: every change goes through `bcp_app.service.operations` (the same operations as REST and MCP);
this module only turns an intent into the operation's request body and the result into a reply.

- `contextId` is created by the shop and stored in `A2AContext` with its checkout and caller; a later
  message with it continues that checkout; a terminal checkout lets the context start a new one.
- `messageId` is the idempotency key per caller (BCP-A2A-07): same id + same message → the stored reply,
  nothing re-executed; same id + another message → `idempotency_conflict`.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from django.db import IntegrityError, transaction

from bcp_app.models import A2AContext
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.results import OperationResult
from bcp_app.service import idempotency, operations
from bcp_app.transports.a2a import intents, ops
from bcp_app.transports.a2a import more as a2a_more
from bcp_app.transports.a2a.catalog import resolve_item_id, resolve_text
from bcp_app.transports.a2a.replies import Reply, order_reply_text, reply_text
from bcp_app.transports.a2a.wire import (
    CANDIDATES_KEY,
    CHECKOUT_KEY,
    ORDER_KEY,
    PAYMENT_KEY,
    SIGNALS_KEY,
    agent_message,
    data_part,
    text_part,
)

OPERATION = "a2a_send_message"
MAX_TEXT = 2000
TERMINAL = frozenset({"completed", "canceled"})
_CONTEXT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_EXTRA_KEYS = frozenset({PAYMENT_KEY, SIGNALS_KEY, "ap2"})
ACTIONS = frozenset(
    {intents.ADD, intents.REMOVE, intents.UPDATE, intents.GET, intents.CANCEL, intents.COMPLETE, intents.GET_ORDER}
)


def handle_message(ctx: Any, message: dict[str, Any], *, language_given: bool = False) -> dict[str, Any]:
    """The reply `Message` (ProtoJSON dict) to one incoming A2A message, at most once per messageId."""
    message_id = message.get("messageId")
    if not isinstance(message_id, str) or not message_id:
        raise ProtocolError("invalid_request", "message.messageId é obrigatório.")
    fingerprint = idempotency.fingerprint_jcs(
        {key: message.get(key) for key in ("contextId", "taskId", "parts", "metadata", "referenceTaskIds")}
    )
    result = idempotency.run(
        principal=ctx.principal,
        operation=OPERATION,
        key=message_id,
        fingerprint=fingerprint,
        # Stored as JSON text: Postgres jsonb would reorder the members of a replayed reply.
        execute=lambda: OperationResult(
            status_code=200, body={"message_json": json.dumps(_dispatch(ctx, message, language_given))}
        ),
        field_name="messageId",
    )
    return json.loads(result.body["message_json"])


# --- context ---------------------------------------------------------------------------------------------


def _context(ctx: Any, context_id: str | None) -> A2AContext:
    """The caller's conversation: an existing `contextId` (bound to its caller) or a new one."""
    if not context_id:
        return A2AContext.objects.create(
            context_id=str(uuid.uuid4()), platform_id=ctx.platform_id or "", data={"principal": ctx.principal}
        )
    if not _CONTEXT_ID.match(context_id):
        raise ProtocolError("invalid_request", "contextId deve ter de 1 a 64 caracteres [A-Za-z0-9._:-].")
    row = A2AContext.objects.filter(context_id=context_id).first()
    if row is None:
        # A contextId we never issued (e.g. created by another deployment): adopt it for this caller.
        try:
            with transaction.atomic():
                row = A2AContext.objects.create(
                    context_id=context_id, platform_id=ctx.platform_id or "", data={"principal": ctx.principal}
                )
        except IntegrityError:
            row = A2AContext.objects.get(context_id=context_id)
    if row.data.get("principal") != ctx.principal:
        raise ProtocolError("forbidden", "Este contextId pertence a outra plataforma.")
    return row


def _remember(row: A2AContext, body: dict[str, Any]) -> None:
    checkout_id = body.get("id")
    if isinstance(checkout_id, str) and checkout_id != row.checkout_id:
        row.checkout_id = checkout_id
        row.save(update_fields=["checkout_id", "updated_at"])


# --- parts -------------------------------------------------------------------------------------------------


def _parts(message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(structured intent, merged extra data members, joined text) of the message parts."""
    action: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    texts: list[str] = []
    for part in message.get("parts") or []:
        if not isinstance(part, dict):
            continue
        data = part.get("data")
        if isinstance(data, dict):
            if "action" in data and not action:
                action = data
                # Payment, signals or ap2 may ride in the intent's own part.
                extra.update({key: value for key, value in data.items() if key in _EXTRA_KEYS})
            else:
                extra.update(data)
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    # Intents are short sentences; a cap keeps parsing cheap whatever a caller sends.
    return action, extra, "\n".join(texts)[:MAX_TEXT]


def _int(value: Any, name: str, *, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**53 - 1:
        raise ProtocolError("invalid_request", f"{name} deve ser um inteiro ≥ 1.")
    return value


# --- dispatch ------------------------------------------------------------------------------------------------


def _dispatch(ctx: Any, message: dict[str, Any], language_given: bool) -> dict[str, Any]:
    structured, extra, text = _parts(message)
    intent: intents.Intent | None = None
    if structured:
        action = structured.get("action")
        if action not in ACTIONS | a2a_more.ACTIONS:
            known = ", ".join(sorted(ACTIONS | a2a_more.ACTIONS))
            raise ProtocolError("invalid_request", f"action desconhecida: {action!r}. Use uma de: {known}.")
    elif (more := a2a_more.text_action(text)) is not None:
        action = more
        if not language_given:
            ctx.language = intents.detect_language(text)
    else:
        intent = intents.parse_intent(text)
        action = intent.action
        if not language_given:
            ctx.language = intent.language
    ctx.idempotency_key = message["messageId"]
    row = _context(ctx, message.get("contextId"))
    ctx.extra["a2a_context_id"] = row.context_id
    if action in a2a_more.ACTIONS:
        return a2a_more.handle(ctx, row, str(action), structured, text)
    reply = _run(ctx, row, str(action), structured, extra, intent)
    if reply.checkout is not None:
        _remember(row, reply.checkout)
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append(text_part(reply.text))
    if reply.candidates:
        parts.append(data_part({CANDIDATES_KEY: reply.candidates}))
    if reply.checkout is not None:
        parts.append(data_part({CHECKOUT_KEY: reply.checkout}))
    if reply.order is not None:
        parts.append(data_part({ORDER_KEY: reply.order}))
    return agent_message(context_id=row.context_id, parts=parts)


def _run(ctx: Any, row: A2AContext, action: str, structured: dict[str, Any], extra: dict[str, Any],
         intent: intents.Intent | None) -> Reply:
    language = ctx.language
    current = ops.current_checkout(ctx, row.checkout_id) if row.checkout_id else None
    if action == intents.UNKNOWN:
        return Reply(text=reply_text("help", language), checkout=current)
    if action == intents.GET_ORDER:
        return _get_order(ctx, structured, intent)
    if action == intents.ADD:
        if intent is not None:
            match = resolve_text(ctx, intent)
            quantity = intent.quantity or 1
        else:
            item_id = next((structured.get(k) for k in ("variant_id", "item_id", "sku", "product_id")
                            if structured.get(k)), None)
            if not isinstance(item_id, str):
                raise ProtocolError("invalid_request", "add_to_checkout precisa de product_id (ou variant_id).")
            quantity = _int(structured.get("quantity"), "quantity", default=1)
            match = resolve_item_id(ctx, item_id)
        if isinstance(match, OperationResult):  # the checkout capability was not negotiated (BCP-NEG-06)
            return Reply(checkout=match.body)
        if match.outcome != "matched":
            candidates = [{"id": c.sku, "title": c.title, "price": c.price} for c in match.candidates]
            key = "ambiguous" if candidates else "not_found"
            return Reply(text=reply_text(key, language, query=intent.query if intent else ""),
                         candidates=candidates or None, checkout=current)
        body = ops.add_line(ctx, current, match.sku, quantity)
        return Reply(text=_summary("added", language, body, intent, quantity=quantity, sku=match.sku), checkout=body)
    if current is None:
        return Reply(text=reply_text("empty", language))
    if action == intents.GET:
        return Reply(text=_summary("current", language, current, intent), checkout=current)
    if action == intents.CANCEL:
        body = ops.cancel(ctx, current)
        return Reply(text=_summary("canceled", language, body, intent), checkout=body)
    if action == intents.REMOVE:
        return _remove(ctx, current, structured, intent)
    if action == intents.UPDATE:
        changes = dict(structured)
        if intent is not None:
            changes = {"coupon": intent.coupon}
        if PAYMENT_KEY in extra:
            changes["payment"] = extra[PAYMENT_KEY]
        body = ops.update(ctx, current, changes)
        return Reply(text=_summary("updated", language, body, intent), checkout=body)
    # complete_checkout
    complete_body: dict[str, Any] = {}
    if PAYMENT_KEY in extra:
        complete_body["payment"] = extra[PAYMENT_KEY]
    else:
        # "finalizar compra" without a payment part: complete with the instrument already selected.
        selected = [i for i in ops.writable_state(current).get("payment", {}).get("instruments", [])
                    if i.get("selected", True)]
        if not selected:
            return Reply(text=reply_text("payment_needed", language), checkout=current)
        complete_body["payment"] = {"instruments": selected[:1]}
    if SIGNALS_KEY in extra:
        complete_body["signals"] = extra[SIGNALS_KEY]
    if isinstance(extra.get("ap2"), dict):
        complete_body["ap2"] = extra["ap2"]
    body = ops.complete(ctx, current, complete_body)
    return Reply(text=_summary("completed", language, body, intent), checkout=body)


def _remove(ctx: Any, current: dict[str, Any], structured: dict[str, Any], intent: intents.Intent | None) -> Reply:
    language = ctx.language
    lines = current.get("line_items") or []
    if intent is not None:
        if intent.everything:
            chosen = list(lines)
        else:
            chosen = ops.lines_matching(lines, intent)
            if len(chosen) > 1:
                candidates = [{"id": line["item"]["id"], "title": line["item"]["title"], "line_item_id": line["id"]}
                              for line in chosen]
                return Reply(text=reply_text("ambiguous_line", language), candidates=candidates, checkout=current)
        quantity = intent.quantity
    else:
        wanted = {structured.get(k) for k in ("line_item_id", "variant_id", "item_id", "sku", "product_id")} - {None}
        if not wanted:
            raise ProtocolError("invalid_request", "remove_from_checkout precisa de line_item_id ou product_id.")
        chosen = [line for line in lines if line["id"] in wanted or line["item"]["id"] in wanted]
        quantity = None if structured.get("quantity") is None else _int(structured.get("quantity"), "quantity")
    if not chosen:
        return Reply(text=reply_text("line_not_found", language), checkout=current)
    body = ops.remove_lines(ctx, current, [line["id"] for line in chosen], quantity)
    return Reply(text=_summary("removed", language, body, intent), checkout=body)


def _get_order(ctx: Any, structured: dict[str, Any], intent: intents.Intent | None) -> Reply:
    """BCP §7 Get Order through the same operation as REST and MCP: the same order object (with the
    negotiated extensions, e.g. `fiscal_documents`) or its Error Response, under `a2a.bcp.order`."""
    order_id = intent.ids[0] if intent is not None else structured.get("order_id", structured.get("id"))
    if not isinstance(order_id, str) or not order_id:
        raise ProtocolError("invalid_request", "get_order precisa de order_id.")
    body = operations.get_order(ctx, order_id).body
    # Structured intents get the bare data part (as the seed's checkout intents); text also gets a sentence.
    return Reply(text=order_reply_text(ctx.language, body) if intent is not None else "", order=body)


def _summary(key: str, language: str, body: dict[str, Any], intent: intents.Intent | None, **values: Any) -> str:
    # Structured intents get the seed's bare data part; natural language also gets a sentence.
    if intent is None:
        return ""
    return reply_text(key, language, checkout=body, **values)
