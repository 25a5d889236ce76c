"""A2A intents beyond the checkout vocabulary (BCP.md §13.3 is open): `policies.search` and the cart intents.

Called by `a2a_actions._dispatch` before the checkout intents; every one goes through `bcp_app.service.operations`.
Replies are one agent `Message` with a text part (the answer, in the buyer's language) and a data part:
`a2a.bcp.policies` for policies, `a2a.bcp.cart` for carts.
"""

from __future__ import annotations

import re
from typing import Any

from bcp_app.protocol.errors import ProtocolError
from bcp_app.service import operations
from bcp_app.transports.a2a.intents import fold
from bcp_app.transports.a2a.wire import CHECKOUT_KEY, agent_message, data_part, text_part

POLICIES_KEY = "a2a.bcp.policies"
CART_KEY = "a2a.bcp.cart"
POLICIES_SEARCH = "policies.search"
CART_ACTIONS = frozenset({"create_cart", "get_cart", "update_cart", "cancel_cart"})
CONVERT = "create_checkout"  # {"action": "create_checkout", "cart_id"?}: the cart becomes the context's checkout
ACTIONS = frozenset({POLICIES_SEARCH, CONVERT, *CART_ACTIONS})

# A question about the shop's rules, not an instruction to change the checkout.
_POLICY_WORDS = re.compile(
    r"\b(politica|politicas|policy|policies|termos? de uso|terms|privacidade|privacy|lgpd|trocas?|devolucao|"
    r"devolucoes|devolver|reembolso|refund|returns?|prazo de entrega|frete gratis|garantia|warranty)\b"
)
_CHANGE_VERBS = re.compile(r"\b(adicion\w*|coloc\w*|inclu\w*|remov\w*|tir\w*|add|remove|finaliz\w*|cancel\w*|"
                           r"aplic\w*|cupom|coupon)\b")


def text_action(text: str) -> str | None:
    """`policies.search` for a question about the shop's policies ("qual é a política de trocas?"), else None."""
    folded = fold(text)
    if _POLICY_WORDS.search(folded) and not _CHANGE_VERBS.search(folded):
        return POLICIES_SEARCH
    return None


def _cart_id(row: Any, structured: dict[str, Any]) -> str:
    cart_id = structured.get("cart_id") or (row.data or {}).get("cart_id")
    if not isinstance(cart_id, str) or not cart_id:
        raise ProtocolError("invalid_request", "Informe cart_id (ou crie um carrinho com create_cart).")
    return cart_id


def _cart_reply(row: Any, body: dict[str, Any], language: str) -> dict[str, Any]:
    if isinstance(body.get("id"), str) and body.get("ucp", {}).get("status") != "error":
        row.data = {**(row.data or {}), "cart_id": body["id"]}
        row.save(update_fields=["data", "updated_at"])
        text = ("Cart updated." if language == "en" else "Carrinho atualizado.")
    else:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
    return agent_message(context_id=row.context_id, parts=[text_part(text), data_part({CART_KEY: body})])


def _carts(ctx: Any, row: Any, action: str, structured: dict[str, Any]) -> dict[str, Any]:
    if action == "create_cart":
        return _cart_reply(row, operations.create_cart(ctx, structured.get("cart") or {}).body, ctx.language)
    if action == CONVERT:
        body = operations.create_checkout(ctx, {"cart_id": _cart_id(row, structured), "line_items": []}).body
        if isinstance(body.get("id"), str) and body.get("ucp", {}).get("status") != "error":
            row.checkout_id = body["id"]  # later checkout intents continue this checkout
            row.save(update_fields=["checkout_id", "updated_at"])
        return agent_message(context_id=row.context_id, parts=[data_part({CHECKOUT_KEY: body})])
    cart_id = _cart_id(row, structured)
    if action == "get_cart":
        body = operations.get_cart(ctx, cart_id).body
    elif action == "update_cart":
        body = operations.update_cart(ctx, cart_id, structured.get("cart") or {}).body
    else:
        body = operations.cancel_cart(ctx, cart_id).body
    return _cart_reply(row, body, ctx.language)


def handle(ctx: Any, row: Any, action: str, structured: dict[str, Any], text: str) -> dict[str, Any]:
    """The reply to one of `ACTIONS` (`row`: the conversation's `A2AContext`)."""
    context_id = row.context_id
    if action in CART_ACTIONS or action == CONVERT:
        return _carts(ctx, row, action, structured)

    if action == POLICIES_SEARCH:
        query = structured.get("query", text) if structured else text
        if not isinstance(query, str) or not query.strip():
            raise ProtocolError("invalid_request", "policies.search precisa de query (a pergunta do comprador).")
        body = operations.search_policies(ctx, {"query": query[:500], "language": structured.get("language")}).body
        return agent_message(context_id=context_id, parts=[
            text_part(body["answer"]), data_part({POLICIES_KEY: body})])
    raise ProtocolError("invalid_request", f"action desconhecida: {action!r}.")
