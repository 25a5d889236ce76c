"""A2A actions of the extension br.dev.bcp.shopping.order_actions (issue 35): `{"action": "cancel_order",
"order_id", "reason"?}` and `{"action": "request_return", "order_id", "reason_code", "reason"?, "line_items"}`.

The same operations as REST and MCP; the reply carries the order (or its Error Response) under `a2a.bcp.order`
with a sentence. The message's `messageId` is the idempotency key (BCP-A2A-07): a replay gets the first reply.
"""

from __future__ import annotations

from typing import Any

from bcp_app.protocol.errors import ProtocolError
from bcp_app.service import operations
from bcp_app.transports.a2a.messages import ORDER_KEY, agent_message, data_part, text_part

CANCEL_ORDER = "cancel_order"
REQUEST_RETURN = "request_return"
ORDER_ACTIONS = frozenset({CANCEL_ORDER, REQUEST_RETURN})

_DONE = {
    CANCEL_ORDER: {
        "pt-br": "Pedido cancelado; o valor pago será devolvido.",
        "en": "Order canceled; the amount paid will be refunded.",
    },
    REQUEST_RETURN: {
        "pt-br": "Devolução solicitada; a loja vai analisar o pedido.",
        "en": "Return requested; the store will review it.",
    },
}


def order_id_of(structured: dict[str, Any], action: str) -> str:
    """The message's `order_id` (or `id`); missing or empty: the action needs it; sent but not a text: named as
    the other A2A fields are (`Campo inválido $.order_id: …`), never said to be missing."""
    key = "order_id" if "order_id" in structured else "id"
    order_id = structured.get(key)
    if order_id is not None and not isinstance(order_id, str):
        raise ProtocolError("invalid_request", f"Campo inválido $.{key}: deve ser um texto")
    if not order_id:
        raise ProtocolError("invalid_request", f"{action} precisa de order_id.")
    return order_id


def handle_order_action(ctx: Any, context_id: str, action: str, structured: dict[str, Any]) -> dict[str, Any]:
    order_id = order_id_of(structured, action)
    body = {key: value for key, value in structured.items() if key not in ("action", "order_id", "id")}
    if action == CANCEL_ORDER:
        result = operations.cancel_order(ctx, order_id, body)
    else:
        result = operations.request_return(ctx, order_id, body)
    order = result.body
    lang = "en" if ctx.language == "en" else "pt-br"
    if order.get("id"):
        sentence = _DONE[action][lang]
    else:  # the Error Response: its messages say why
        sentence = " ".join(str(m.get("content", "")) for m in order.get("messages") or [])
    return agent_message(context_id=context_id, parts=[text_part(sentence), data_part({ORDER_KEY: order})])
