"""A2A intents beyond the checkout vocabulary (BCP.md §13.3 is open): `policies.search` and the cart intents.

Called by `a2a_actions._dispatch` before the checkout intents; every one goes through `bcp_app.operations`.
Replies are one agent `Message` with a text part (the answer, in the buyer's language) and a data part:
`a2a.bcp.policies` for policies, `a2a.bcp.cart` for carts.
"""

from __future__ import annotations

import re
from typing import Any

from bcp_app.errors import ProtocolError
from bcp_app.transports.a2a_intents import fold
from bcp_app.transports.a2a_wire import agent_message, data_part, text_part

POLICIES_KEY = "a2a.bcp.policies"
POLICIES_SEARCH = "policies.search"
ACTIONS = frozenset({POLICIES_SEARCH})

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


def handle(ctx: Any, context_id: str, action: str, structured: dict[str, Any], text: str) -> dict[str, Any]:
    """The reply to one of `ACTIONS`."""
    from bcp_app import operations

    if action == POLICIES_SEARCH:
        query = structured.get("query", text) if structured else text
        if not isinstance(query, str) or not query.strip():
            raise ProtocolError("invalid_request", "policies.search precisa de query (a pergunta do comprador).")
        body = operations.search_policies(ctx, {"query": query[:500], "language": structured.get("language")}).body
        return agent_message(context_id=context_id, parts=[
            text_part(body["answer"]), data_part({POLICIES_KEY: body})])
    raise ProtocolError("invalid_request", f"action desconhecida: {action!r}.")
